// What a pool worker's fn may leave behind: anything that can run later on
// the worker's event loop. Every async resource fn creates while its call is
// running (timers, immediates, ticks, microtasks, sockets, servers, child
// processes, file system, DNS, crypto and zlib requests, message ports) is
// tracked from its creation until Node destroys it, ref'd or not. Promises
// are not resources here; their reactions are queued ticks, which the worker
// drains at home (`settledDown`) before it judges.
//
// A worker whose call left something alive takes no further task: that work
// would run whenever a later async fn lets the loop turn, inside that later
// call's namespace. Tracking destroys costs about 0.7 us per promise fn
// creates (Node then tracks every promise's collection); it is the price of
// knowing, rather than guessing, what is still alive.
import { createHook } from 'node:async_hooks';

const SETTLE_TURNS = 3;
// Resources that run nothing by themselves and live until collected: an open
// FileHandle and the DNS resolver channel (their operations are requests,
// tracked on their own). A zlib handle also lives until collected, but its
// stream runs callbacks until both its sides have ended or it is destroyed: it is watched
// through a weak reference to the handle, whose owner is the stream.
const RUN_NOTHING = new Set(['FILEHANDLE', 'DNSCHANNEL']);
const alive = new Map<number, WeakRef<object> | null>();
let watching = false;
let promisesMade = 0;
let ownTurn = false;

/** Called once, before any fn runs. */
export function startWatchingLeftovers(): void {
  createHook({
    init(asyncId, type, _triggerId, resource) {
      if (!watching || ownTurn || RUN_NOTHING.has(type)) return;
      if (type === 'PROMISE') promisesMade++;
      else alive.set(asyncId, type === 'ZLIB' ? new WeakRef(resource) : null);
    },
    destroy(asyncId) {
      alive.delete(asyncId);
    },
  }).enable();
}

/**
 * Collects what a call creates, from its start until it is judged (what its
 * leftovers create while the loop turns counts too). The worker's own
 * resources are made while not watching.
 */
export function watchCall(): void {
  watching = true;
  promisesMade = 0;
}

export function stopWatching(): void {
  watching = false;
}

type ZlibStream = { writableFinished?: boolean; readableEnded?: boolean; destroyed?: boolean };

function stillRunning(zlib: WeakRef<object> | null): boolean {
  if (zlib === null) return true;
  const handle = zlib.deref() as Record<symbol, ZlibStream | undefined> | undefined;
  const ownerKey = handle && Object.getOwnPropertySymbols(handle).find((key) => key.description === 'owner_symbol');
  const stream = ownerKey && handle[ownerKey];
  return stream !== undefined && !stream.destroyed && !(stream.writableFinished && stream.readableEnded);
}

let othersAlive = (): boolean => false;

/** Work of the call the worker tracks itself (nested calls it has not awaited). */
export function countAlsoAlive(check: () => boolean): void {
  othersAlive = check;
}

/** Whether something the call made is alive now (not merely queued reactions). */
export function somethingAlive(): boolean {
  if (othersAlive()) return true;
  for (const [asyncId, zlib] of alive) {
    if (stillRunning(zlib)) return true;
    alive.delete(asyncId);
  }
  return false;
}

/** Whether the call may have left anything queued or alive: if so, judge it after the loop turns. */
export function mayHaveLeftovers(): boolean {
  return promisesMade > 0 || somethingAlive();
}

function nextTurn(): Promise<void> {
  ownTurn = true;
  try {
    return new Promise((resolve) => setImmediate(resolve));
  } finally {
    ownTurn = false;
  }
}

/** Lets the event loop turn at home, up to a few times; true once nothing the call made is alive. */
export async function settledDown(): Promise<boolean> {
  for (let turn = 0; turn < SETTLE_TURNS; turn++) {
    await nextTurn();
    if (!somethingAlive()) return true;
  }
  return false;
}
