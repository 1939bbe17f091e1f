// AddressSets' own edges, on the in-memory backend: each refused option and
// call with its exact message, a backend the caller gave left to the caller
// (never closed by us, even when open fails), a reader's counters and waits,
// what destroyDue counts, when deleteTableIfEmpty may drop the table, and
// what a reader sees of owners recorded after it opened. Found by the
// mutation pass over src/addrset/manager.ts (issue 34).
import { describe, expect, it, vi } from 'vitest';
import { NetNS } from '../../dist/index.js';
import { AddressSets, MAX_DELETE_DELAY_MS, type AddrsetBackend, type AddressSetsOptions } from '../../dist/addrset/index.js';
import { ManualClock, MemoryBackend } from '../../dist/testing.js';

const DELAY = 20_000;
const base = (backend: AddrsetBackend, clock = new ManualClock()): AddressSetsOptions => ({ netns: NetNS.current(), table: 'policy', backend, clock, deleteDelayMs: DELAY });

/** The memory backend behind an object of the caller's, with the optional parts a test asks for. */
function given(memory = new MemoryBackend(), extra: Partial<AddrsetBackend> = {}) {
  const backend: AddrsetBackend = {
    apply: (ops, lock) => memory.apply(ops, lock),
    read: (options) => memory.read(options),
    lock: (options) => memory.lock(options),
    ...extra,
  };
  return { memory, backend };
}

describe('AddressSets.open refuses bad options by name, before opening anything', () => {
  const refused = (options: object, code: string, message: string) =>
    expect(AddressSets.open({ ...base(new MemoryBackend()), ...options } as AddressSetsOptions)).rejects.toMatchObject({ code, message });

  it('each option with its rule', async () => {
    await refused({ table: 'bad-name' }, 'ERR_NETNS_ADDRSET_INVALID_OPTION', 'table must match /^[A-Za-z_][A-Za-z0-9_]{0,63}$/');
    await refused({ table: undefined }, 'ERR_NETNS_ADDRSET_INVALID_OPTION', 'table must match /^[A-Za-z_][A-Za-z0-9_]{0,63}$/');
    await refused({ netns: 7 }, 'ERR_NETNS_INVALID_ARG', 'netns must be a NetNS, a name or a path');
    await refused({ createTable: true }, 'ERR_NETNS_ADDRSET_INVALID_OPTION', 'createTable is gone: pass { readOnly: true } to only look');
    await refused({ readOnly: 'false' }, 'ERR_NETNS_ADDRSET_INVALID_OPTION', 'readOnly must be true or false, got "false"');
    await refused({ deleteDelayMs: -1 }, 'ERR_NETNS_ADDRSET_INVALID_OPTION', `deleteDelayMs must be a number from 0 to ${MAX_DELETE_DELAY_MS}`);
    await refused({ lockTimeoutMs: Number.NaN }, 'ERR_NETNS_ADDRSET_INVALID_OPTION', `lockTimeoutMs must be a number from 0 to ${Number.MAX_SAFE_INTEGER}`);
  });

  it('a backend that is neither a name nor an object with apply, read and lock (a function carrying them included)', async () => {
    const message = "backend must be 'netlink' or 'nft', or an object with apply, read and lock";
    const memory = new MemoryBackend();
    const fn = Object.assign(() => {}, { apply: memory.apply.bind(memory), read: memory.read.bind(memory), lock: memory.lock.bind(memory) });
    for (const backend of ['memory', null, { apply() {}, read() {} }, fn]) {
      await expect(AddressSets.open({ ...base(memory), backend } as never)).rejects.toMatchObject({ code: 'ERR_NETNS_ADDRSET_INVALID_OPTION', message });
    }
    expect(memory.log).toEqual([]);
  });
});

describe('a backend the caller gave stays the caller\'s', () => {
  it('is not closed by close()', async () => {
    const close = vi.fn();
    const sets = await AddressSets.open(base(given(new MemoryBackend(), { close }).backend));
    await sets.ensure('a', ['10.0.0.1']);
    await sets.close();
    expect(close).not.toHaveBeenCalled();
  });

  it('is not closed when open fails after it was taken', async () => {
    const close = vi.fn();
    const lock = () => Promise.reject(Object.assign(new Error('held'), { code: 'ERR_NETNS_ADDRSET_LOCKED' }));
    await expect(AddressSets.open(base(given(new MemoryBackend(), { close, lock }).backend))).rejects.toMatchObject({ code: 'ERR_NETNS_ADDRSET_LOCKED' });
    expect(close).not.toHaveBeenCalled();
  });
});

describe('calls refused with their reason', () => {
  it('an owner not live here, a closed instance, a reader asked to write, gc without its live list', async () => {
    const memory = new MemoryBackend();
    const sets = await AddressSets.open(base(memory));
    await expect(sets.add('nobody', ['10.0.0.1'])).rejects.toMatchObject({ code: 'ERR_NETNS_ADDRSET_UNKNOWN_OWNER', message: 'owner "nobody" is not live here: ensure() it first' });
    const required = { code: 'ERR_NETNS_ADDRSET_LIVE_REQUIRED', message: 'gc needs the live owners ({ live: [...] }); [] means none besides those live in this process' };
    for (const live of [undefined, null, 'ns/a', { owner: 'ns/a' }, 7]) {
      await expect(sets.gc({ live } as never), String(live)).rejects.toMatchObject(required);
    }
    await sets.close();
    await expect(sets.ensure('a', [])).rejects.toMatchObject({ code: 'ERR_NETNS_ADDRSET_CLOSED', message: 'this AddressSets has been closed' });
    const reader = await AddressSets.open({ ...base(memory), readOnly: true });
    await expect(reader.ensure('a', [])).rejects.toMatchObject({ code: 'ERR_NETNS_ADDRSET_READ_ONLY', message: 'this AddressSets was opened readOnly: it changes nothing' });
    await reader.close();
  });
});

describe('a reader', () => {
  it('counts no transactions and has nothing to wait for', async () => {
    const memory = new MemoryBackend();
    const writer = await AddressSets.open(base(memory));
    await writer.ensure('a', ['10.0.0.1']);
    const reader = await AddressSets.open({ ...base(memory), readOnly: true });
    await reader.settled();
    expect(reader.stats()).toEqual({ live: 0, pending: 0, orphan: 1, transactions: 0, failedTransactions: 0, destroyed: 0, destroyFailures: 0 });
    await reader.close();
    await writer.close();
  });

  it('lists and inspects owners recorded after it opened, by name or by hash alone', async () => {
    const memory = new MemoryBackend();
    const writer = await AddressSets.open(base(memory));
    const reader = await AddressSets.open({ ...base(memory), readOnly: true });
    const long = `ns/${'x'.repeat(400)}`; // too long to record: the kernel holds its hash only
    await writer.ensure('ns/new', ['10.0.0.1']);
    await writer.ensure(long, ['10.0.0.2']);
    const listed = await reader.list();
    expect(listed.map((row) => [row.owner, row.family, row.state, row.elements]).sort()).toEqual(
      [
        ['ns/new', 4, 'orphan', 1],
        ['ns/new', 6, 'orphan', 0],
        [null, 4, 'orphan', 1],
        [null, 6, 'orphan', 0],
      ].sort(),
    );
    expect(await reader.inspect(long)).toMatchObject({ owner: long, state: 'orphan', v4: { elements: ['10.0.0.2'] }, v6: { elements: [] } });
    await reader.close();
    await writer.close();
  });

  it('inspects an owner nobody holds as absent, with no elements', async () => {
    const sets = await AddressSets.open(base(new MemoryBackend()));
    expect(await sets.inspect('nobody')).toMatchObject({ owner: 'nobody', state: 'absent', v4: { elements: [] }, v6: { elements: [] } });
    await sets.close();
  });
});

describe('destroyDue', () => {
  it('counts only the owners whose sets went: one ensured again in the same tick is not counted', async () => {
    const memory = new MemoryBackend();
    const clock = new ManualClock();
    const first = await AddressSets.open(base(memory, clock));
    await first.ensure('back', ['10.0.0.1']);
    await first.delete('back');
    await first.close();
    await clock.advance(DELAY);
    const second = await AddressSets.open(base(memory, clock));
    const ensured = second.ensure('back', ['10.0.0.2']); // queued before the destroy
    expect(await second.destroyDue()).toBe(0);
    const refs = await ensured;
    expect(memory.elements(refs.v4)).toEqual(['10.0.0.2']);
    await second.close();
  });
});

describe('deleteTableIfEmpty', () => {
  it('is false, dropping nothing, with a backend that cannot drop tables', async () => {
    const memory = new MemoryBackend();
    const sets = await AddressSets.open(base(memory));
    expect(await sets.deleteTableIfEmpty()).toBe(false);
    await sets.close();
  });

  it('asks the backend only when no owner is live or pending here', async () => {
    const removeTableIfEmpty = vi.fn(async () => true);
    const clock = new ManualClock();
    const sets = await AddressSets.open(base(given(new MemoryBackend(), { removeTableIfEmpty }).backend, clock));
    await sets.ensure('a', ['10.0.0.1']);
    expect(await sets.deleteTableIfEmpty()).toBe(false);
    await sets.delete('a');
    expect(await sets.deleteTableIfEmpty()).toBe(false);
    expect(removeTableIfEmpty).not.toHaveBeenCalled();
    await clock.advance(DELAY, () => sets.settled());
    expect(await sets.deleteTableIfEmpty()).toBe(true);
    expect(removeTableIfEmpty).toHaveBeenCalledTimes(1);
    await sets.close();
  });
});
