// The caller's busy-wait for a pool worker's answer: it must stop spinning
// when spinning does not pay (a slow worker would otherwise cost a CPU per
// call) and must yield to the event loop often enough for timers and I/O.
import { setImmediate as nextTurn } from 'node:timers/promises';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { BELL_RESULTS, BELL_TASKS, BELL_WORDS, SpinPolicy, spinUntilRung } from '../../dist/run/doorbell.js';

const newBell = (): Int32Array => new Int32Array(new SharedArrayBuffer(BELL_WORDS * 4));

function spinsAllowed(policy: SpinPolicy, tries: number): number {
  let allowed = 0;
  for (let i = 0; i < tries; i++) if (policy.shouldSpin()) allowed++;
  return allowed;
}

describe('SpinPolicy', () => {
  it('stops spinning for the next 32 calls after four misses in a row, then spins again', async () => {
    const policy = new SpinPolicy();
    for (let i = 0; i < 3; i++) policy.record(false);
    expect(policy.shouldSpin()).toBe(true); // three misses are not yet a slow worker
    policy.record(false);
    const decisions = Array.from({ length: 33 }, () => policy.shouldSpin());
    expect(decisions.slice(0, 32)).toEqual(Array(32).fill(false));
    expect(decisions[32]).toBe(true);
  });

  it('forgets misses after a hit', () => {
    const policy = new SpinPolicy();
    for (let i = 0; i < 3; i++) policy.record(false);
    policy.record(true);
    for (let i = 0; i < 3; i++) policy.record(false);
    expect(policy.shouldSpin()).toBe(true);
  });

  it('starts counting misses again after a backoff', () => {
    const policy = new SpinPolicy();
    for (let i = 0; i < 4; i++) policy.record(false);
    spinsAllowed(policy, 32);
    policy.record(false);
    expect(policy.shouldSpin()).toBe(true); // one miss after the backoff, not a fifth
  });

  it('spins at most 256 times per event-loop turn, and again on the next turn', async () => {
    const policy = new SpinPolicy();
    expect(spinsAllowed(policy, 300)).toBe(256);
    await nextTurn();
    expect(spinsAllowed(policy, 300)).toBe(256);
  });
});

describe('spinUntilRung', () => {
  it('returns at once when the bell already differs from what was seen', () => {
    const bell = newBell();
    Atomics.store(bell, BELL_RESULTS, 3);
    expect(spinUntilRung(bell, BELL_RESULTS, 2, 0)).toBe(true);
  });

  it('gives up when nobody rings within the budget, and watches only its own word', () => {
    const bell = newBell();
    Atomics.store(bell, BELL_TASKS, 9); // the other word rung: not an answer
    expect(spinUntilRung(bell, BELL_RESULTS, 0, 50)).toBe(false);
  });

  it('sees a ring from another thread while it spins', async () => {
    const bell = newBell();
    const ready = new Int32Array(new SharedArrayBuffer(4));
    // The worker rings 20 ms after it said it is ready: the caller is spinning by then.
    const ringer = new Worker(
      `const { workerData: { bell, ready, index } } = require('node:worker_threads');
       Atomics.store(ready, 0, 1); Atomics.notify(ready, 0);
       Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
       Atomics.add(bell, index, 1);`,
      { eval: true, workerData: { bell, ready, index: BELL_RESULTS } },
    );
    try {
      while (Atomics.load(ready, 0) === 0) await nextTurn();
      expect(spinUntilRung(bell, BELL_RESULTS, 0, 5_000_000)).toBe(true);
      expect(Atomics.load(bell, BELL_RESULTS)).toBe(1);
    } finally {
      await ringer.terminate();
    }
  });
});
