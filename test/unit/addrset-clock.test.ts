// The address-set manager's time: deadlines recorded in the kernel are wall
// clock, its timers never keep a process alive, and a deadline further off
// than one Node timer can hold (~24.8 days) is waited for in several.
import { describe, expect, it } from 'vitest';
import { performance, systemClock, timerAt, type Clock } from '../../dist/addrset/clock.js';
import { MAX_TIMER_MS } from '../../dist/core/timer-limit.js';

/** A clock whose time moves only by `advance`, recording every wait asked for. */
function manualClock(start = 1_000) {
  let now = start;
  const waits: number[] = [];
  const timers = new Map<number, { due: number; callback: () => void }>();
  let next = 0;
  const clock: Clock = {
    now: () => now,
    setTimeout: (callback, ms) => {
      waits.push(ms);
      timers.set(++next, { due: now + ms, callback });
      return next;
    },
    clearTimeout: (handle) => void timers.delete(handle as number),
  };
  const advance = (ms: number) => {
    now += ms;
    for (const [handle, timer] of [...timers]) {
      if (timer.due > now) continue;
      timers.delete(handle);
      timer.callback();
    }
  };
  return { clock, waits, advance, pending: () => timers.size };
}

describe('timerAt', () => {
  it('fires once the clock reads the deadline, not before', () => {
    const { clock, waits, advance } = manualClock();
    let fired = 0;
    timerAt(clock, 1_500, () => fired++);
    expect(waits).toEqual([500]);
    advance(499);
    expect(fired).toBe(0);
    advance(1);
    expect(fired).toBe(1);
  });

  it('fires at the next turn for a deadline already past', () => {
    const { clock, waits, advance } = manualClock();
    let fired = 0;
    timerAt(clock, 10, () => fired++);
    expect(waits).toEqual([0]);
    advance(0);
    expect(fired).toBe(1);
  });

  it('waits for a far deadline in timers no longer than Node takes, checking the clock after each', () => {
    const { clock, waits, advance } = manualClock(0);
    let fired = 0;
    timerAt(clock, MAX_TIMER_MS * 2 + 5, () => fired++);
    advance(MAX_TIMER_MS);
    advance(MAX_TIMER_MS);
    expect(fired).toBe(0);
    advance(5);
    expect(fired).toBe(1);
    expect(waits).toEqual([MAX_TIMER_MS, MAX_TIMER_MS, 5]);
  });

  it('is cancelled by the function it returns, whichever of its timers is pending', () => {
    const { clock, advance, pending } = manualClock(0);
    let fired = 0;
    const cancel = timerAt(clock, MAX_TIMER_MS + 10, () => fired++);
    advance(MAX_TIMER_MS); // the second timer is now the pending one
    cancel();
    expect(pending()).toBe(0);
    advance(10);
    expect(fired).toBe(0);
  });
});

describe('the system clock', () => {
  it('reads the wall clock, and its timers keep no process alive', () => {
    const before = Date.now();
    const now = systemClock.now();
    expect(now).toBeGreaterThanOrEqual(before);
    expect(now).toBeLessThanOrEqual(Date.now());
    const handle = systemClock.setTimeout(() => {}, 60_000) as NodeJS.Timeout;
    expect(handle.hasRef()).toBe(false);
    systemClock.clearTimeout(handle);
  });

  it('clears a timer so that it never fires', async () => {
    let fired = false;
    const handle = systemClock.setTimeout(() => (fired = true), 0);
    systemClock.clearTimeout(handle);
    await new Promise((resolve) => setTimeout(resolve, 1)); // due after the cleared one, so run after it would have
    expect(fired).toBe(false);
  });

  it('reads a monotonic time in milliseconds, as performance.now does', () => {
    const first = performance.now();
    const hrtime = Number(process.hrtime.bigint()) / 1e6;
    const second = performance.now();
    expect(second).toBeGreaterThanOrEqual(first);
    expect(hrtime).toBeGreaterThanOrEqual(first); // the same clock, in the same unit
    expect(hrtime).toBeLessThanOrEqual(second);
  });
});
