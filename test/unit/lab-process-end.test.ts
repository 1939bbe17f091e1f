// A killed FRR daemon's directory is removed only once the daemon has ended:
// these waits decide when that is.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { untilEnded, untilEndedSync } from '../../src/testing/lab/process-end.js';

const state = (pid: number): string => readFileSync(`/proc/${pid}/stat`, 'latin1').split(') ')[1]!.split(' ')[0]!;

async function sleeper(): Promise<ChildProcess> {
  const child = spawn('sleep', ['1000'], { stdio: 'ignore' });
  await once(child, 'spawn');
  return child;
}

describe('waiting for a killed process to end', () => {
  const children: ChildProcess[] = [];
  afterEach(() => {
    vi.useRealTimers();
    for (const child of children.splice(0)) child.kill('SIGKILL');
  });

  it('waits while a process runs, and resolves once it is gone', async () => {
    const child = await sleeper();
    children.push(child);
    vi.useFakeTimers({ toFake: ['setTimeout', 'Date'] });
    let settled = false;
    const waiting = untilEnded([child.pid!]).then(() => (settled = true));
    await vi.advanceTimersByTimeAsync(4_000);
    expect(settled).toBe(false);
    child.kill('SIGKILL');
    await once(child, 'exit'); // reaped: gone from /proc
    await vi.advanceTimersByTimeAsync(5); // the next poll
    await waiting;
    expect(settled).toBe(true);
  });

  it('gives up on a process that outlives the wait (5 s) rather than waiting for ever', async () => {
    const child = await sleeper();
    children.push(child);
    vi.useFakeTimers({ toFake: ['setTimeout', 'Date'] });
    let settled = false;
    const waiting = untilEnded([child.pid!]).then(() => (settled = true));
    await vi.advanceTimersByTimeAsync(4_999);
    expect(settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await waiting;
    expect(settled).toBe(true);
    expect(state(child.pid!)).toMatch(/^[RS]$/); // still there: sleeping, or running on a busy machine
  });

  it('waits while any one of the processes runs', async () => {
    const [gone, running] = [await sleeper(), await sleeper()];
    children.push(running);
    gone.kill('SIGKILL');
    await once(gone, 'exit');
    vi.useFakeTimers({ toFake: ['setTimeout', 'Date'] });
    let settled = false;
    const waiting = untilEnded([gone.pid!, running.pid!]).then(() => (settled = true));
    await vi.advanceTimersByTimeAsync(1_000);
    expect(settled).toBe(false);
    running.kill('SIGKILL');
    await once(running, 'exit');
    await vi.advanceTimersByTimeAsync(5);
    await waiting;
  });

  it('blocking, gives up after 5 s on a process still running among ended ones, pausing 5 ms at a time', async () => {
    const [gone, running] = [await sleeper(), await sleeper()];
    children.push(running);
    gone.kill('SIGKILL');
    await once(gone, 'exit');
    let now = 0;
    const clock = vi.spyOn(Date, 'now').mockImplementation(() => (now += 1_000)); // each look at the clock, a second later
    const pauses = vi.spyOn(Atomics, 'wait').mockImplementation(() => 'timed-out');
    try {
      untilEndedSync([gone.pid!, running.pid!]);
      // The deadline is read at 1 s (6 s); pauses follow the looks at 2, 3, 4 and 5 s; at 6 s it gives up.
      expect(pauses.mock.calls.map((call) => call[3])).toEqual([5, 5, 5, 5]);
      expect(state(running.pid!)).toMatch(/^[RS]$/); // still there: sleeping, or running on a busy machine
    } finally {
      clock.mockRestore();
      pauses.mockRestore();
    }
  });

  it('counts a zombie as ended: a child of this process killed in a blocking exit hook is never reaped there', async () => {
    const child = await sleeper();
    child.kill('SIGKILL');
    // The event loop stays blocked from here on, so Node cannot reap it: it stays a zombie.
    while (state(child.pid!) !== 'Z') Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1);
    const pauses = vi.spyOn(Atomics, 'wait');
    untilEndedSync([child.pid!]);
    expect(pauses).not.toHaveBeenCalled();
    pauses.mockRestore();
    await once(child, 'exit');
  });

  it('resolves at once for processes already gone', async () => {
    const child = await sleeper();
    child.kill('SIGKILL');
    await once(child, 'exit');
    vi.useFakeTimers({ toFake: ['setTimeout', 'Date'] });
    await untilEnded([child.pid!]); // no timer is advanced: it would hang on a poll
    untilEndedSync([child.pid!]);
  });
});
