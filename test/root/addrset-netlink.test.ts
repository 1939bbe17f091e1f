// NetlinkBackend against the kernel: the address-set contract as the nft
// backend meets it, what nft lists after each backend wrote the same
// operations, and each backend reading the other's table. Namespaces under a
// unique prefix, removed after each test whatever happened.
import { afterEach, describe, expect, it } from 'vitest';
import type { NetNS } from '../../dist/index.js';
import { AddressSets } from '../../dist/addrset/index.js';
import type { AddrsetBackend } from '../../dist/addrset/backend.js';
import { NetlinkBackend } from '../../dist/addrset/netlink-backend.js';
import { NftBackend } from '../../dist/addrset/nft-backend.js';
import type { Op } from '../../dist/addrset/ops.js';
import { parseKernelText, type Entry } from '../../dist/addrset/addresses.js';
import { commit } from '../../dist/nftables/batch.js';
import { TableReader } from '../../dist/nftables/dump.js';
import { deleteTable } from '../../dist/nftables/messages.js';
import { openNftables } from '../../dist/nftables/socket.js';
import { privileged } from '../helpers/privileges.js';
import { scratchNamespaces } from '../helpers/scratch-namespaces.js';

const namespaces = scratchNamespaces('nlas');
const opened: NetlinkBackend[] = [];
const noLock = { fd: null, release() {} };

/** Element texts as the manager hands them to a backend: parsed and checked. */
function entries(texts: string[]): Entry[] {
  return texts.map((text) => parseKernelText(text)!);
}

async function netlinkBackend(ns: NetNS, table: string): Promise<NetlinkBackend> {
  const backend = await NetlinkBackend.create(ns, { family: 'inet', table });
  opened.push(backend);
  return backend;
}

const BACKENDS: [string, (ns: NetNS, table: string) => Promise<AddrsetBackend>][] = [
  ['nft', (ns, table) => NftBackend.create(ns, { family: 'inet', table })],
  ['netlink', netlinkBackend],
];

/** `nft -j list table` without the handles, which count whatever the namespace saw before. */
async function listing(ns: NetNS, table: string): Promise<unknown> {
  const { stdout } = await ns.execFile('nft', ['-j', 'list', 'table', 'inet', table]);
  return JSON.parse(stdout, (key, value) => (key === 'handle' || key === 'metainfo' ? undefined : value));
}

const WRITE: Op[] = [
  { op: 'addTable' },
  { op: 'addRegistry', name: 'reg' },
  { op: 'createSet', name: 'as_a4', family: 4 },
  { op: 'addElements', name: 'as_a4', elements: entries(['10.1.0.0/16', '10.2.0.1-10.2.0.9', '192.168.1.1', '255.255.255.0/24']) },
  { op: 'createSet', name: 'as_a6', family: 6 },
  { op: 'addElements', name: 'as_a6', elements: entries(['fd00::1', 'fd00:1::/64', 'ffff::/16']) },
  { op: 'putRecord', registry: 'reg', key: 'as_a4', comment: 'o=owner a d=1700000000000' },
  { op: 'putRecord', registry: 'reg', key: 'as_a6', comment: 'o=owner a' },
  { op: 'deleteElements', name: 'as_a4', elements: entries(['192.168.1.1']) },
];

afterEach(async () => {
  for (const backend of opened.splice(0)) backend.close();
  await namespaces.removeAll();
});

describe.skipIf(!privileged)('NetlinkBackend on real nftables', () => {
  for (const [kind, make] of BACKENDS) {
    it(`meets the address-set contract (${kind} backend)`, async () => {
      const ns = await namespaces.create();
      const sets = await AddressSets.open({ netns: ns, table: 'filter', backend: await make(ns, 'filter'), deleteDelayMs: 0, retryIntervalMs: 20, maxRetryIntervalMs: 40 });
      try {
        const refs = await sets.ensure('ns/"quoted" frontend', ['10.1.0.7', 'fd00::7', '10.2.0.0/16', '255.255.255.255']);
        expect((await sets.inspect('ns/"quoted" frontend')).v4.elements).toEqual(['10.1.0.7', '10.2.0.0/16', '255.255.255.255']);
        await expect(sets.add('ns/"quoted" frontend', ['10.2.3.0/24'])).rejects.toMatchObject({ code: 'ERR_NETNS_ADDRSET_OVERLAP' });
        await sets.replace('ns/"quoted" frontend', ['10.1.0.9', 'fd00::9']);
        expect(await sets.inspect('ns/"quoted" frontend')).toMatchObject({ v4: { elements: ['10.1.0.9'] }, v6: { elements: ['fd00::9'] } });
        await ns.execFile('nft', ['-f', '-'], { input: `add chain inet filter input { type filter hook input priority 0; }\nadd rule inet filter input ip saddr @${refs.v4} drop\n` });
        const failed = new Promise<{ error: Error & { code?: string } }>((resolve) => sets.once('destroyFailed', resolve));
        await sets.delete('ns/"quoted" frontend');
        expect((await failed).error.code).toBe('EBUSY');
        const destroyed = new Promise((resolve) => sets.once('destroyed', resolve));
        await ns.execFile('nft', ['flush', 'chain', 'inet', 'filter', 'input']);
        await destroyed;
        expect(await sets.list()).toEqual([]);
      } finally {
        await sets.close();
      }
    });
  }

  it('writes what nft lists exactly as if the nft backend had written it', async () => {
    const [byNft, byNetlink] = [await namespaces.create(), await namespaces.create()];
    await (await NftBackend.create(byNft, { family: 'inet', table: 't' })).apply(WRITE, noLock);
    await (await netlinkBackend(byNetlink, 't')).apply(WRITE, noLock);
    expect(await listing(byNetlink, 't')).toEqual(await listing(byNft, 't'));
    expect((await byNetlink.execFile('nft', ['list', 'table', 'inet', 't'])).stdout).toBe((await byNft.execFile('nft', ['list', 'table', 'inet', 't'])).stdout);
  });

  it("each backend reads the table the other wrote", async () => {
    const [byNft, byNetlink] = [await namespaces.create(), await namespaces.create()];
    await (await NftBackend.create(byNft, { family: 'inet', table: 't' })).apply(WRITE, noLock);
    await (await netlinkBackend(byNetlink, 't')).apply(WRITE, noLock);
    for (const elements of [true, false]) {
      const options = { elements, registry: 'reg' };
      const nftView = await (await NftBackend.create(byNft, { family: 'inet', table: 't' })).read(options);
      expect(nftView.records.get('as_a4')).toBe('o=owner a d=1700000000000');
      expect(await (await netlinkBackend(byNft, 't')).read(options)).toEqual(nftView);
      expect(await (await NftBackend.create(byNetlink, { family: 'inet', table: 't' })).read(options)).toEqual(nftView);
    }
    expect(await (await netlinkBackend(byNft, 'absent')).read({ elements: true, registry: 'reg' })).toMatchObject({ tableExists: false });
  });

  it('fails all or nothing, naming the operation the kernel refused', async () => {
    const ns = await namespaces.create();
    const backend = await netlinkBackend(ns, 't');
    await backend.apply(WRITE.slice(0, 4), noLock);
    const before = await listing(ns, 't');
    await expect(backend.apply([{ op: 'createSet', name: 'as_new', family: 4 }, { op: 'deleteSet', name: 'as_missing' }], noLock)).rejects.toMatchObject({
      code: 'ENOENT',
      message: expect.stringContaining('delete set inet t as_missing'),
    });
    await expect(backend.apply([{ op: 'addElements', name: 'as_a4', elements: entries(['10.1.2.0/24']) }], noLock)).rejects.toMatchObject({ code: 'ERR_NETNS_ADDRSET_OVERLAP' });
    expect(await listing(ns, 't')).toEqual(before);
  });

  it('removes its table only when nothing at all is in it, and stays usable after', async () => {
    const ns = await namespaces.create();
    const tables = async () => (JSON.parse((await ns.execFile('nft', ['-j', 'list', 'tables'])).stdout).nftables as { table?: { name: string } }[]).flatMap((item) => item.table?.name ?? []);
    const sets = await AddressSets.open({ netns: ns, table: 'last', deleteDelayMs: 0 });
    try {
      await sets.ensure('a', ['10.0.0.1']);
      expect(await sets.deleteTableIfEmpty()).toBe(false); // a live owner
      await sets.delete('a');
      await sets.destroyDue();
      // A chain someone made in the table (host policy that will use its sets) keeps it.
      await ns.execFile('nft', ['add', 'chain', 'inet', 'last', 'hostpolicy']);
      expect(await sets.deleteTableIfEmpty()).toBe(false);
      await ns.execFile('nft', ['delete', 'chain', 'inet', 'last', 'hostpolicy']);
      expect(await sets.deleteTableIfEmpty()).toBe(true);
      expect(await tables()).toEqual([]);
      await sets.ensure('b', ['10.0.0.2']); // the next write makes the table again
      expect(await sets.inspect('b')).toMatchObject({ state: 'live', v4: { elements: ['10.0.0.2'] } });
    } finally {
      await sets.close();
    }
  });

  it('removeTableIfEmpty takes a table whose one object is an empty registry, and keeps it for anything else', async () => {
    const ns = await namespaces.create();
    const backend = await netlinkBackend(ns, 't');
    const exists = async () => (await ns.execFile('nft', ['list', 'table', 'inet', 't']).then(() => true, () => false));
    const remake = (...ops: Op[]) => backend.apply([{ op: 'addTable' }, ...ops], noLock);
    expect(await backend.removeTableIfEmpty('reg', noLock)).toBe(false); // no table
    const kept: [string, () => Promise<unknown>][] = [
      ['a record in the registry', () => remake({ op: 'addRegistry', name: 'reg' }, { op: 'putRecord', registry: 'reg', key: 'as_a4', comment: 'o=a' })],
      ['one set of another name', () => remake({ op: 'createSet', name: 'as_a4', family: 4 })],
      ['one chain', async () => {
        await remake();
        await ns.execFile('nft', ['add', 'chain', 'inet', 't', 'hostpolicy']);
      }],
      ['the registry and a set', () => remake({ op: 'addRegistry', name: 'reg' }, { op: 'createSet', name: 'as_a4', family: 4 })],
    ];
    for (const [what, make] of kept) {
      await make();
      expect(await backend.removeTableIfEmpty('reg', noLock), what).toBe(false);
      expect(await exists(), what).toBe(true);
      await ns.execFile('nft', ['delete', 'table', 'inet', 't']);
    }
    await remake({ op: 'addRegistry', name: 'reg' });
    expect(await backend.removeTableIfEmpty('reg', noLock)).toBe(true);
    expect(await exists()).toBe(false);
  });

  it('reads a set of another shape than ours as other, and a record without a comment as an empty one', async () => {
    const ns = await namespaces.create();
    const backend = await netlinkBackend(ns, 't');
    await backend.apply([{ op: 'addTable' }, { op: 'addRegistry', name: 'reg' }, { op: 'createSet', name: 'as_a4', family: 4 }], noLock);
    const nft = (...args: string[]) => ns.execFile('nft', args);
    await nft('add', 'set', 'inet', 't', 'plain4', '{ type ipv4_addr; }'); // no interval flag
    await nft('add', 'set', 'inet', 't', 'ports', '{ type inet_service; flags interval; }');
    await nft('add', 'element', 'inet', 't', 'reg', '{ "as_a4" }');
    const view = await backend.read({ elements: true, registry: 'reg' });
    expect(Object.fromEntries([...view.sets].map(([name, set]) => [name, set.family]))).toEqual({ as_a4: 4, plain4: 'other', ports: 'other' });
    expect([...view.records]).toEqual([['as_a4', '']]);
  });

  it('a transaction sent with the generation of an earlier read is refused once anything changed since', async () => {
    const ns = await namespaces.create();
    await (await netlinkBackend(ns, 'kept')).apply(WRITE.slice(0, 2), noLock);
    using handle = await openNftables(ns);
    const ref = { family: 1, table: 'kept' } as const;
    const generation = await new TableReader(handle, ref).consistent(async (reader) => reader.generation);
    await ns.execFile('nft', ['add', 'table', 'inet', 'elsewhere']);
    expect(() => commit(handle, [deleteTable(ref)], generation)).toThrow(expect.objectContaining({ errno: -85 })); // ERESTART
    expect((await listing(ns, 'kept')) as object).toMatchObject({ nftables: expect.arrayContaining([{ table: expect.objectContaining({ name: 'kept' }) }]) });
    commit(handle, [deleteTable(ref)], await new TableReader(handle, ref).consistent(async (reader) => reader.generation));
    await expect(ns.execFile('nft', ['list', 'table', 'inet', 'kept'])).rejects.toThrow();
  });

  // nf_tables' generation id is the namespace's: every commit to any table bumps it, and marks
  // any dump in progress interrupted. A writer elsewhere committing in a loop must not starve
  // the table's own writer of reading its sets (open, inspect, gc).
  it('the table\'s writer reads a large set while another program commits to another table in a loop', async () => {
    const ns = await namespaces.create();
    const ips = Array.from({ length: 50_000 }, (_, i) => `10.${(i >> 15) & 255}.${(i >> 7) & 255}.${(i & 127) * 2}`);
    const first = await AddressSets.open({ netns: ns, table: 'busy' });
    await first.ensure('ns/big', ips);
    await first.close();
    const churn = ns.spawn('sh', ['-c', 'while :; do nft add table inet churn && nft delete table inet churn && echo turn; done'], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      await new Promise((resolve) => churn.stdout!.once('data', resolve));
      const sets = await AddressSets.open({ netns: ns, table: 'busy' });
      try {
        expect((await sets.inspect('ns/big')).v4.elements).toHaveLength(50_000);
        expect(await sets.list()).toMatchObject([{ owner: 'ns/big', family: 4, elements: 50_000, state: 'orphan' }, { family: 6 }]);
        expect((await sets.gc({ live: ['ns/big'] })).removed).toEqual([]);
      } finally {
        await sets.close();
      }
    } finally {
      churn.kill('SIGKILL');
    }
  });

  it('fills 100,000 addresses in one batch, and refuses one that size whole', async () => {
    const ns = await namespaces.create();
    const backend = await netlinkBackend(ns, 't');
    // Not adjacent (every other address): nft lists each as its own element.
    const ips = Array.from({ length: 100_000 }, (_, i) => `10.${(i >> 15) & 255}.${(i >> 7) & 255}.${(i & 127) * 2}`);
    // About 4 MB in one sendmsg: past the default send buffer (EMSGSIZE at ~208 KiB).
    await backend.apply([{ op: 'addTable' }, { op: 'createSet', name: 'as_big', family: 4 }, { op: 'addElements', name: 'as_big', elements: entries(ips) }], noLock);
    const count = async (set: string) => {
      const { stdout } = await ns.execFile('nft', ['-j', 'list', 'set', 'inet', 't', set]);
      return (JSON.parse(stdout) as { nftables: { set?: { elem?: unknown[] } }[] }).nftables.find((entry) => entry.set)!.set!.elem!.length;
    };
    expect(await count('as_big')).toBe(100_000);
    const view = await backend.read({ elements: true, registry: 'reg' });
    expect(view.sets.get('as_big')!.elements!.map((entry) => entry.text)).toEqual([...ips].sort(byAddress));
    const before = await listing(ns, 't');
    await expect(
      backend.apply([{ op: 'createSet', name: 'as_other', family: 4 }, { op: 'addElements', name: 'as_other', elements: entries(ips) }, { op: 'deleteSet', name: 'as_missing' }], noLock),
    ).rejects.toMatchObject({ code: 'ENOENT', message: expect.stringContaining('delete set inet t as_missing') });
    expect(await listing(ns, 't')).toEqual(before);
  });
});

/** IPv4 texts in numeric order, as the backend reads a set back. */
function byAddress(a: string, b: string): number {
  const value = (text: string) => text.split('.').reduce((sum, part) => sum * 256 + Number(part), 0);
  return value(a) - value(b);
}
