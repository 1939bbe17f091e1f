// What gc must leave alone, each a way it could destroy sets a user still
// holds (issue 34: a mutation of each guard kept every older test green):
// an owner live here that the writer took in again from the kernel, another
// prefix's sets in the same table, and the surviving set of a live owner
// whose other set was deleted by hand. Deterministic, on the in-memory
// backend; test/root/addrset-gc-scope.test.ts runs the same on nftables.
import { describe, expect, it } from 'vitest';
import { NetNS } from '../../dist/index.js';
import { AddressSets, type AddrsetBackend } from '../../dist/addrset/index.js';
import { ManualClock, MemoryBackend } from '../../dist/testing.js';
import { recordedOwnerOps, tableWithAHand } from '../helpers/addrset-hand.js';

function open(backend: AddrsetBackend, prefix = 'as') {
  return AddressSets.open({ netns: NetNS.current(), table: 't', backend, prefix, clock: new ManualClock(), lockTimeoutMs: 0 });
}

const owners = (entries: { owner: string | null }[]) => entries.map((entry) => entry.owner);

describe('gc: an owner live in this process stays live when the writer takes in what the kernel holds', () => {
  it('an add that failed once with ENOENT (so the writer read the kernel again) lands; gc({ live: [] }) then removes nothing', async () => {
    const memory = new MemoryBackend();
    const sets = await open(memory);
    const refs = await sets.ensure('ns/live', ['10.1.0.1', 'fd00::1']);
    memory.failNext('ENOENT'); // as if someone had changed the table by hand
    await sets.add('ns/live', ['10.1.0.2']);
    const report = await sets.gc({ live: [] });
    expect(report.removed).toEqual([]);
    expect(memory.elements(refs.v4)).toEqual(['10.1.0.1', '10.1.0.2']);
    expect(memory.elements(refs.v6)).toEqual(['fd00::1']);
    expect((await sets.inspect('ns/live')).state).toBe('live');
    await sets.close();
  });

  it('gc that takes in an owner recorded meanwhile by someone else removes that one, never the owner live here', async () => {
    const { memory, backend, byHand } = tableWithAHand();
    const sets = await open(backend);
    const refs = await sets.ensure('ns/live', ['10.1.0.1', 'fd00::1']);
    const id = memory.setId(refs.v4);
    await byHand(recordedOwnerOps('as', 'ns/stranger'));
    const report = await sets.gc({ live: [] });
    expect(owners(report.removed)).toEqual(['ns/stranger', 'ns/stranger']);
    expect(report.kept.map((entry) => [entry.name, entry.reason])).toEqual([
      [refs.v4, 'live in this process'],
      [refs.v6, 'live in this process'],
    ]);
    expect(memory.setId(refs.v4)).toBe(id);
    expect(memory.elements(refs.v4)).toEqual(['10.1.0.1']);
    expect(memory.elements(refs.v6)).toEqual(['fd00::1']);
    await sets.close();
  });
});

describe("gc: one prefix's gc never touches another prefix's sets in the same table", () => {
  // 'kas' ends with 'as': a name test that is not anchored at the prefix's start takes one for the other.
  for (const [collector, other] of [['as', 'kas'], ['kas', 'as']] as const) {
    it(`gc of prefix ${collector} removes its own orphan and leaves prefix ${other}'s sets with their addresses`, async () => {
      const memory = new MemoryBackend();
      const leaveOrphan = async (prefix: string, owner: string, address: string) => {
        const writer = await open(memory, prefix);
        const refs = await writer.ensure(owner, [address]);
        await writer.close(); // as if its process had gone
        return refs;
      };
      const mine = await leaveOrphan(collector, 'ns/mine', '10.1.0.1');
      const theirs = await leaveOrphan(other, 'ns/theirs', '10.2.0.1');
      const sets = await open(memory, collector);
      const report = await sets.gc({ live: [] });
      expect(report.removed.map((entry) => entry.name)).toEqual([mine.v4, mine.v6]);
      expect(report.kept).toEqual([]);
      expect(memory.elements(theirs.v4)).toEqual(['10.2.0.1']);
      expect(memory.elements(theirs.v6)).toEqual([]);
      expect(memory.elements(`${other}_owners`)).toHaveLength(2);
      await sets.close();
    });
  }
});

describe("gc: debris under a live owner's name never takes its live set", () => {
  it('one of its two sets deleted by hand: gc (dry run or not) removes neither, and the next add makes the missing one again', async () => {
    const { memory, backend, byHand } = tableWithAHand();
    const sets = await open(backend);
    const refs = await sets.ensure('ns/live', ['10.1.0.1', 'fd00::1']);
    const id = memory.setId(refs.v6);
    await byHand([{ op: 'deleteSet', name: refs.v4 }]);
    for (const dryRun of [true, false]) {
      const report = await sets.gc({ live: [], dryRun });
      expect(report.removed, `dryRun: ${dryRun}`).toEqual([]);
      expect(report.kept.map((entry) => [entry.name, entry.reason]).sort()).toEqual([
        [refs.v4, 'live in this process'],
        [refs.v6, 'live in this process'],
      ]);
    }
    expect(memory.setId(refs.v6)).toBe(id);
    expect(memory.elements(refs.v6)).toEqual(['fd00::1']);
    await sets.add('ns/live', ['10.1.0.2']);
    expect(memory.elements(refs.v4)).toEqual(['10.1.0.1', '10.1.0.2']);
    expect(memory.elements(refs.v6)).toEqual(['fd00::1']);
    await sets.close();
  });
});
