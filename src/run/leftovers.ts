// What a pool worker's fn may leave behind: anything that can run later on
// the worker's event loop. Timers and immediates are tracked from creation,
// so even unref'd ones count; other resources (servers, sockets, child
// processes, file system requests) count while they keep the loop alive,
// beyond what the worker holds itself. A worker that has any takes no
// further task: that work would run whenever a later async fn lets the loop
// turn, inside that later call's namespace.
import { createHook } from 'node:async_hooks';

type ResourceCounts = Map<string, number>;
type TimerLike = { _destroyed?: boolean };

const timers = new Set<TimerLike>();
let baseline: ResourceCounts = new Map();

function countResources(): ResourceCounts {
  const counts: ResourceCounts = new Map();
  for (const type of process.getActiveResourcesInfo()) counts.set(type, (counts.get(type) ?? 0) + 1);
  return counts;
}

/** Called once the worker holds what it always will (its port): that is not fn's. */
export function startWatchingLeftovers(): void {
  baseline = countResources();
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
  if (timerPending()) return true;
  for (const [type, count] of countResources()) if (count > (baseline.get(type) ?? 0)) return true;
  return false;
}
