// What gc reports and how it reads the table: the report is what a caller
// (and the CLI's output) learns of what went and what stayed, and why; an
// owner recorded behind the writer's back is taken in before it is judged.
// Deterministic, on the in-memory backend.
import { describe, expect, it } from 'vitest';
import { NetNS } from '../../dist/index.js';
import { AddressSets, type AddrsetBackend } from '../../dist/addrset/index.js';
import { parseKernelText } from '../../dist/addrset/addresses.js';
import { encodeRecord, ownerHash, setName } from '../../dist/addrset/naming.js';
import { ManualClock, MemoryBackend } from '../../dist/testing.js';
import { recordedOwnerOps, tableWithAHand } from '../helpers/addrset-hand.js';

const DELAY = 60_000;

function open(backend: AddrsetBackend, clock = new ManualClock()) {
  return AddressSets.open({ netns: NetNS.current(), table: 't', backend, clock, lockTimeoutMs: 0, deleteDelayMs: DELAY });
}

const namesOf = (owner: string) => [setName('as', 4, ownerHash(owner)), setName('as', 6, ownerHash(owner))];
const rows = (entries: { name: string; reason?: string; deadline?: number }[]) => entries.map(({ name, reason, deadline }) => [name, reason, deadline]);

describe('gc reports', () => {
  it('say whether they were a dry run', async () => {
    const sets = await open(new MemoryBackend());
    expect(await sets.gc({ live: [], dryRun: true })).toEqual({ dryRun: true, removed: [], kept: [] });
    expect(await sets.gc({ live: [] })).toEqual({ dryRun: false, removed: [], kept: [] });
    await sets.close();
  });

  it("give a pending delete's deadline with its reason, and no deadline with any other reason, dry run or not", async () => {
    const clock = new ManualClock();
    const sets = await open(new MemoryBackend(), clock);
    await sets.ensure('ns/going', ['10.0.0.1']);
    await sets.ensure('ns/staying', ['10.0.0.2']);
    await sets.delete('ns/going');
    const deadline = clock.now() + DELAY;
    for (const dryRun of [true, false]) {
      const report = await sets.gc({ live: [], dryRun });
      expect(report.removed).toEqual([]);
      expect(rows(report.kept).sort()).toEqual(
        [
          ...namesOf('ns/going').map((name) => [name, 'pending delete', deadline]),
          ...namesOf('ns/staying').map((name) => [name, 'live in this process', undefined]),
        ].sort(),
      );
      for (const entry of report.kept.filter((e) => e.reason !== 'pending delete')) expect(Object.keys(entry)).not.toContain('deadline');
    }
    await sets.close();
  });

  it('keep, with the reason, an owner whose destroy the kernel refuses (a rule still uses its set)', async () => {
    const memory = new MemoryBackend();
    const writer = await open(memory);
    const refs = await writer.ensure('ns/used', ['10.0.0.1']);
    await writer.close(); // its process gone: an orphan
    memory.reference(refs.v4);
    const sets = await open(memory);
    const report = await sets.gc({ live: [] });
    expect(report.removed).toEqual([]);
    expect(report.kept.map((e) => [e.name, e.reason])).toEqual([
      [refs.v4, `destroy failed: set ${refs.v4} is referenced by a rule`],
      [refs.v6, `destroy failed: set ${refs.v4} is referenced by a rule`],
    ]);
    expect(memory.elements(refs.v4)).toEqual(['10.0.0.1']);
    await sets.close();
  });

  it('count an owner removed once when two gc calls race for it', async () => {
    const memory = new MemoryBackend();
    const writer = await open(memory);
    await writer.ensure('ns/orphan', ['10.0.0.1']);
    await writer.close();
    const sets = await open(memory);
    const reports = await Promise.all([sets.gc({ live: [] }), sets.gc({ live: [] })]);
    expect(reports.flatMap((r) => r.removed.map((e) => e.name)).sort()).toEqual(namesOf('ns/orphan').sort());
    expect(reports.flatMap((r) => r.kept)).toEqual([]);
    await sets.close();
  });
});

describe('gc and debris', () => {
  it('a dry run lists debris no owner here claims as what would go, and gc then removes it: a record without its set, a set without its record', async () => {
    const { memory, backend, byHand } = tableWithAHand();
    const sets = await open(backend);
    const [lonelyRecord] = namesOf('ns/record-only');
    const [, lonelySet] = namesOf('ns/set-only');
    await byHand([
      { op: 'putRecord', registry: 'as_owners', key: lonelyRecord!, comment: encodeRecord('ns/record-only') },
      { op: 'createSet', name: lonelySet!, family: 6 },
    ]);
    const expected = [
      { owner: null, family: 6, name: lonelySet },
      { owner: 'ns/record-only', family: 4, name: lonelyRecord },
    ];
    expect(await sets.gc({ live: [], dryRun: true })).toEqual({ dryRun: true, removed: expected, kept: [] });
    const report = await sets.gc({ live: [] });
    expect(report.kept).toEqual([]);
    expect(report.removed).toEqual(expect.arrayContaining(expected));
    expect(memory.elements('as_owners')).toEqual([]);
    expect((await sets.list()).map((row) => row.name)).toEqual([]);
    await sets.close();
  });

  it('keeps debris whose removal the kernel refuses, saying why, and leaves it as it was', async () => {
    const { memory, backend, byHand } = tableWithAHand();
    const sets = await open(backend);
    const [lonelySet] = namesOf('ns/set-only');
    await byHand([{ op: 'createSet', name: lonelySet!, family: 4 }]);
    memory.reference(lonelySet!);
    const report = await sets.gc({ live: [] });
    expect(report).toEqual({ dryRun: false, removed: [], kept: [{ owner: null, family: 4, name: lonelySet, reason: `destroy failed: set ${lonelySet} is referenced by a rule` }] });
    memory.unreference(lonelySet!);
    expect((await sets.gc({ live: [] })).removed.map((e) => e.name)).toEqual([lonelySet]);
    await sets.close();
  });
});

describe('gc reads the table', () => {
  it('once, without elements, when it knows every owner there', async () => {
    const { backend, reads } = tableWithAHand();
    const sets = await open(backend);
    await sets.ensure('ns/live', ['10.0.0.1']);
    reads.length = 0;
    await sets.gc({ live: [] });
    expect(reads).toEqual([false]);
    await sets.close();
  });

  it('again with elements when an owner was recorded behind its back, takes it in with its addresses, and judges it', async () => {
    const { memory, backend, byHand, reads } = tableWithAHand();
    const sets = await open(backend);
    const [v4] = namesOf('ns/stranger');
    await byHand([...recordedOwnerOps('as', 'ns/stranger'), { op: 'addElements', name: v4!, elements: [parseKernelText('10.9.0.1')!] }]);
    reads.length = 0;
    const report = await sets.gc({ live: ['ns/stranger'] });
    expect(reads).toEqual([false, true]);
    expect(report.kept.map((e) => [e.owner, e.reason])).toEqual([
      ['ns/stranger', 'live'],
      ['ns/stranger', 'live'],
    ]);
    // Taken in with its addresses: made live here, it keeps them, and a prefix over one is refused as an overlap.
    await sets.ensure('ns/stranger');
    expect(memory.elements(v4!)).toEqual(['10.9.0.1']);
    await expect(sets.add('ns/stranger', ['10.9.0.0/24'])).rejects.toMatchObject({ code: 'ERR_NETNS_ADDRSET_OVERLAP' });
    await sets.close();
  });

  it('an owner recorded behind its back, with no owner of its own there, is taken in and removed', async () => {
    const { memory, backend, byHand } = tableWithAHand();
    const sets = await open(backend);
    await byHand(recordedOwnerOps('as', 'ns/stranger'));
    const report = await sets.gc({ live: [] });
    expect(report.removed.map((e) => e.name).sort()).toEqual(namesOf('ns/stranger').sort());
    expect(memory.elements('as_owners')).toEqual([]);
    await sets.close();
  });
});
