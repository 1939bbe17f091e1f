// The ways address sets used to destroy sets a user still held, each as a
// deterministic regression on the in-memory backend (the same paths run on
// real nftables in test/root/addrset-safety.test.ts).
import { describe, expect, it } from 'vitest';
import { NetNS } from '../../dist/index.js';
import { AddressSets } from '../../dist/addrset/index.js';
import { ManualClock, MemoryBackend } from '../../dist/testing.js';

const DAY = 24 * 3600 * 1000;

function open(backend: MemoryBackend, clock: ManualClock, extra: Partial<Parameters<typeof AddressSets.open>[0]> = {}) {
  return AddressSets.open({ netns: NetNS.current(), table: 't', backend, clock, lockTimeoutMs: 0, ...extra });
}

describe('address sets keep what their owners hold', () => {
  it("inspect of an owner whose set names collide with another's shows none of the other's addresses", async () => {
    // 'o811428' and 'o3529814' hash to the same set names under prefix 'as'
    const sets = await open(new MemoryBackend(), new ManualClock());
    const refs = await sets.ensure('o811428', ['10.0.0.1']);
    await expect(sets.ensure('o3529814', ['10.0.0.2'])).rejects.toMatchObject({ code: 'ERR_NETNS_ADDRSET_NAME_COLLISION' });
    const other = await sets.inspect('o3529814');
    expect(other).toMatchObject({ state: 'absent', v4: { name: refs.v4, elements: [] }, v6: { elements: [] } });
    expect((await sets.inspect('o811428')).v4.elements).toEqual(['10.0.0.1']);
    await sets.close();
  });

  it('honours a delete delay longer than a Node timer can hold (30 days)', async () => {
    const backend = new MemoryBackend();
    const clock = new ManualClock();
    const sets = await open(backend, clock, { deleteDelayMs: 30 * DAY });
    const refs = await sets.ensure('long', ['10.0.0.1']);
    await sets.delete('long');
    await clock.advance(29 * DAY, () => sets.settled());
    expect(backend.elements(refs.v4)).toEqual([]);
    expect(sets.stats()).toMatchObject({ pending: 1, destroyed: 0 });
    await clock.advance(DAY, () => sets.settled());
    expect(backend.elements(refs.v4)).toBeUndefined();
  });

  it('a restarted process keeps an adopted deadline 30 days ahead', async () => {
    const backend = new MemoryBackend();
    const clock = new ManualClock();
    const first = await open(backend, clock, { deleteDelayMs: 30 * DAY });
    const refs = await first.ensure('long', ['10.0.0.1']);
    await first.delete('long');
    await first.close();
    const second = await open(backend, clock);
    await clock.advance(30 * DAY - 1, () => second.settled());
    expect(backend.elements(refs.v4)).toEqual([]);
    await clock.advance(1, () => second.settled());
    expect(backend.elements(refs.v4)).toBeUndefined();
  });

  it('gc beside ensures of new owners never removes one of them (set identity kept)', async () => {
    const backend = new MemoryBackend();
    const clock = new ManualClock();
    const sets = await open(backend, clock);
    const ensured = new Map<string, { v4: string; v6: string }>();
    const gcs: Promise<unknown>[] = [];
    for (let i = 0; i < 200; i++) {
      const owner = `pod-${i}`;
      void sets.ensure(owner, [`10.1.${i >> 8}.${i & 255}`]).then((refs) => ensured.set(owner, refs));
      if (i % 5 === 0) gcs.push(sets.gc({ live: [] }));
      if (i % 7 === 0) await Promise.resolve();
    }
    await Promise.all(gcs);
    await sets.settled();
    expect(ensured.size).toBe(200);
    const ids = new Map([...ensured].map(([owner, refs]) => [owner, backend.setId(refs.v4)]));
    for (const [owner, refs] of ensured) {
      expect(backend.elements(refs.v4), owner).toHaveLength(1);
      await sets.add(owner, ['10.9.9.9']);
    }
    for (const [owner, refs] of ensured) expect(backend.setId(refs.v4), owner).toBe(ids.get(owner));
    expect(sets.stats()).toMatchObject({ live: 200, destroyed: 0 });
  });

  it('gc never collects an owner live in this process, whatever the live list says', async () => {
    const backend = new MemoryBackend();
    const sets = await open(backend, new ManualClock());
    const refs = await sets.ensure('mine', ['10.0.0.1']);
    const id = backend.setId(refs.v4);
    const dry = await sets.gc({ live: [], dryRun: true });
    const real = await sets.gc({ live: [] });
    for (const report of [dry, real]) {
      expect(report.removed).toEqual([]);
      expect(report.kept.map((entry) => entry.reason)).toEqual(['live in this process', 'live in this process']);
    }
    expect(backend.setId(refs.v4)).toBe(id);
  });

  it('gc needs an explicit live list', async () => {
    const sets = await open(new MemoryBackend(), new ManualClock());
    // @ts-expect-error: the argument is required
    await expect(sets.gc()).rejects.toMatchObject({ code: 'ERR_NETNS_ADDRSET_LIVE_REQUIRED' });
    // @ts-expect-error: live is required
    await expect(sets.gc({ dryRun: true })).rejects.toMatchObject({ code: 'ERR_NETNS_ADDRSET_LIVE_REQUIRED' });
    await expect(sets.gc({ live: 'one-owner' })).rejects.toMatchObject({ code: 'ERR_NETNS_ADDRSET_LIVE_REQUIRED' });
  });

  it('a polluted Object.prototype supplies no live list, clock or prefix', async () => {
    const backend = new MemoryBackend();
    const clock = new ManualClock();
    const sets = await AddressSets.open({ netns: NetNS.current(), table: 't', backend, clock, lockTimeoutMs: 0, deleteDelayMs: DAY });
    const polluted = Object.prototype as Record<string, unknown>;
    try {
      polluted.live = [];
      polluted.clock = { now: () => Number.MAX_SAFE_INTEGER };
      polluted.prefix = 'zz';
      await sets.ensure('held', ['10.0.0.1']);
      await sets.delete('held'); // pending for a day
      await expect(sets.gc({} as never)).rejects.toMatchObject({ code: 'ERR_NETNS_ADDRSET_LIVE_REQUIRED' });
      const second = await open(new MemoryBackend(), new ManualClock(), { table: 'u' });
      expect(second.prefix).toBe('as');
      await second.close();
    } finally {
      for (const key of ['live', 'clock', 'prefix']) delete polluted[key];
    }
    expect((await sets.list()).map((row) => row.state)).toEqual(['pending', 'pending']);
    await sets.close();
  });

  it('one writer per table: a second is refused while the first lives, and takes over after it died', async () => {
    const backend = new MemoryBackend();
    const clock = new ManualClock();
    const first = await open(backend, clock);
    const refs = await first.ensure('a-owner', ['10.0.0.1']);
    await expect(open(backend, clock)).rejects.toMatchObject({ code: 'ERR_NETNS_ADDRSET_LOCKED' });
    const reader = await open(backend, clock, { readOnly: true });
    expect((await reader.list()).map((row) => row.owner)).toEqual(['a-owner', 'a-owner']);
    await expect(reader.gc({ live: [] })).rejects.toMatchObject({ code: 'ERR_NETNS_ADDRSET_READ_ONLY' });
    await expect(reader.delete('a-owner')).rejects.toMatchObject({ code: 'ERR_NETNS_ADDRSET_READ_ONLY' });
    backend.crashWriter();
    const second = await open(backend, clock);
    await second.ensure('a-owner');
    expect(backend.elements(refs.v4)).toEqual(['10.0.0.1']);
  });

  it('a read-only instance never destroys, even a set whose deadline has passed', async () => {
    const backend = new MemoryBackend();
    const clock = new ManualClock();
    const writer = await open(backend, clock, { deleteDelayMs: 1_000 });
    const refs = await writer.ensure('gone', ['10.0.0.1']);
    await writer.delete('gone');
    await writer.close();
    await clock.advance(5_000);
    const reader = await open(backend, clock, { readOnly: true });
    await clock.advance(5_000, () => reader.settled());
    expect(backend.elements(refs.v4)).toEqual([]);
    expect((await reader.inspect('gone')).state).toBe('pending');
  });

  for (const lands of [true, false]) {
    it(`a writer killed with a replace in flight: the next one sees all or nothing of it (lands: ${lands})`, async () => {
      const backend = new MemoryBackend();
      const clock = new ManualClock();
      const before = ['10.0.0.1', '10.0.0.2'];
      const after = ['10.0.0.3'];
      const first = await open(backend, clock);
      const refs = await first.ensure('o', before);
      const sent = backend.nextSend();
      void first.replace('o', after);
      await sent;
      backend.crashWriter({ lands }); // the writer dies before the kernel answered
      const second = await open(backend, clock);
      expect(backend.elements(refs.v4)).toEqual(lands ? after : before);
      await second.ensure('o', ['10.0.0.4']);
      await second.add('o', ['10.0.0.5']);
      expect(backend.elements(refs.v4)).toEqual(['10.0.0.4', '10.0.0.5']);
    });
  }

  it('replace of a big set costs the size of its input: a flush and the new content in one transaction', async () => {
    const backend = new MemoryBackend();
    const sets = await open(backend, new ManualClock());
    const addresses = (from: number, count: number) => Array.from({ length: count }, (_, i) => `10.${(from + i) >> 16}.${((from + i) >> 8) & 255}.${(from + i) & 255}`);
    const refs = await sets.ensure('big', addresses(0, 16_000));
    await sets.replace('big', addresses(8_000, 16_000));
    const ops = backend.log.at(-1)!;
    expect(ops.map((op) => op.op)).toEqual(['flushSet', 'addElements']);
    expect(backend.elements(refs.v4)).toHaveLength(16_000);
  });

  it('refuses delays a record cannot hold, and options of the wrong kind, before locking anything', async () => {
    const backend = new MemoryBackend();
    const clock = new ManualClock();
    const bad: Record<string, unknown>[] = [
      { deleteDelayMs: 1e20 }, // its deadline would not fit the record: a restart could not read it
      { deleteDelayMs: '5' },
      { deleteDelayMs: Number.NaN },
      { deleteDelayMs: -1 },
      { retryIntervalMs: Infinity },
      { lockTimeoutMs: Number.NaN },
      { createTable: false }, // gone: readOnly replaced it
      { readOnly: 'false' }, // a string from the environment: not a reader by accident
      { readOnly: 1 },
    ];
    for (const options of bad) {
      await expect(open(backend, clock, options as object), JSON.stringify(options)).rejects.toMatchObject({ code: 'ERR_NETNS_ADDRSET_INVALID_OPTION' });
    }
    expect(backend.log).toEqual([]);
    const century = 100 * 365 * DAY;
    const first = await open(backend, clock, { deleteDelayMs: century }); // the lock was left free
    const refs = await first.ensure('far', ['10.0.0.1']);
    await first.delete('far');
    backend.crashWriter();
    const second = await open(backend, clock);
    expect(await second.inspect('far')).toMatchObject({ state: 'pending', deadline: clock.now() + century });
    expect(backend.elements(refs.v4)).toEqual([]);
  });

  it('close() beside a pending ensure and gc: both settle, nothing is sent after the lock is given up', async () => {
    const backend = new MemoryBackend();
    const clock = new ManualClock();
    const sets = await open(backend, clock);
    await sets.ensure('old', ['10.0.0.1']);
    await sets.delete('old');
    await clock.advance(20_000); // the destroy is queued too
    const ensuring = sets.ensure('new', ['10.0.0.2']);
    const collecting = sets.gc({ live: [] });
    await sets.close();
    const refs = await ensuring;
    const report = await collecting;
    expect(report.kept.filter((entry) => entry.reason?.startsWith('destroy failed'))).toEqual([]);
    const sent = backend.log.length;
    await new Promise((resolve) => setImmediate(resolve));
    expect(backend.log.length).toBe(sent);
    await expect(sets.ensure('late')).rejects.toMatchObject({ code: 'ERR_NETNS_ADDRSET_CLOSED' });
    const next = await open(backend, clock);
    expect(backend.elements(refs.v4)).toEqual(['10.0.0.2']);
    await next.close();
  });
});
