// A clock that moves only when told, for deterministic tests of timers
// (deferred deletes, retries). Pass it as AddressSets' `clock` option. Its
// timers keep Node's limits: a delay under 1 ms or over 2^31-1 ms fires after
// 1 ms, as setTimeout does, so code that trusts a long timer fails here too.
import type { Clock } from '../addrset/clock.js';
import { MAX_TIMER_MS } from '../core/timer-limit.js';
import { ErrorCodes, netnsError } from '../core/errors.js';

interface Timer {
  at: number;
  callback: () => void;
}

/**
 * A clock that moves only when `advance()` is called, for tests of AddressSets'
 * deferred deletes and retries: pass it as the `clock` option. `now()` starts
 * at `start` (epoch ms, default 1,700,000,000,000).
 */
export class ManualClock implements Clock {
  #now: number;
  #nextId = 1;
  readonly #timers = new Map<number, Timer>();

  constructor(start = 1_700_000_000_000) {
    if (!Number.isFinite(start)) throw netnsError(ErrorCodes.INVALID_ARG, `start must be a finite number of epoch ms, got ${String(start)}`);
    this.#now = start;
  }

  /** The clock's time, epoch ms. */
  now(): number {
    return this.#now;
  }

  /** Schedules `callback` at now() + ms (1 ms when ms is under 1 or over 2^31-1, as Node does); returns a handle for clearTimeout. */
  setTimeout(callback: () => void, ms: number): unknown {
    const id = this.#nextId++;
    const delay = ms >= 1 && ms <= MAX_TIMER_MS ? ms : 1;
    this.#timers.set(id, { at: this.#now + delay, callback });
    return id;
  }

  /** Cancels a timer setTimeout returned; an unknown or fired handle is ignored. */
  clearTimeout(handle: unknown): void {
    this.#timers.delete(handle as number);
  }

  /** Timers still waiting. */
  get pending(): number {
    return this.#timers.size;
  }

  /**
   * Moves time forward, firing due timers in order; `between` runs after each
   * one (e.g. `() => sets.settled()`), so that work a timer starts finishes
   * before the next timer's time.
   */
  async advance(ms: number, between: () => Promise<void> = async () => {}): Promise<void> {
    if (!Number.isFinite(ms) || ms < 0) throw netnsError(ErrorCodes.INVALID_ARG, `advance takes a finite number of ms, not negative, got ${String(ms)}`);
    if (typeof between !== 'function') throw netnsError(ErrorCodes.INVALID_ARG, 'advance: between must be a function');
    const end = this.#now + ms;
    for (;;) {
      const due = [...this.#timers].filter(([, timer]) => timer.at <= end).sort(([, a], [, b]) => a.at - b.at)[0];
      if (!due) break;
      const [id, timer] = due;
      this.#timers.delete(id);
      this.#now = Math.max(this.#now, timer.at);
      timer.callback();
      await between();
    }
    this.#now = end;
  }
}
