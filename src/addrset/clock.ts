// Time as the address-set manager sees it; tests substitute a manual clock.
import { MAX_TIMER_MS } from '../core/timer-limit.js';

/**
 * Where AddressSets gets the time and its timers (the `clock` option). The
 * default is the wall clock; tests pass ManualClock from netns/testing.
 */
export interface Clock {
  /** The current time, epoch ms (deadlines are recorded in the kernel as such). */
  now(): number;
  /** Calls `callback` after `ms`; returns a handle for clearTimeout. */
  setTimeout(callback: () => void, ms: number): unknown;
  /** Cancels a timer setTimeout returned. */
  clearTimeout(handle: unknown): void;
}

/** Wall-clock deadlines (they are recorded in the kernel and outlive the process); timers never keep the process alive. */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (callback, ms) => setTimeout(callback, ms).unref(),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};


/**
 * Calls `fire` once the clock reads `at` or later, however far ahead that is:
 * a wait longer than one timer can hold is made of several, each checking
 * the clock again. Returns the cancel function.
 */
export function timerAt(clock: Clock, at: number, fire: () => void): () => void {
  let handle: unknown;
  const wait = () => (handle = clock.setTimeout(check, Math.min(Math.max(at - clock.now(), 0), MAX_TIMER_MS)));
  const check = () => (clock.now() >= at ? fire() : wait());
  wait();
  return () => clock.clearTimeout(handle);
}

/**
 * A stand-in for the global `performance`, now() alone, for leases' ages: the
 * global is made on first use by loading node:perf_hooks (its observers and
 * timings), which a one-command CNI plugin's ADD paid for one timestamp.
 * Importing it shadows the global. Milliseconds from an arbitrary point, as
 * monotonic as performance.now().
 */
export const performance = {
  now: (): number => Number(process.hrtime.bigint()) / 1e6,
};
