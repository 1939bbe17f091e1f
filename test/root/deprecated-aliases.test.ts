// The old names the API conventions renamed (delete removes from the system,
// close only lets go) still work, as the very same functions, against real
// namespaces, tables and rules: TestNetwork.close, AddressSets.removeTableIfEmpty
// and netns/cni/plumbing's removeMasquerade.
import { existsSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { AddressSets } from '../../dist/addrset/index.js';
import { addMasquerade, deleteMasquerade, listMasquerade, removeMasquerade } from '../../dist/cni/plumbing.js';
import { createTestNetwork } from '../../dist/testing.js';
import { privileged } from '../helpers/privileges.js';
import { scratchNamespaces } from '../helpers/scratch-namespaces.js';

const namespaces = scratchNamespaces('nsalias');
afterEach(() => namespaces.removeAll());

describe.skipIf(!privileged)('deprecated aliases', () => {
  it('TestNetwork.close is delete: the same function, and it deletes the namespaces', async () => {
    const network = await createTestNetwork({ prefix: 'nsalias-net-', hosts: { a: {}, b: {} }, links: [['a', 'b']] });
    const paths = Object.values(network.names).map((name) => `/run/netns/${name}`);
    try {
      expect(network.close).toBe(network.delete);
      expect(paths.every((path) => existsSync(path))).toBe(true);
      await network.close();
      expect(paths.filter((path) => existsSync(path))).toEqual([]);
    } finally {
      await network.delete(); // idempotent: nothing left if close() did its work
    }
  });

  it('AddressSets.removeTableIfEmpty is deleteTableIfEmpty: the same function, and it deletes the empty table', async () => {
    const ns = await namespaces.create();
    const tables = async () => (await ns.execFile('nft', ['list', 'tables'])).stdout.trim();
    const sets = await AddressSets.open({ netns: ns, table: 'alias', deleteDelayMs: 0 });
    try {
      expect(sets.removeTableIfEmpty).toBe(sets.deleteTableIfEmpty);
      await sets.ensure('a', ['10.0.0.1']);
      expect(await sets.removeTableIfEmpty()).toBe(false); // a live owner
      await sets.delete('a');
      await sets.destroyDue();
      expect(await tables()).toBe('table inet alias');
      expect(await sets.removeTableIfEmpty()).toBe(true);
      expect(await tables()).toBe('');
    } finally {
      await sets.close();
    }
  });

  it("removeMasquerade is deleteMasquerade: the same function, and it deletes the attachment's rules", async () => {
    const host = await namespaces.create();
    const attachment = { network: 'alias-net', containerID: 'ctr-1', ifname: 'eth0' };
    expect(removeMasquerade).toBe(deleteMasquerade);
    await addMasquerade(host, attachment, ['10.1.1.2/24']);
    expect(await listMasquerade(host, 'alias-net')).toHaveLength(1);
    expect(await removeMasquerade(host, attachment)).toBe(1);
    expect(await listMasquerade(host, 'alias-net')).toEqual([]);
  });
});
