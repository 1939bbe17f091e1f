// SharedAddressSets over the in-memory backend (which models the writer lock
// and counts transactions): calls at once share one writer and its
// transactions, the last to leave gives the lock back, a look that finds no
// table creates nothing, one call's failure is its own, and a lease held too
// long lets a writer waiting elsewhere in first (the hold measured on a
// stand-in for the monotonic clock, a lease opened as the last one closed
// continuing its hold); a table left with a delete pending is opened again at
// its deadline (on a manual clock) with no call.
import { readdirSync, readlinkSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it, vi, type MockInstance } from 'vitest';
import { NetNS } from '../../dist/index.js';
import { AddressSets, SharedAddressSets } from '../../dist/addrset/index.js';
import { performance as monotonic } from '../../dist/addrset/clock.js';
import { ManualClock, MemoryBackend } from '../../dist/testing.js';

/** A backend whose lock() and table deletions are counted (the in-memory one deletes no table: it keeps it). */
function countingBackend() {
  const backend = new MemoryBackend() as MemoryBackend & { removeTableIfEmpty?: () => Promise<boolean> };
  const lock = backend.lock.bind(backend);
  const counts = { locks: 0, tableDeletes: 0 };
  backend.lock = (options) => {
    counts.locks++;
    return lock(options);
  };
  backend.removeTableIfEmpty = async () => {
    counts.tableDeletes++;
    return false;
  };
  return { backend, counts };
}

/** Resolves once the lock is free, by taking it without waiting (rejects if it is held); not counted. */
async function lockIsFree(backend: MemoryBackend): Promise<void> {
  (await MemoryBackend.prototype.lock.call(backend, { timeoutMs: 0 })).release();
}

/** Resolves once `done()` holds: a timer's run is started by the clock, and has no promise to await. */
function until(done: () => boolean): Promise<void> {
  return new Promise((resolve) => {
    const check = () => (done() ? resolve() : setImmediate(check));
    check();
  });
}

/** This process's descriptors on its own network namespace. */
function namespaceHandles(): number {
  const target = readlinkSync('/proc/self/ns/net');
  return readdirSync('/proc/self/fd').filter((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`) === target;
    } catch {
      return false; // the one readdir used, closed since
    }
  }).length;
}

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe('SharedAddressSets (in-memory backend)', () => {
  const netns = NetNS.current();
  const options = (backend: MemoryBackend) => ({ netns, table: 'shared', deleteDelayMs: 0, backend });

  it('calls at once share one writer (one lock) and its transactions; the last to leave releases the lock', async () => {
    const { backend, counts } = countingBackend();
    const shared = new SharedAddressSets();
    const owners = Array.from({ length: 20 }, (_, i) => `pod-${i}`);
    const refs = await Promise.all(owners.map((owner, i) => shared.use(options(backend), (sets) => sets.ensure(owner, [`10.9.0.${i + 1}`]))));
    expect(counts.locks).toBe(1);
    // The table and registry, then the ensures of one turn together: far fewer transactions than calls.
    expect(backend.transactions).toBeLessThanOrEqual(3);
    refs.forEach((ref, i) => expect(backend.elements(ref.v4)).toEqual([`10.9.0.${i + 1}`]));
    expect(shared.size).toBe(0);
    await lockIsFree(backend);
  });

  it('calls one after another each open and close the writer', async () => {
    const { backend, counts } = countingBackend();
    const shared = new SharedAddressSets();
    await shared.use(options(backend), (sets) => sets.ensure('a', ['10.9.1.1']));
    await lockIsFree(backend);
    await shared.use(options(backend), (sets) => sets.ensure('b', ['10.9.1.2']));
    expect(counts.locks).toBe(2);
  });

  it('onlyExisting on a missing table runs nothing and creates nothing; with deleteTableIfEmpty the last to leave deletes the emptied table', async () => {
    const { backend, counts } = countingBackend();
    const shared = new SharedAddressSets();
    let ran = false;
    expect(await shared.use(options(backend), async () => (ran = true), { onlyExisting: true })).toBeUndefined();
    expect(ran).toBe(false);
    expect(backend.setNames()).toEqual([]);

    await shared.use(options(backend), (sets) => sets.ensure('a', ['10.9.2.1']));
    const gate = deferred();
    // Two DELs at once: the first leaves while the second still holds the writer; the table goes only when both are done.
    const first = shared.use(options(backend), (sets) => sets.delete('a').then(() => sets.destroyDue()), { onlyExisting: true, deleteTableIfEmpty: true });
    const second = shared.use(options(backend), async (sets) => {
      await gate.promise;
      return sets.stats().pending;
    }, { onlyExisting: true, deleteTableIfEmpty: true });
    await first;
    expect(counts.tableDeletes).toBe(0); // the second is still in
    gate.resolve();
    await second;
    expect(counts.tableDeletes).toBe(1);
    expect(backend.setNames()).toEqual(['as_owners']); // the owner's sets destroyed (deleteDelayMs 0), the registry empty
    await lockIsFree(backend);
  });

  it('calls at once that join a look finding no table: the looks get nothing, a writer after them makes the table', async () => {
    const { backend } = countingBackend();
    const shared = new SharedAddressSets();
    let ran = 0;
    const calls = [
      shared.use(options(backend), async () => ran++, { onlyExisting: true }),
      shared.use(options(backend), async () => ran++, { onlyExisting: true }),
      shared.use(options(backend), (sets) => sets.ensure('a', ['10.9.6.1'])),
    ];
    const [first, second, refs] = await Promise.all(calls);
    expect([first, second, ran]).toEqual([undefined, undefined, 0]);
    expect(backend.elements((refs as { v4: string }).v4)).toEqual(['10.9.6.1']);
    expect(shared.size).toBe(0);
    await lockIsFree(backend);
  });

  it('calls at once that join an open that fails all fail with its error, and leave nothing held', async () => {
    const { backend } = countingBackend();
    const shared = new SharedAddressSets();
    const elsewhere = await backend.lock({ timeoutMs: 0 }); // another writer holds the table
    const calls = Array.from({ length: 3 }, () => shared.use({ ...options(backend), lockTimeoutMs: 0 }, async () => 'ran'));
    const outcomes = await Promise.allSettled(calls);
    expect(outcomes.map((outcome) => (outcome.status === 'rejected' ? (outcome.reason as { code: string }).code : outcome.value))).toEqual(Array(3).fill('ERR_NETNS_ADDRSET_LOCKED'));
    expect(shared.size).toBe(0);
    elsewhere.release();
    expect(await shared.use(options(backend), async () => 'ran')).toBe('ran');
  });

  it("one call's failure is its own: the others land, and the writer is still released", async () => {
    const { backend } = countingBackend();
    const shared = new SharedAddressSets();
    const calls = [
      shared.use(options(backend), (sets) => sets.ensure('good-1', ['10.9.3.1'])),
      shared.use(options(backend), (sets) => sets.ensure('bad', ['not an address'])),
      shared.use(options(backend), async () => {
        throw new Error('the handler failed');
      }),
      shared.use(options(backend), (sets) => sets.ensure('good-2', ['10.9.3.2'])),
    ];
    const outcomes = await Promise.allSettled(calls);
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected', 'rejected', 'fulfilled']);
    expect(shared.size).toBe(0);
    await lockIsFree(backend);
  });

  it('a lease held past maxHoldMs takes no one new: a writer waiting elsewhere gets the lock before the next call', async () => {
    const { backend } = countingBackend();
    const shared = new SharedAddressSets({ maxHoldMs: 0, handoffMs: 0 });
    const order: string[] = [];
    const gate = deferred();
    const long = shared.use(options(backend), async (sets) => {
      await sets.ensure('long', ['10.9.4.1']);
      await gate.promise;
    });
    await new Promise((resolve) => setImmediate(resolve));
    // Another process's writer queues for the lock, then a new call arrives: it must not join the old lease.
    const elsewhere = AddressSets.open(options(backend)).then(async (sets) => {
      order.push('elsewhere');
      await sets.close();
    });
    const next = shared.use(options(backend), async () => void order.push('next'));
    gate.resolve();
    await Promise.all([long, elsewhere, next]);
    expect(order).toEqual(['elsewhere', 'next']);
  });

  describe("a lease's hold, on a stand-in for the monotonic clock", () => {
    let now = 0;
    const HANDOFF_MS = 7;
    let timers: MockInstance<typeof setTimeout>;
    beforeEach(() => {
      now = 0;
      vi.spyOn(monotonic, 'now').mockImplementation(() => now);
      timers = vi.spyOn(globalThis, 'setTimeout');
    });
    /** The hand-off waits so far: an open that follows a hold of maxHoldMs or more waits handoffMs first. */
    const handoffs = () => timers.mock.calls.filter(([, ms]) => ms === HANDOFF_MS).length;
    afterEach(() => vi.restoreAllMocks());

    /** A call that notes its start, holds the writer until `release`, then notes its end. */
    function holder(shared: SharedAddressSets, backend: MemoryBackend, name: string, order: string[], share = {}) {
      const gate = deferred();
      const done = shared.use(options(backend), async () => {
        order.push(`${name} in`);
        await gate.promise;
        order.push(`${name} out`);
      }, share);
      return { release: gate.resolve, done };
    }
    const note = (shared: SharedAddressSets, backend: MemoryBackend, name: string, order: string[]) => shared.use(options(backend), async () => void order.push(name));
    const settle = () => new Promise((resolve) => setImmediate(resolve));
    /** A backend whose lease close waits in its table check until `closing` resolves; `closeBegun()` says it is there. */
    function closeWaits() {
      const { backend, counts } = countingBackend();
      const closing = deferred();
      let begun = false;
      backend.removeTableIfEmpty = () => {
        begun = true;
        return closing.promise.then(() => false);
      };
      return { backend, counts, closing, closeBegun: () => begun };
    }
    /** A lease taken at time 0 by a call that holds it: the writer, its counts, the order of events. */
    async function firstHolding(handoffMs = HANDOFF_MS) {
      const { backend, counts } = countingBackend();
      const shared = new SharedAddressSets({ maxHoldMs: 1000, handoffMs });
      const order: string[] = [];
      const first = holder(shared, backend, 'first', order);
      await until(() => order.includes('first in'));
      return { backend, counts, shared, order, first };
    }

    it('takes new users until maxHoldMs has passed since it took the lock, and none from then', async () => {
      const { backend, counts, shared, order, first } = await firstHolding();
      now = 999; // a call reads the clock as it is made
      const joined = note(shared, backend, 'joined', order);
      await settle(); // joining takes no more than this turn
      expect(order).toContain('joined');
      now = 1000;
      const later = note(shared, backend, 'later', order);
      await settle();
      first.release();
      await Promise.all([first.done, joined, later]);
      expect(order).toEqual(['first in', 'joined', 'first out', 'later']);
      expect(counts.locks).toBe(2);
      expect(handoffs()).toBe(1); // the next open after a full hold waits, so a writer elsewhere may go first
    });

    it('lets every call that waited on a lease too old share the one opened after it', async () => {
      const { backend, counts, shared, order, first } = await firstHolding();
      now = 1000;
      const waiting = ['b', 'c', 'd'].map((name) => note(shared, backend, name, order));
      await settle();
      first.release();
      await Promise.all([first.done, ...waiting]);
      expect(order.slice(0, 2)).toEqual(['first in', 'first out']);
      expect(counts.locks).toBe(2);
      expect(handoffs()).toBe(1);
    });

    it('counts its hold from the lease before it when it opened as that one closed, so the lock is not kept past maxHoldMs', async () => {
      const { backend, counts, closing, closeBegun } = closeWaits();
      const shared = new SharedAddressSets({ maxHoldMs: 1000, handoffMs: HANDOFF_MS });
      const order: string[] = [];
      const first = holder(shared, backend, 'first', order, { deleteTableIfEmpty: true });
      await until(() => order.includes('first in'));
      first.release();
      await until(closeBegun); // its user gone, the lease is closing
      now = 500;
      const second = holder(shared, backend, 'second', order);
      closing.resolve();
      await until(() => order.includes('second in'));
      expect(handoffs()).toBe(0); // a hold of 500 ms continued: no wait
      now = 999; // 999 ms since the first lease took the lock: joins
      const joined = note(shared, backend, 'joined', order);
      await settle(); // joining takes no more than this turn
      expect(order).toContain('joined');
      now = 1000; // 1000 ms since then, 500 since the second opened: joins no more
      const later = note(shared, backend, 'later', order);
      await settle();
      second.release();
      await Promise.all([first.done, second.done, joined, later]);
      expect(order).toEqual(['first in', 'first out', 'second in', 'joined', 'second out', 'later']);
      expect(counts.locks).toBe(3);
      expect(handoffs()).toBe(1);
    });

    it('starts a new hold after a lease that took no one new for being too old', async () => {
      const { backend, shared, order, first } = await firstHolding();
      now = 1000;
      const second = holder(shared, backend, 'second', order); // waits for the first, then opens anew
      await settle();
      first.release();
      await until(() => order.includes('second in'));
      now = 1999; // 999 ms into the second's own hold
      const joined = note(shared, backend, 'joined', order);
      await settle(); // joining takes no more than this turn
      expect(order).toContain('joined');
      second.release();
      await Promise.all([first.done, second.done, joined]);
      expect(order).toEqual(['first in', 'first out', 'second in', 'joined', 'second out']);
      expect(handoffs()).toBe(1);
    });

    it("lets a call nested in a call's work join its lease however old, where waiting for it to close would wait forever", async () => {
      const { backend, counts } = countingBackend();
      const shared = new SharedAddressSets({ maxHoldMs: 1000, handoffMs: HANDOFF_MS });
      const refs = await shared.use(options(backend), async (sets) => {
        await sets.ensure('outer', ['10.9.8.1']);
        now = 5000; // the outer call has held the lock past maxHoldMs
        return shared.use(options(backend), (inner) => inner.ensure('inner', ['10.9.8.2']));
      });
      expect(backend.elements(refs.v4)).toEqual(['10.9.8.2']);
      expect(counts.locks).toBe(1);
      expect(shared.size).toBe(0);
      await lockIsFree(backend);
    });

    it("takes a call a work left running after it ended as a newcomer, not as a user of that work's closing lease", async () => {
      const { backend, counts, closing, closeBegun } = closeWaits();
      const shared = new SharedAddressSets({ maxHoldMs: 1000, handoffMs: HANDOFF_MS });
      let detached!: Promise<{ v4: string }>;
      await Promise.race([
        shared.use(options(backend), async () => {
          // Nothing written, so the close asks the backend whether the table is empty, and waits there.
          detached = until(closeBegun).then(() => shared.use(options(backend), (inner) => inner.ensure('later', ['10.9.8.4'])));
        }, { deleteTableIfEmpty: true }),
        until(closeBegun),
      ]);
      await settle(); // the detached call has made its choice
      closing.resolve();
      expect(backend.elements((await detached).v4)).toEqual(['10.9.8.4']);
      expect(counts.locks).toBe(2); // a writer of its own, after the closing one
      await lockIsFree(backend);
    });

    it('opens without waiting when handoffMs is 0', async () => {
      const { backend, shared, order, first } = await firstHolding(0);
      now = 1000;
      const second = note(shared, backend, 'second', order);
      await settle();
      first.release();
      await Promise.all([first.done, second]);
      expect(timers.mock.calls.filter(([, ms]) => ms === 0)).toEqual([]);
    });
  });

  describe('a delete pending when the last user leaves', () => {
    const DELAY = 5_000;
    const delayed = (backend: MemoryBackend, clock: ManualClock) => ({ ...options(backend), deleteDelayMs: DELAY, clock });
    const del = (shared: SharedAddressSets, backend: MemoryBackend, clock: ManualClock, owner: string) =>
      shared.use(delayed(backend, clock), (sets) => sets.delete(owner).then(() => sets.destroyDue()), { onlyExisting: true, deleteTableIfEmpty: true });

    it('is destroyed at its deadline with no further call, and the emptied table deleted', async () => {
      const { backend, counts } = countingBackend();
      const clock = new ManualClock();
      const shared = new SharedAddressSets();
      const handlesBefore = namespaceHandles();
      const refs = await shared.use(delayed(backend, clock), (sets) => sets.ensure('a', ['10.9.5.1']));
      expect(shared.armed).toBe(0); // nothing pending: no timer
      await del(shared, backend, clock, 'a');
      expect(backend.elements(refs.v4)).toEqual([]); // emptied, its destroy pending
      expect(shared.armed).toBe(1);
      await lockIsFree(backend); // the timer holds no lock while it waits
      await clock.advance(DELAY - 1);
      expect(clock.pending).toBe(1);
      expect(counts.locks).toBe(2);
      await clock.advance(1);
      await until(() => counts.tableDeletes === 1 && shared.size === 0);
      expect(backend.setNames()).toEqual(['as_owners']);
      expect(counts.locks).toBe(3);
      expect(shared.armed).toBe(0);
      await lockIsFree(backend);
      expect(namespaceHandles()).toBe(handlesBefore); // the run's own handle closed after it
    });

    it('the owner ensured again before the deadline keeps its sets, and no run is left armed', async () => {
      const { backend, counts } = countingBackend();
      const clock = new ManualClock();
      const shared = new SharedAddressSets();
      const refs = await shared.use(delayed(backend, clock), (sets) => sets.ensure('b', ['10.9.5.2']));
      await del(shared, backend, clock, 'b');
      await clock.advance(DELAY / 2);
      await shared.use(delayed(backend, clock), (sets) => sets.ensure('b', ['10.9.5.3']));
      expect(shared.armed).toBe(0);
      await clock.advance(DELAY);
      expect(backend.elements(refs.v4)).toEqual(['10.9.5.3']);
      expect(counts.locks).toBe(3);
    });

    it('the earliest of several deadlines comes first, then the next', async () => {
      const { backend, counts } = countingBackend();
      const clock = new ManualClock();
      const shared = new SharedAddressSets();
      const [c, d] = await Promise.all(['c', 'd'].map((owner, i) => shared.use(delayed(backend, clock), (sets) => sets.ensure(owner, [`10.9.5.${10 + i}`]))));
      await del(shared, backend, clock, 'c');
      await clock.advance(DELAY / 2);
      await del(shared, backend, clock, 'd');
      await clock.advance(DELAY / 2);
      await until(() => backend.elements(c!.v4) === undefined && shared.size === 0);
      expect(backend.elements(d!.v4)).toEqual([]); // pending still
      expect(shared.armed).toBe(1);
      await clock.advance(DELAY / 2);
      await until(() => counts.tableDeletes === 1 && shared.size === 0);
      expect(backend.elements(d!.v4)).toBeUndefined();
    });

    it('a destroy the kernel keeps refusing is tried again at once, then 1 s, 2 s, 4 s later; once it lands, nothing is armed', async () => {
      const { backend, counts } = countingBackend();
      const clock = new ManualClock();
      const shared = new SharedAddressSets();
      const refs = await shared.use(delayed(backend, clock), (sets) => sets.ensure('busy', ['10.9.5.30']));
      backend.reference(refs.v4); // a rule uses the set: each destroy fails with EBUSY
      await shared.use(delayed(backend, clock), (sets) => sets.delete('busy'));
      const runs = () => counts.locks - 2;
      const afterRun = async (ms: number, expected: number) => {
        await clock.advance(ms);
        await until(() => runs() === expected && shared.size === 0 && shared.armed === 1);
      };
      await afterRun(DELAY, 1);
      await afterRun(1, 2); // again at once (Node's shortest timer)
      for (const wait of [1000, 2000, 4000]) {
        const before = runs();
        await clock.advance(wait - 1);
        expect(shared.armed, `${wait} ms`).toBe(1); // not yet: a run that starts disarms at once
        await afterRun(1, before + 1); // one run at its time
      }
      backend.unreference(refs.v4);
      await clock.advance(8000);
      await until(() => backend.elements(refs.v4) === undefined && shared.size === 0);
      expect(shared.armed).toBe(0);
    });

    it('a run that cannot take the lock tries again; close() cancels what is armed', async () => {
      const { backend, counts } = countingBackend();
      const clock = new ManualClock();
      const shared = new SharedAddressSets();
      const opts = { ...delayed(backend, clock), lockTimeoutMs: 0 };
      await shared.use(opts, (sets) => sets.ensure('e', ['10.9.5.20']));
      await shared.use(opts, (sets) => sets.delete('e'), { onlyExisting: true, deleteTableIfEmpty: true });
      const elsewhere = await AddressSets.open({ ...opts, clock: new ManualClock(0) }); // another writer holds the table at the deadline (its own timers far off)
      await clock.advance(DELAY);
      await until(() => shared.armed === 1 && clock.pending > 0); // the failed run armed the next
      await elsewhere.close();
      await clock.advance(1);
      await until(() => counts.tableDeletes === 1 && shared.size === 0);
      expect(backend.setNames()).toEqual(['as_owners']);

      await shared.use(opts, (sets) => sets.ensure('f', ['10.9.5.21']));
      await shared.use(opts, (sets) => sets.delete('f'), { onlyExisting: true });
      expect(shared.armed).toBe(1);
      shared.close();
      expect(shared.armed).toBe(0);
      expect(clock.pending).toBe(0);
    });
  });

  it('calls at once on different backends, tables or prefixes each get a writer of their own', async () => {
    const shared = new SharedAddressSets();
    const first = countingBackend();
    const second = countingBackend();
    const gate = deferred();
    const calls = [
      shared.use(options(first.backend), () => gate.promise),
      shared.use(options(second.backend), () => gate.promise),
      shared.use({ ...options(first.backend), table: 'other' }, () => gate.promise),
      shared.use({ ...options(first.backend), prefix: 'bs' }, () => gate.promise),
      shared.use(options(first.backend), () => gate.promise), // joins the first
    ];
    await until(() => shared.size === 4);
    gate.resolve();
    await Promise.all(calls);
    // The first backend's three writers took its lock in turn; the fifth call joined the first writer.
    expect([first.counts.locks, second.counts.locks]).toEqual([3, 1]);
  });

  it('deletes the table only when a user asked for it', async () => {
    const { backend, counts } = countingBackend();
    const shared = new SharedAddressSets();
    await shared.use(options(backend), async () => {});
    expect(counts.tableDeletes).toBe(0);
    await shared.use(options(backend), async () => {}, { deleteTableIfEmpty: true });
    expect(counts.tableDeletes).toBe(1);
  });

  it('takes the namespace as a path too, closing the handle it opened', async () => {
    const { backend } = countingBackend();
    const shared = new SharedAddressSets();
    const fds = () => readdirSync('/proc/self/fd').length;
    const before = fds();
    await shared.use({ ...options(backend), netns: '/proc/self/ns/net' }, (sets) => sets.ensure('a', ['10.9.3.1']));
    expect(fds()).toBe(before);
    await expect(shared.use({ ...options(backend), netns: '/proc/self/ns/net', retryIntervalMs: 10n } as never, async () => {})).rejects.toMatchObject({
      code: 'ERR_NETNS_ADDRSET_INVALID_OPTION',
      message: expect.stringMatching(/^options other than netns, backend and clock must be plain data: /),
    });
    expect(fds()).toBe(before);
    const own = NetNS.open('/proc/self/ns/net');
    try {
      await expect(shared.use({ ...options(backend), netns: own, retryIntervalMs: 10n } as never, async () => {})).rejects.toMatchObject({ code: 'ERR_NETNS_ADDRSET_INVALID_OPTION' });
      expect(own.closed).toBe(false); // the caller's handle is the caller's to close
    } finally {
      own.close();
    }
  });

  it('arms nothing once closed', async () => {
    const { backend } = countingBackend();
    const shared = new SharedAddressSets();
    shared.close();
    await shared.use({ ...options(backend), deleteDelayMs: 60_000, clock: new ManualClock() }, (sets) => sets.ensure('a', ['10.9.4.1']).then(() => sets.delete('a')));
    expect(shared.armed).toBe(0);
  });

  it('rejects bad options, naming which', () => {
    const message = (what: string) => `${what} must be a whole number of ms from 0 to ${2 ** 31 - 1}`;
    expect(() => new SharedAddressSets(null as never)).toThrow(expect.objectContaining({ code: 'ERR_NETNS_ADDRSET_INVALID_OPTION', message: 'SharedAddressSets takes { maxHoldMs?, handoffMs? }' }));
    expect(() => new SharedAddressSets(1000 as never)).toThrow(expect.objectContaining({ code: 'ERR_NETNS_ADDRSET_INVALID_OPTION', message: 'SharedAddressSets takes { maxHoldMs?, handoffMs? }' }));
    expect(() => new SharedAddressSets({ maxHoldMs: -1 })).toThrow(expect.objectContaining({ code: 'ERR_NETNS_ADDRSET_INVALID_OPTION', message: message('maxHoldMs') }));
    expect(() => new SharedAddressSets({ handoffMs: 1.5 })).toThrow(expect.objectContaining({ code: 'ERR_NETNS_ADDRSET_INVALID_OPTION', message: message('handoffMs') }));
    // Past Node's timer limit a handoff would fire after 1 ms.
    expect(() => new SharedAddressSets({ handoffMs: 2 ** 31 })).toThrow(expect.objectContaining({ code: 'ERR_NETNS_ADDRSET_INVALID_OPTION' }));
    expect(() => new SharedAddressSets({ maxHoldMs: 2 ** 31 })).toThrow(expect.objectContaining({ code: 'ERR_NETNS_ADDRSET_INVALID_OPTION' }));
    expect(() => new SharedAddressSets({ handoffMs: 2 ** 31 - 1, maxHoldMs: 2 ** 31 - 1 })).not.toThrow();
  });
});
