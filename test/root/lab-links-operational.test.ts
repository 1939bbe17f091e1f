// createLab hands a lab over only once its links carry packets: the kernel
// drops a link's packets until linkwatch has activated it, which for a veth
// whose two ends have the same index (each side's first link, as a-r and r-b
// here would be) can come a second later. A ping right after createLab was
// lost. The lab numbers each pair's ends apart, so linkwatch acts at once;
// a switch's bridge, activated later, forwards meanwhile (c and d).
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { openNetlink } from '../../dist/netlink/index.js';
import { createLab } from '../../dist/testing.js';
import { privileged } from '../helpers/privileges.js';

const prefix = `nslabo${randomBytes(2).toString('hex')}-`;

describe.skipIf(!privileged)('a lab just made', () => {
  it('has every link operationally up, and every pair connected at once', async () => {
    for (let round = 0; round < 3; round++) {
      await using lab = await createLab(
        { prefix, hosts: { a: {}, b: {}, c: {}, d: {} }, routers: { r: {} }, switches: { s: {} }, links: [['a', 'r'], ['r', 'b'], ['r', 's'], ['c', 's'], ['d', 's']] },
        { hosts: false },
      );
      const notUp: string[] = [];
      const sharingTheirPeersIndex: string[] = [];
      for (const key of ['a', 'r', 'b', 'c', 'd', 's']) {
        const nl = await openNetlink(lab.nodes[key]!);
        try {
          for (const link of await nl.links.list()) {
            if (link.kind !== 'veth') continue;
            if (link.operState !== 'UP') notUp.push(`${key} ${link.name} ${link.operState}`);
            if (link.index === link.linkIndex) sharingTheirPeersIndex.push(`${key} ${link.name} ${link.index}`);
          }
        } finally {
          nl.close();
        }
      }
      expect(notUp).toEqual([]);
      expect(sharingTheirPeersIndex).toEqual([]);
      expect((await lab.connectivity({ timeout: 200 })).dropped.pairs).toBe(0);
    }
  });
});
