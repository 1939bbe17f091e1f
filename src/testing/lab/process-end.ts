// Waiting for a killed process to end. SIGKILL takes effect only when the
// process next runs, and one in uninterruptible sleep first finishes its I/O:
// until then it may still write into a directory about to be removed (rm then
// fails with ENOTEMPTY). A zombie has had its files closed by the kernel, so
// it counts as ended, as it must: a child of this process stays one until reaped.
import { procStatFields } from '../../core/proc-stat.js';
import { sleep } from '../../core/sleep.js';

/** How long a killed process may take to end before the caller goes on without it. */
const END_WAIT_MS = 5_000;
const END_POLL_MS = 5;

/** Whether `pid` has ended: gone, or a zombie (one seen dead, X, for a moment is gone at the next look). */
function ended(pid: number): boolean {
  const state = procStatFields(pid)?.[0];
  return state === undefined || state === 'Z';
}

/** Resolves once every process in `pids` has ended, or after END_WAIT_MS. */
export async function untilEnded(pids: number[]): Promise<void> {
  const deadline = Date.now() + END_WAIT_MS;
  while (pids.some((pid) => !ended(pid)) && Date.now() < deadline) await sleep(END_POLL_MS);
}

/** untilEnded, blocking: for an exit hook, where no timer will fire. */
export function untilEndedSync(pids: number[]): void {
  const deadline = Date.now() + END_WAIT_MS;
  const pause = new Int32Array(new SharedArrayBuffer(4));
  while (pids.some((pid) => !ended(pid)) && Date.now() < deadline) Atomics.wait(pause, 0, 0, END_POLL_MS);
}
