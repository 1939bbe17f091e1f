// What gc must leave alone, on real nftables sets in a namespace each test
// makes (issue 34; test/unit/addrset-gc-scope.test.ts has the same on the
// in-memory backend): an owner live here that the writer took in again from
// the kernel, another prefix's sets in the same table, and the surviving set
// of a live owner whose other set was deleted by hand. Changes "by hand" are
// made with `nft`, and `nft` cross-checks what is left.
import { afterEach, describe, expect, it } from 'vitest';
import type { NetNS } from '../../dist/index.js';
import { AddressSets } from '../../dist/addrset/index.js';
import { encodeRecord, ownerHash, setName } from '../../dist/addrset/naming.js';
import { privileged } from '../helpers/privileges.js';
import { scratchNamespaces } from '../helpers/scratch-namespaces.js';

const namespaces = scratchNamespaces('nsgcsc');
const TABLE = 'gcscope';
const BACKENDS = ['netlink', 'nft'] as const;
type Backend = (typeof BACKENDS)[number];

afterEach(() => namespaces.removeAll());

const nft = (ns: NetNS, input: string) => ns.execFile('nft', ['-f', '-'], { input: `${input}\n` });

/** Every set of our table, by name, with its elements as nft lists them (a registry's: its keys). */
async function nftSets(ns: NetNS): Promise<Map<string, string[]>> {
  const { stdout } = await ns.execFile('nft', ['-j', 'list', 'table', 'inet', TABLE]);
  type Elem = string | { elem: { val: string } };
  const items = (JSON.parse(stdout) as { nftables: { set?: { name: string; elem?: Elem[] } }[] }).nftables;
  return new Map(items.flatMap(({ set }) => (set ? [[set.name, (set.elem ?? []).map((e) => (typeof e === 'string' ? e : e.elem.val)).sort()]] : [])));
}

function open(ns: NetNS, backend: Backend, prefix = 'as') {
  return AddressSets.open({ netns: ns, table: TABLE, backend, prefix });
}

/** Runs `use` on an instance open on the table, closing it even when `use` fails. */
async function withSets<T>(ns: NetNS, backend: Backend, use: (sets: AddressSets) => Promise<T>, prefix = 'as'): Promise<T> {
  const sets = await open(ns, backend, prefix);
  try {
    return await use(sets);
  } finally {
    await sets.close();
  }
}

/** nft text recording `owner`'s two (empty) sets, as another writer or a restored ruleset backup leaves them. */
function recordedOwnerByHand(owner: string): string {
  const names = ([4, 6] as const).map((family) => [family, setName('as', family, ownerHash(owner))] as const);
  return [
    ...names.map(([family, name]) => `add set inet ${TABLE} ${name} { type ipv${family}_addr; flags interval; }`),
    `add element inet ${TABLE} as_owners { ${names.map(([, name]) => `"${name}" comment "${encodeRecord(owner)}"`).join(', ')} }`,
  ].join('\n');
}

describe.skipIf(!privileged)('gc on real nftables leaves alone what is not its to remove', () => {
  for (const backend of BACKENDS) {
    it(`(${backend} backend) an owner live here whose request failed with ENOENT (an element deleted by hand) stays live: gc({ live: [] }) removes nothing`, async () => {
      const ns = await namespaces.create();
      await withSets(ns, backend, async (sets) => {
        const refs = await sets.ensure('ns/live', ['10.1.0.1', '10.1.0.2', 'fd00::1']);
        await nft(ns, `delete element inet ${TABLE} ${refs.v4} { 10.1.0.2 }`);
        await sets.remove('ns/live', ['10.1.0.2']); // ENOENT: the writer reads the kernel again, then goes on
        const report = await sets.gc({ live: [] });
        expect(report.removed).toEqual([]);
        const left = await nftSets(ns);
        expect(left.get(refs.v4)).toEqual(['10.1.0.1']);
        expect(left.get(refs.v6)).toEqual(['fd00::1']);
        expect((await sets.inspect('ns/live')).state).toBe('live');
      });
    });

    it(`(${backend} backend) gc that takes in an owner recorded by hand meanwhile removes that one, never the owner live here`, async () => {
      const ns = await namespaces.create();
      await withSets(ns, backend, async (sets) => {
        const refs = await sets.ensure('ns/live', ['10.1.0.1', 'fd00::1']);
        await nft(ns, recordedOwnerByHand('ns/stranger'));
        const report = await sets.gc({ live: [] });
        expect(report.removed.map((entry) => entry.owner)).toEqual(['ns/stranger', 'ns/stranger']);
        const left = await nftSets(ns);
        expect([...left.keys()].sort()).toEqual(['as_owners', refs.v4, refs.v6].sort());
        expect(left.get(refs.v4)).toEqual(['10.1.0.1']);
        expect(left.get(refs.v6)).toEqual(['fd00::1']);
      });
    });

    // 'kas' ends with 'as': a name test that is not anchored at the prefix's start takes one for the other.
    for (const [collector, other] of [['as', 'kas'], ['kas', 'as']] as const) {
      it(`(${backend} backend) gc of prefix ${collector} removes its own orphan and leaves prefix ${other}'s sets in the same table`, async () => {
        const ns = await namespaces.create();
        // Each writer closes, as if its process had gone: its owner is an orphan to the next.
        const mine = await withSets(ns, backend, (sets) => sets.ensure('ns/mine', ['10.1.0.1']), collector);
        const theirs = await withSets(ns, backend, (sets) => sets.ensure('ns/theirs', ['10.2.0.1', 'fd00::2']), other);
        const report = await withSets(ns, backend, (sets) => sets.gc({ live: [] }), collector);
        expect(report.removed.map((entry) => entry.name)).toEqual([mine.v4, mine.v6]);
        const left = await nftSets(ns);
        expect(left.has(mine.v4) || left.has(mine.v6)).toBe(false);
        expect(left.get(theirs.v4)).toEqual(['10.2.0.1']);
        expect(left.get(theirs.v6)).toEqual(['fd00::2']);
        expect(left.get(`${other}_owners`)).toEqual([theirs.v4, theirs.v6].sort());
      });
    }

    it(`(${backend} backend) a live owner's set deleted by hand: gc (dry run or not) leaves the other, and the next add makes the missing one again`, async () => {
      const ns = await namespaces.create();
      await withSets(ns, backend, async (sets) => {
        const refs = await sets.ensure('ns/live', ['10.1.0.1', 'fd00::1']);
        await nft(ns, `delete set inet ${TABLE} ${refs.v4}`);
        for (const dryRun of [true, false]) {
          const report = await sets.gc({ live: [], dryRun });
          expect(report.removed, `dryRun: ${dryRun}`).toEqual([]);
        }
        expect((await nftSets(ns)).get(refs.v6)).toEqual(['fd00::1']);
        await sets.add('ns/live', ['10.1.0.2']);
        const left = await nftSets(ns);
        expect(left.get(refs.v4)).toEqual(['10.1.0.1', '10.1.0.2']);
        expect(left.get(refs.v6)).toEqual(['fd00::1']);
      });
    });

    it(`(${backend} backend) a set of another type under a name of ours is the user's: gc neither removes nor lists it`, async () => {
      const ns = await namespaces.create();
      await withSets(ns, backend, async (sets) => {
        await sets.ensure('ns/live', []); // the table and its registry
        const lookalike = setName('as', 4, ownerHash('ns/gone'));
        await nft(ns, `add set inet ${TABLE} ${lookalike} { type ether_addr; elements = { 02:00:00:00:00:01 } }`);
        for (const dryRun of [true, false]) {
          const report = await sets.gc({ live: [], dryRun });
          expect([...report.removed, ...report.kept].map((entry) => entry.name), `dryRun: ${dryRun}`).not.toContain(lookalike);
        }
        expect((await nftSets(ns)).get(lookalike)).toEqual(['02:00:00:00:00:01']);
      });
    });

    // Every set this package ever made is an interval set with no other flag: one of another shape was made by someone else.
    it(`(${backend} backend) an address set of another shape under a name of ours (no interval flag, or timeouts) is the user's: gc neither removes nor lists it`, async () => {
      const ns = await namespaces.create();
      await withSets(ns, backend, async (sets) => {
        await sets.ensure('ns/live', []);
        const plain = setName('as', 4, ownerHash('ns/plain'));
        const timed = setName('as', 6, ownerHash('ns/timed'));
        await nft(ns, [
          `add set inet ${TABLE} ${plain} { type ipv4_addr; elements = { 10.9.0.1 } }`,
          `add set inet ${TABLE} ${timed} { type ipv6_addr; flags interval,timeout; elements = { fd00::9 } }`,
        ].join('\n'));
        const theirs = (rows: { name: string }[]) => rows.map((row) => row.name).filter((name) => name === plain || name === timed);
        expect(theirs(await sets.list())).toEqual([]);
        for (const dryRun of [true, false]) {
          const report = await sets.gc({ live: [], dryRun });
          expect(theirs([...report.removed, ...report.kept]), `dryRun: ${dryRun}`).toEqual([]);
        }
        const left = await nftSets(ns);
        expect([left.get(plain), left.get(timed)]).toEqual([['10.9.0.1'], ['fd00::9']]);
      });
    });

    it(`(${backend} backend) our record naming a set of another type is debris: gc removes the record and leaves the set`, async () => {
      const ns = await namespaces.create();
      await withSets(ns, backend, async (sets) => {
        await sets.ensure('ns/live', []);
        const lookalike = setName('as', 4, ownerHash('ns/gone'));
        await nft(ns, [
          `add set inet ${TABLE} ${lookalike} { type ether_addr; elements = { 02:00:00:00:00:01 } }`,
          `add element inet ${TABLE} as_owners { "${lookalike}" comment "${encodeRecord('ns/gone')}" }`,
        ].join('\n'));
        const report = await sets.gc({ live: [] });
        expect(report.removed.map((entry) => entry.name)).toEqual([lookalike]);
        const left = await nftSets(ns);
        expect(left.get(lookalike)).toEqual(['02:00:00:00:00:01']);
        expect(left.get('as_owners')).not.toContain(lookalike);
      });
    });
  }
});
