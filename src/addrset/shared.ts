// One writer per table in a process, shared by the calls of a moment. A
// resident daemon serves many calls at once; each opening its own
// AddressSets would wait its turn for the table's lock, read the whole table
// and commit its own transactions. Instead the calls lease one open instance:
// the first opens it (one lock hold, one read of the table), the others join,
// and their requests go down its one pipeline, where those submitted together
// share a transaction. The last to leave closes it, which releases the lock,
// so other processes (plugin processes, the CLI) get their turn between
// bursts. A lease older than maxHoldMs takes no one new, so a steady stream
// cannot keep them out for long: the next caller waits for it to close, then
// lets handoffMs pass (a waiter elsewhere may take the lock then) before it
// queues for the lock as any writer does.
//
// The lease adds no state of its own: what must survive a crash is the
// manager's (recorded in the kernel as requests land), and a live owner's
// sets are guarded by the manager's per-owner generations whichever call's
// request destroys or re-creates them, since all go down the same pipeline.
//
// A closed instance runs no timers, so a delete pending when the last user
// leaves would wait for the next call. A long-lived process (the daemon) has
// no next call to count on: the table's earliest deadline arms a timer that
// joins or opens the writer then and destroys what is due (destroyDue, under
// the same per-owner guards as any request), deleting the table if it is left
// empty and its last users asked for that. The deadline is read from the
// instance as it closes, so deadlines recorded by earlier processes count too.
import type { AsyncLocalStorage } from 'node:async_hooks';
import { asyncHooks } from '../core/builtins.js';
import { ErrorCodes, netnsError } from '../core/errors.js';
import { MAX_TIMER_MS } from '../core/timer-limit.js';
import { sleep } from '../core/sleep.js';
import { NetNS } from '../netns.js';
import { performance, systemClock, timerAt } from './clock.js';
import { AddressSets } from './manager.js';
import type { AddressSetsOptions } from './types.js';

/** A destroy the kernel refused (EBUSY: a rule still uses the set) is tried again after this, doubling up to MAX_RETRY_MS. */
const RETRY_MS = 1_000;
const MAX_RETRY_MS = 30_000;

/** What `new SharedAddressSets()` takes. */
export interface SharedAddressSetsOptions {
  /** How long one open instance takes new users, in ms (default 1000); it then closes when its last user leaves. */
  maxHoldMs?: number;
  /** After such a close, how long the next open waits before it queues for the lock, in ms (default 50), so that another process's writer can take it first. */
  handoffMs?: number;
}

/** How one use of a shared table goes. */
export interface ShareOptions {
  /** Only if the table is there (as AddressSets.openExisting): nothing is created, and `use` resolves undefined without running `work` when it is not. */
  onlyExisting?: boolean;
  /** When the last user of this open instance leaves, delete the table if it is then empty (AddressSets.deleteTableIfEmpty), before the lock goes. */
  deleteTableIfEmpty?: boolean;
}

class Lease {
  users = 1;
  closing = false;
  tidy = false;
  /** Since when this process has held the table's lock without a break (a lease opened as the last one closed continues its hold). */
  readonly heldSince: number;
  readonly key: string;
  readonly ns: NetNS;
  readonly sets: Promise<AddressSets | null>;
  readonly closed: Promise<void>;
  #markClosed!: () => void;

  constructor(key: string, ns: NetNS, heldSince: number | undefined, sets: (ns: NetNS) => Promise<AddressSets | null>) {
    this.key = key;
    this.ns = ns;
    this.heldSince = heldSince ?? performance.now();
    this.closed = new Promise((resolve) => (this.#markClosed = resolve));
    this.sets = sets(ns);
    // A lease that opened nothing (no table, or a failure) has nothing to close.
    this.sets.then((opened) => opened ?? this.#finish(), () => this.#finish());
  }

  /** `closing` sees the closed instance (nothing in flight) while the lease's namespace is still open. */
  async close(closing: (sets: AddressSets) => void): Promise<void> {
    const sets = (await this.sets)!;
    try {
      if (this.tidy) await sets.deleteTableIfEmpty();
    } finally {
      await sets.close();
      closing(sets);
      this.#finish();
    }
  }

  #finish(): void {
    this.closing = true;
    this.ns.close();
    this.#markClosed();
  }
}

/**
 * The leases the running `work` holds. A call nested in it joins its own
 * lease however old: waiting for that lease to close, as a newcomer does,
 * would wait for the very call that waits.
 */
let holding: AsyncLocalStorage<ReadonlySet<Lease>> | undefined;
const heldHere = (): ReadonlySet<Lease> | undefined => holding?.getStore();

/** `work` run with `lease` added to what its calls hold. */
function runHolding<T>(lease: Lease, work: () => Promise<T>): Promise<T> {
  holding ??= new (asyncHooks().AsyncLocalStorage)();
  return holding.run(new Set([...(heldHere() ?? []), lease]), work);
}

const objectIds = new WeakMap<object, number>();
let lastObjectId = 0;

/** A backend or clock object is the same option only if it is the same object. */
function idOf(value: object | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!objectIds.has(value)) objectIds.set(value, ++lastObjectId);
  return objectIds.get(value);
}

/** A new handle on the namespace of `ns`, which may be closed before the new one is. */
const dup = (ns: NetNS): NetNS => NetNS.open(`/proc/self/fd/${ns.fd}`);

/** The lease key: the namespace's identity and every other option. */
function keyOf(ns: NetNS, options: AddressSetsOptions): string {
  const { netns: _, backend, clock, ...rest } = options;
  let text: string;
  try {
    text = JSON.stringify({ ...rest, backend: typeof backend === 'object' ? idOf(backend) : backend, clock: idOf(clock) });
  } catch (error) {
    // A bigint or a cycle: AddressSets.open would refuse the option too, but the key is made first.
    throw netnsError(ErrorCodes.ADDRSET_INVALID_OPTION, `options other than netns, backend and clock must be plain data: ${(error as Error).message}`);
  }
  return `${ns.dev}:${ns.inode}:${text}`;
}

function checkMs(value: number | undefined, fallback: number, what: string): number {
  const chosen = value ?? fallback;
  // Node fires a longer timer after 1 ms: a handoff past it would be none at all.
  if (!Number.isSafeInteger(chosen) || chosen < 0 || chosen > MAX_TIMER_MS) {
    throw netnsError(ErrorCodes.ADDRSET_INVALID_OPTION, `${what} must be a whole number of ms from 0 to ${MAX_TIMER_MS}`);
  }
  return chosen;
}

/**
 * Shares one open AddressSets per table among the concurrent calls of a
 * process (a resident CNI daemon's): `use` opens the table's writer, or joins
 * the one open, runs `work` with it and leaves; the last to leave closes it,
 * releasing the table's lock for other processes. Requests of calls at once
 * share transactions. Options other than `netns` must be the same for calls
 * to share (the namespace is compared by identity, not path). A table left
 * with deletes pending is opened again at the earliest deadline (a timer of
 * the `clock` option's, never keeping the process alive) and its due sets
 * destroyed, the table deleted if then empty when its users asked for that;
 * close() stops those timers.
 */
export class SharedAddressSets {
  readonly #maxHoldMs: number;
  readonly #handoffMs: number;
  /** The newest lease of each key, open, opening or closing. */
  readonly #leases = new Map<string, Lease>();
  /** The armed run of each key whose table has a delete pending: its cancel function. */
  readonly #due = new Map<string, () => void>();
  /** Runs in a row that found a destroy already due and not done: the next waits longer. */
  readonly #retries = new Map<string, number>();
  #closed = false;

  constructor(options: SharedAddressSetsOptions = {}) {
    if (typeof options !== 'object' || options === null) throw netnsError(ErrorCodes.ADDRSET_INVALID_OPTION, 'SharedAddressSets takes { maxHoldMs?, handoffMs? }');
    this.#maxHoldMs = checkMs(options.maxHoldMs, 1000, 'maxHoldMs');
    this.#handoffMs = checkMs(options.handoffMs, 50, 'handoffMs');
  }

  /**
   * Runs `work` with the shared writer of the table `options` name (opened as
   * AddressSets.open opens it, or joined), then leaves it. Rejects as open
   * does (ERR_NETNS_ADDRSET_LOCKED, ...) or with what `work` throws; the last
   * user to leave also with a failure to delete or close the table. A call
   * made inside `work` for the same table joins this one's writer, however
   * long it has been held.
   */
  use<T>(options: AddressSetsOptions, work: (sets: AddressSets) => Promise<T>, share?: ShareOptions & { onlyExisting?: false }): Promise<T>;
  use<T>(options: AddressSetsOptions, work: (sets: AddressSets) => Promise<T>, share: ShareOptions): Promise<T | undefined>;
  async use<T>(options: AddressSetsOptions, work: (sets: AddressSets) => Promise<T>, share: ShareOptions = {}): Promise<T | undefined> {
    const lease = await this.#join(options, share.onlyExisting === true);
    if (!lease) return undefined;
    try {
      const sets = (await lease.sets)!;
      return await runHolding(lease, () => work(sets));
    } finally {
      if (share.deleteTableIfEmpty) lease.tidy = true;
      await this.#leave(lease, options);
    }
  }

  /** Leases currently held, opening or closing (for tests and diagnostics). */
  get size(): number {
    return this.#leases.size;
  }

  /** Tables with a run of their due deletes armed (for tests and diagnostics). */
  get armed(): number {
    return this.#due.size;
  }

  /** Cancels every armed run of due deletes, and arms none from now on; calls in use finish as they would. */
  close(): void {
    this.#closed = true;
    for (const key of [...this.#due.keys()]) this.#disarm(key);
    this.#retries.clear();
  }

  /** A lease holding an open instance, with this call counted as a user; undefined when onlyExisting and there is no table. */
  async #join(options: AddressSetsOptions, onlyExisting: boolean): Promise<Lease | undefined> {
    const given = typeof options.netns === 'string' ? NetNS.open(options.netns) : options.netns;
    let key: string;
    try {
      key = keyOf(given, options);
    } catch (error) {
      if (given !== options.netns) given.close();
      throw error;
    }
    try {
      let heldSince: number | undefined; // set while the lock has been held, lease after lease, with no break
      for (;;) {
        const current = this.#leases.get(key);
        // Held by the work this call runs in, and still in use (a call that work left running after it ended is a newcomer).
        const ours = current !== undefined && current.users > 0 && heldHere()?.has(current) === true;
        if (current && (ours || (!current.closing && performance.now() - current.heldSince < this.#maxHoldMs))) {
          // Counted at once, so that its last user cannot close it meanwhile. A lease that opens
          // nothing (no table, or a failure) is finished whatever its count: no one leaves it.
          current.users++;
          if (await current.sets) return current;
          if (onlyExisting) return undefined;
          continue; // a look that found no table: this call makes it
        }
        if (current) {
          current.closing = true; // too old, or its last user has left: it takes no one new
          await current.closed; // it has left #leases by then: its own handler below ran first
          heldSince ??= current.heldSince;
          continue;
        }
        const handoff = heldSince !== undefined && performance.now() - heldSince >= this.#maxHoldMs;
        // The lease's own handle: the caller's may be closed before the lease is.
        const lease = new Lease(key, dup(given), handoff ? undefined : heldSince, (ns) => this.#open(ns, options, onlyExisting, handoff));
        this.#leases.set(key, lease);
        void lease.closed.then(() => this.#leases.get(key) === lease && this.#leases.delete(key));
        return (await lease.sets) ? lease : undefined;
      }
    } finally {
      if (given !== options.netns) given.close();
    }
  }

  async #open(ns: NetNS, options: AddressSetsOptions, onlyExisting: boolean, handoff: boolean): Promise<AddressSets | null> {
    if (handoff && this.#handoffMs > 0) await sleep(this.#handoffMs);
    const opened = { ...options, netns: ns };
    return onlyExisting ? AddressSets.openExisting(opened) : AddressSets.open(opened);
  }

  async #leave(lease: Lease, options: AddressSetsOptions): Promise<void> {
    if (--lease.users > 0) return;
    lease.closing = true;
    await lease.close((sets) => this.#armDue(lease, options, sets.stats().nextDeadline));
  }

  /**
   * Arms the run of the table's due deletes at `next` (the closed instance's
   * earliest deadline), replacing the run armed before; nothing when none is
   * pending. A deadline already past is a destroy not done (the kernel
   * refused it, or the instance closed first): it is tried again at once,
   * then after a growing wait.
   */
  #armDue(lease: Lease, options: AddressSetsOptions, next: number | undefined): void {
    this.#disarm(lease.key);
    const clock = options.clock ?? systemClock;
    if (next === undefined || next > clock.now()) this.#retries.delete(lease.key);
    if (next === undefined || this.#closed) return;
    this.#arm(lease.key, { ...options, netns: dup(lease.ns) }, lease.tidy, next);
  }

  /** At `at` (or a retry's time, once it is past), destroys the due sets of the table `options` name, if it is still there; `options.netns` is this run's own handle. */
  #arm(key: string, options: AddressSetsOptions & { netns: NetNS }, tidy: boolean, at: number): void {
    const clock = options.clock ?? systemClock;
    if (at <= clock.now()) {
      const retries = this.#retries.get(key) ?? 0;
      this.#retries.set(key, retries + 1);
      at = clock.now() + (retries === 0 ? 0 : Math.min(RETRY_MS * 2 ** (retries - 1), MAX_RETRY_MS));
    }
    const ns = options.netns;
    const cancelTimer = timerAt(clock, at, () => {
      this.#due.delete(key);
      void this.use(options, (sets) => sets.destroyDue(), { onlyExisting: true, deleteTableIfEmpty: tidy })
        // Not opened (the lock held elsewhere past lockTimeoutMs): again later. A lease that closed has armed the next run itself.
        .catch(() => this.#due.has(key) || this.#closed || this.#arm(key, { ...options, netns: dup(ns) }, tidy, clock.now()))
        .finally(() => ns.close());
    });
    this.#due.set(key, () => {
      cancelTimer();
      ns.close();
    });
  }

  #disarm(key: string): void {
    this.#due.get(key)?.();
    this.#due.delete(key);
  }
}
