// The shared doorbell between a caller and a pool worker, and the one policy
// for spinning on it. Either side may busy-wait a few tens of microseconds for
// the other instead of a round trip through both event loops; the waiting
// side gives up quickly when that does not pay, so an idle or slow peer costs
// nothing but a short spin.

/** Words of the bell: bumped by the pool when it posts tasks, by the worker when it posts results. */
export const BELL_TASKS = 0;
export const BELL_RESULTS = 1;
export const BELL_WORDS = 2;

/** How long the caller waits for a lone call's result before going back to its event loop. */
export const CALLER_SPIN_US = 40;
/** How long an idle worker polls for the next task before going back to its event loop. */
export const WORKER_SPIN_US = 60;

const MISSES_BEFORE_BACKOFF = 4;
const BACKOFF_SPINS = 32;
const SPINS_PER_TURN = 256;

/** Busy-waits until `bell[index]` differs from `seen`, for at most `budgetUs`. */
export function spinUntilRung(bell: Int32Array, index: number, seen: number, budgetUs: number): boolean {
  if (Atomics.load(bell, index) !== seen) return true;
  const deadline = performance.now() + budgetUs / 1000;
  for (let i = 1; ; i++) {
    if (Atomics.load(bell, index) !== seen) return true;
    if ((i & 63) === 0 && performance.now() > deadline) return false;
  }
}

/**
 * Decides whether the caller should spin for a result: not after a run of
 * misses (the worker is slow, so spinning only burns CPU), and not more than
 * a few hundred times per event-loop turn (so timers and I/O still run).
 */
export class SpinPolicy {
  #misses = 0;
  #backoff = 0;
  #spinsThisTurn = 0;

  shouldSpin(): boolean {
    if (this.#backoff > 0) {
      this.#backoff--;
      return false;
    }
    if (this.#spinsThisTurn++ === 0) setImmediate(() => (this.#spinsThisTurn = 0));
    return this.#spinsThisTurn <= SPINS_PER_TURN;
  }

  record(hit: boolean): void {
    if (hit) {
      this.#misses = 0;
    } else if (++this.#misses >= MISSES_BEFORE_BACKOFF) {
      this.#misses = 0;
      this.#backoff = BACKOFF_SPINS;
    }
  }
}
