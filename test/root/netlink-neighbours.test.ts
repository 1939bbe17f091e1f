// Neighbours through this package against `ip neigh` in a real namespace: what
// this API makes, `ip -j neigh` reports; what `ip` makes, this API reads.
import { afterEach, describe, expect, it } from 'vitest';
import { NetNS } from '../../dist/index.js';
import { ErrorCodes, openNetlink, type Neighbour } from '../../dist/netlink/index.js';
import { privileged } from '../helpers/privileges.js';
import { ip, ipJson, scratchNamespaces } from '../helpers/scratch-namespaces.js';

const scratch = scratchNamespaces('nsnb');
const namespace = (): Promise<NetNS> => scratch.create();



/** What `ip -j neigh` prints for an entry, from what this API read. */
function asIpPrints(n: Neighbour, dev: string): Record<string, unknown> {
  const out: Record<string, unknown> = { dst: n.address, dev };
  if (n.lladdr !== undefined) out.lladdr = n.lladdr;
  for (const flag of n.flags) if (flag === 'router' || flag === 'extern_learn' || flag === 'proxy') out[flag] = null;
  if (!n.proxy && n.state !== 'none') out.state = [String(n.state).toUpperCase()];
  return out;
}

describe.skipIf(!privileged)('netlink neighbours in a namespace', () => {
  afterEach(async () => {
    await scratch.removeAll();
  });

  it('what this API adds, ip -j neigh reports; replace and delete too', async () => {
    const a = await namespace();
    ip(a, 'link', 'add', 'n0', 'type', 'veth', 'peer', 'name', 'n1');
    ip(a, 'link', 'set', 'n0', 'up');
    const nl = await openNetlink(a);
    try {
      await nl.neighbours.add({ link: 'n0', address: '10.1.0.5', lladdr: '02:00:00:00:00:05' });
      await nl.neighbours.add({ link: 'n0', address: 'fd00::7', lladdr: '02:00:00:00:00:07', state: 'stale', flags: ['router'] });
      await nl.neighbours.add({ link: 'n0', address: '10.1.0.9', lladdr: '02:00:00:00:00:09', state: 'noarp' });
      await nl.neighbours.add({ link: 'n0', address: '10.1.0.20', lladdr: '02:00:00:00:00:14', flags: ['extern_learn'] });
      await nl.neighbours.add({ link: 'n0', address: '10.1.0.8', proxy: true });
      const shown = ipJson(a, 'neigh', 'show', 'nud', 'all', 'dev', 'n0');
      const sort = (l: Record<string, unknown>[]) => [...l].sort((x, y) => String(x.dst).localeCompare(String(y.dst)));
      expect(sort(shown)).toEqual(
        sort([
          { dst: '10.1.0.5', lladdr: '02:00:00:00:00:05', state: ['PERMANENT'] },
          { dst: 'fd00::7', lladdr: '02:00:00:00:00:07', router: null, state: ['STALE'] },
          { dst: '10.1.0.9', lladdr: '02:00:00:00:00:09', state: ['NOARP'] },
          { dst: '10.1.0.20', lladdr: '02:00:00:00:00:14', extern_learn: null, state: ['PERMANENT'] },
        ]),
      );
      expect(ipJson(a, 'neigh', 'show', 'proxy')).toEqual([{ dst: '10.1.0.8', dev: 'n0', proxy: null }]);
      // This API's own reading agrees with ip's, entry for entry.
      const mine = await nl.neighbours.list({ link: 'n0' });
      expect(sort(mine.map((n) => asIpPrints(n, 'n0')))).toEqual(sort(ipJson(a, 'neigh', 'show', 'nud', 'all').filter((x) => x.dev === 'n0')));
      expect((await nl.neighbours.list({ proxy: true })).map((n) => asIpPrints(n, 'n0'))).toEqual(ipJson(a, 'neigh', 'show', 'proxy'));

      await expect(nl.neighbours.add({ link: 'n0', address: '10.1.0.5', lladdr: '02:00:00:00:00:06' })).rejects.toMatchObject({
        code: 'EEXIST',
        syscall: 'netlink',
        message: expect.stringMatching(/^netlink: add neighbour 10\.1\.0\.5 on n0: EEXIST/),
      });
      await nl.neighbours.replace({ link: 'n0', address: '10.1.0.5', lladdr: '02:00:00:00:00:15', state: 'reachable' });
      expect(ipJson(a, 'neigh', 'show', '10.1.0.5', 'dev', 'n0')).toEqual([{ dst: '10.1.0.5', lladdr: '02:00:00:00:00:15', state: ['REACHABLE'] }]);

      await nl.neighbours.delete({ link: 'n0', address: '10.1.0.5' });
      await nl.neighbours.delete({ link: 'n0', address: 'fd00::7' });
      await nl.neighbours.delete({ link: 'n0', address: '10.1.0.8', proxy: true });
      await expect(nl.neighbours.delete({ link: 'n0', address: '10.1.0.5' })).rejects.toMatchObject({ code: 'ENOENT' });
      expect(ipJson(a, 'neigh', 'show', 'nud', 'all', 'dev', 'n0').map((x) => x.dst).sort()).toEqual(['10.1.0.20', '10.1.0.9']);
      expect(ipJson(a, 'neigh', 'show', 'proxy')).toEqual([]);
    } finally {
      nl.close();
    }
  });

  it('reads what ip neigh made, by link and by family', async () => {
    const a = await namespace();
    ip(a, 'link', 'add', 'p0', 'type', 'veth', 'peer', 'name', 'p1');
    ip(a, 'link', 'set', 'p0', 'up');
    ip(a, 'link', 'set', 'p1', 'up');
    ip(a, 'neigh', 'add', '10.2.0.1', 'lladdr', '02:00:00:00:01:01', 'dev', 'p0');
    ip(a, 'neigh', 'add', '10.2.0.2', 'lladdr', '02:00:00:00:01:02', 'dev', 'p0', 'nud', 'stale');
    ip(a, 'neigh', 'add', 'fd00::2', 'lladdr', '02:00:00:00:01:03', 'dev', 'p0', 'router', 'nud', 'reachable');
    ip(a, 'neigh', 'add', '10.2.0.3', 'lladdr', '02:00:00:00:01:04', 'dev', 'p1', 'nud', 'noarp');
    ip(a, 'neigh', 'add', 'proxy', '10.2.0.9', 'dev', 'p1');
    const nl = await openNetlink(a);
    try {
      const indexOf = new Map((await nl.links.list()).map((l) => [l.index, l.name]));
      // The kernel adds multicast entries of its own (ff02::16 for MLD, solicited-node ones for DAD) while the
      // links come up, at any moment: ip's view is taken first, so each entry in it must be in ours.
      const ipAll = ipJson(a, 'neigh', 'show', 'nud', 'all');
      const all = await nl.neighbours.list();
      for (const entry of ipAll) {
        const mine = all.filter((n) => n.address === entry.dst && indexOf.get(n.index) === entry.dev);
        expect(mine).toHaveLength(1);
        expect(asIpPrints(mine[0]!, entry.dev as string)).toEqual(entry);
      }
      expect(all.find((n) => n.address === 'fd00::2')).toMatchObject({ family: 6, state: 'reachable', flags: ['router'], lladdr: '02:00:00:00:01:03' });
      const ipP0 = ipJson(a, 'neigh', 'show', 'nud', 'all', 'dev', 'p0').map((x) => x.dst as string);
      const p0 = (await nl.neighbours.list({ link: 'p0' })).map((n) => n.address);
      // what ip saw, and beyond it only what the kernel may have added since: multicast entries
      expect(p0).toEqual(expect.arrayContaining(ipP0));
      expect(p0.filter((address) => !ipP0.includes(address)).every((address) => address.startsWith('ff'))).toBe(true);
      expect(p0).toEqual(expect.arrayContaining(['10.2.0.1', '10.2.0.2', 'fd00::2']));
      expect((await nl.neighbours.list({ link: 'p0', family: 4 })).map((n) => n.address).sort()).toEqual(['10.2.0.1', '10.2.0.2']);
      expect((await nl.neighbours.list({ family: 6 })).every((n) => n.family === 6)).toBe(true);
      expect(await nl.neighbours.list({ proxy: true })).toEqual([
        { family: 4, index: (await nl.links.get('p1')).index, address: '10.2.0.9', state: 'none', flags: ['proxy'], proxy: true },
      ]);
    } finally {
      nl.close();
    }
  });

  it('bad input and an unknown link are refused with coded errors; nothing is added', async () => {
    const a = await namespace();
    ip(a, 'link', 'add', 'q0', 'type', 'veth', 'peer', 'name', 'q1');
    const nl = await openNetlink(a);
    try {
      await expect(nl.neighbours.add({ link: 'q0', address: '10.3.0.1', lladdr: '02:00:00:00:00' })).rejects.toMatchObject({ code: ErrorCodes.NETLINK_INVALID });
      await expect(nl.neighbours.add({ link: 'q0', address: '10.3.0.1/24' })).rejects.toMatchObject({ code: ErrorCodes.NETLINK_INVALID });
      await expect(nl.neighbours.add({ link: 'q0', address: 'fd00::1', family: 4 })).rejects.toMatchObject({ code: ErrorCodes.NETLINK_INVALID });
      await expect(nl.neighbours.add({ link: 'nosuch0', address: '10.3.0.1', lladdr: '02:00:00:00:00:01' })).rejects.toMatchObject({ code: 'ENODEV' });
      await expect(nl.neighbours.add({ link: 9999, address: '10.3.0.1', lladdr: '02:00:00:00:00:01' })).rejects.toMatchObject({ code: 'ENODEV', syscall: 'netlink' });
      expect(ipJson(a, 'neigh', 'show', 'nud', 'all')).toEqual([]);
    } finally {
      nl.close();
    }
  });
});
