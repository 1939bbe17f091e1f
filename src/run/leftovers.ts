// What a pool worker's fn may leave behind: anything that can run later on
// the worker's event loop. Timers and immediates are tracked from creation,
// so even unref'd ones count; other resources (servers, sockets, child
// processes, file system and DNS requests) count while they keep the loop
// alive. Message ports do not count: the worker's own stdio travels over
// them. Handles a fn closed are still listed until the loop has turned, so
// a worker that seems to have leftovers lets its loop turn (at home) before
// it decides. A worker that has leftovers takes no further task: that work
// would run whenever a later async fn lets the loop turn, inside that later
// call's namespace.
import { createHook } from 'node:async_hooks';

type TimerLike = { _destroyed?: boolean };

const SETTLE_TURNS = 3;
const timers = new Set<TimerLike>();

/** Called once, before any fn runs. */
export function startWatchingLeftovers(): void {
  createHook({
    init(_asyncId, type, _triggerId, resource) {
      if (type === 'Timeout' || type === 'Immediate') timers.add(resource as TimerLike);
    },
  }).enable();
}

function timerPending(): boolean {
  for (const timer of timers) {
    if (!timer._destroyed) return true; // Node marks a timer destroyed once cleared or fired for good
    timers.delete(timer);
  }
  return false;
}

export function leftBehind(): boolean {
  return timerPending() || process.getActiveResourcesInfo().some((type) => type !== 'MessagePort');
}

/** Lets the event loop turn a few times; true once nothing is left behind. */
export async function settledDown(): Promise<boolean> {
  for (let turn = 0; turn < SETTLE_TURNS; turn++) {
    await new Promise((resolve) => setImmediate(resolve));
    if (!leftBehind()) return true;
  }
  return false;
}
