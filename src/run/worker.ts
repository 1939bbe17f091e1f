// A pool worker. Its OS thread is the one that switches: it opens its own home
// namespace before anything else, enters a task's namespace, runs fn, and
// restores. If a restore fails it reports and exits, never running again.
//
// Two rules keep one call's work out of another call's namespace: a task is
// claimed (compare-and-swap on its shared word) before it runs, so the pool
// can take back any task not started; and a worker whose fn left work behind
// (timers, servers, sockets, pending I/O) takes no further task: it tells the
// pool to retire it, because that work would run whenever a later async fn
// lets the event loop turn, inside that later call's namespace.
import { types } from 'node:util';
import { receiveMessageOnPort, workerData, type MessagePort } from 'node:worker_threads';
import { fromNative } from '../core/errors.js';
import { native } from '../core/native.js';
import { startClaim } from './claims.js';
import { BELL_RESULTS, BELL_TASKS, spinUntilRung, WORKER_SPIN_US } from './doorbell.js';
import { compileFunction, explainedSyntaxError, explainReferenceError } from './fn-compile.js';
import { exportOf, importFailure, importModule } from './module-export.js';
import { POOL_WORKER_HOOK, type PoolWorkerHook } from './nested-hook.js';
import { countAlsoAlive, mayHaveLeftovers, settledDown, somethingAlive, startWatchingLeftovers, stopWatching, watchCall } from './leftovers.js';
import {
  serializeError,
  TASK_FIELDS,
  unsendable,
  type FnSpec,
  type FromWorker,
  type Outcome,
  type SerializedError,
  type ToWorker,
} from './wire.js';

type Run = Extract<ToWorker, { type: 'run' }>;
type Callable = (...args: unknown[]) => unknown;
type ExportSpec = Extract<FnSpec, { module: string }>;
/**
 * A function the pool defined: ready (`source` is fn's text, to explain its
 * ReferenceErrors; null for a module export), failed to compile, or a module
 * export whose module this thread has not imported yet.
 */
type Defined = { fn: Callable; source: string | null } | { error: unknown } | { unloaded: ExportSpec };

const { port, bell: bellBuffer, claims: claimsBuffer } = workerData as { port: MessagePort; bell: SharedArrayBuffer; claims: SharedArrayBuffer };
const bell = new Int32Array(bellBuffer);
const claims = new Int32Array(claimsBuffer);
native().becomeSwitchThread();

const functions = new Map<number, Defined>();
const backlog: Run[] = [];
const nestedWaiters = new Map<number, (outcome: Outcome) => void>();
const promiseThen = Promise.prototype.then;
let busy = false;
let retiring = false;
let nextNestedId = 1;

function send(message: FromWorker): void {
  port.postMessage(message);
}

// Each result goes out as soon as it exists, so calls already finished are
// delivered even if a later fn never returns or ends the thread.
function sendResult(id: number, ok: boolean, value: unknown, extra: { poisoned?: SerializedError; judging?: boolean } = {}): void {
  const payload = ok ? value : serializeError(value);
  try {
    send({ type: 'results', results: [id, ok, payload], ...extra });
  } catch (error) {
    send({ type: 'results', results: [id, false, unsendable("fn's result", error)], ...extra });
  }
  Atomics.add(bell, BELL_RESULTS, 1);
}

// Explaining reads the value (instanceof runs a Proxy's traps): never let that throw here.
function explained(error: unknown, source: string | null): unknown {
  if (source === null) return error;
  try {
    return explainReferenceError(error, source);
  } catch {
    return error;
  }
}

/** Compiles fn's text at once; a module export's module is imported by the first task that runs it. */
function define(fnId: number, fn: FnSpec): void {
  if ('module' in fn) {
    functions.set(fnId, { unloaded: fn });
    return;
  }
  try {
    functions.set(fnId, { fn: compileFunction(fn.source, fn.caller), source: fn.source });
  } catch (error) {
    functions.set(fnId, { error: explainedSyntaxError(error) });
  }
}

// Leaves the namespace; a thread that cannot leave reports and ends here.
function restore(id: number, ok: boolean, value: unknown): void {
  const restoreError = native().restore();
  if (!restoreError) return;
  sendResult(id, ok, value, { poisoned: serializeError(fromNative(restoreError)) });
  process.exit(1);
}

/**
 * Sends the result of a call restored from, at once. If the call may have
 * left something queued or alive, the worker lets its loop turn at home
 * before it runs anything else (queued ticks and reactions drain there,
 * handles fn closed go). If something the call made was alive when it
 * settled, the result is marked as judged and the pool sends this worker
 * nothing until its verdict. Either way, if something is still alive after
 * the turns, the verdict asks the pool to retire this worker, which runs
 * nothing more. Returns true when the batch may go on at once; otherwise
 * `goOn` is called once it may.
 */
function report(id: number, ok: boolean, value: unknown, goOn: () => void): boolean {
  if (!mayHaveLeftovers()) {
    sendResult(id, ok, value);
    return true;
  }
  const judging = somethingAlive();
  sendResult(id, ok, value, judging ? { judging } : {});
  void settledDown().then((clean) => {
    if (judging || !clean) {
      send({ type: 'verdict', retire: !clean });
      Atomics.add(bell, BELL_RESULTS, 1);
    }
    if (clean) goOn();
    else retiring = true;
  });
  return false;
}

function continueFrom(message: Run, next: number): void {
  if (!runFrom(message, next)) serveUntilIdle();
}

/**
 * A native promise settling as fn's result did, or null when the result is
 * not a thenable. Never throws: reading `then` runs user code, so it is done
 * here, where a throw becomes the call's rejection and the restore still runs.
 */
function pendingResult(value: unknown): Promise<unknown> | null {
  if ((typeof value !== 'object' && typeof value !== 'function') || value === null) return null;
  if (types.isPromise(value) && Object.getPrototypeOf(value) === Promise.prototype) {
    return new Promise((resolve, reject) => promiseThen.call(value, resolve, reject));
  }
  let then: unknown;
  try {
    then = (value as { then?: unknown }).then;
  } catch (error) {
    return Promise.reject(error);
  }
  if (typeof then !== 'function') return null;
  return new Promise((resolve, reject) => then.call(value, resolve, reject));
}

/** Runs the batch's tasks from `start`; returns true if it stopped to wait (an async fn, or leftovers). */
function runFrom(message: Run, start: number): boolean {
  busy = true;
  for (let i = start; i < message.tasks.length; i += TASK_FIELDS) {
    if (!startClaim(claims, message.firstTicket + i / TASK_FIELDS)) continue;
    watchCall();
    if (runTask(message, i)) return true;
  }
  stopWatching();
  busy = false;
  return false;
}

/** Runs one claimed task; true when the batch goes on later. */
function runTask(message: Run, i: number): boolean {
  const fnId = message.tasks[i + 2] as number;
  const defined = functions.get(fnId)!;
  if ('error' in defined) {
    sendResult(message.tasks[i] as number, false, defined.error);
    return false;
  }
  if ('unloaded' in defined) {
    importThenRun(message, i, fnId, defined.unloaded);
    return true;
  }
  return runDefined(message, i, defined);
}

/**
 * Imports a module for the claimed task that first needs it, at home. Its
 * top-level code runs as part of that call: an exit or a hang there is that
 * call's, an abort ends this thread, and timers it leaves are leftovers. A
 * failed import retires the thread, since Node keeps the failure (and any
 * half-made state) for that URL for the thread's life; the next call gets a
 * fresh thread that tries again.
 */
function importThenRun(message: Run, i: number, fnId: number, spec: ExportSpec): void {
  const id = message.tasks[i] as number;
  importModule(spec.module).then(
    (namespace) => {
      let defined: Defined;
      try {
        defined = { fn: exportOf(namespace, spec), source: null };
      } catch (error) {
        defined = { error };
      }
      functions.set(fnId, defined);
      if (!runTask(message, i)) continueFrom(message, i + TASK_FIELDS);
    },
    (error: unknown) => {
      sendResult(id, false, importFailure(spec.module, error), { judging: true });
      send({ type: 'verdict', retire: true });
      Atomics.add(bell, BELL_RESULTS, 1);
      retiring = true;
    },
  );
}

/** Runs a task whose function is ready; true when the batch goes on later. */
function runDefined(message: Run, i: number, defined: { fn: Callable; source: string | null }): boolean {
  const { tasks } = message;
  const id = tasks[i] as number;
  const outcome = invoke(id, tasks[i + 1] as number, defined.fn, tasks[i + 3] as unknown[]);
  if (!outcome) return false;
  const goOn = () => continueFrom(message, i + TASK_FIELDS);
  const settle = (ok: boolean, value: unknown): boolean => {
    restore(id, ok, value);
    return report(id, ok, ok ? value : explained(value, defined.source), goOn);
  };
  const pending = outcome.ok ? pendingResult(outcome.value) : null;
  if (!pending) return !settle(outcome.ok, outcome.value);
  void pending.then(
    (value) => settle(true, value) && goOn(),
    (error: unknown) => settle(false, error) && goOn(),
  );
  return true;
}

/** Enters the namespace and calls fn; null when fn never ran (the failure is reported). */
function invoke(id: number, nsFd: number, fn: (...args: unknown[]) => unknown, args: unknown[]): { ok: boolean; value: unknown } | null {
  try {
    native().enter(nsFd);
  } catch (error) {
    sendResult(id, false, fromNative(error));
    return null;
  }
  try {
    return { ok: true, value: fn(...args) };
  } catch (error) {
    return { ok: false, value: error };
  }
}

function processMessage(message: ToWorker): void {
  if (message.type === 'nested-result') {
    nestedWaiters.get(message.id)?.(message.outcome);
    nestedWaiters.delete(message.id);
    return;
  }
  if (busy || retiring) {
    // Tasks of a retiring worker stay unclaimed: the pool takes them back.
    if (!retiring) backlog.push(message);
    return;
  }
  if (message.forget) functions.clear();
  for (const [fnId, fn] of message.defs) define(fnId, fn);
  runFrom(message, 0);
}

// Handles whatever is queued, then polls the doorbell for a short while.
// Returns to the event loop once nothing arrives or an async fn is pending.
function serveUntilIdle(): void {
  while (!busy && !retiring) {
    const queued = backlog.shift();
    if (queued) {
      processMessage(queued);
      continue;
    }
    const seen = Atomics.load(bell, BELL_TASKS);
    const received = receiveMessageOnPort(port);
    if (received) {
      processMessage(received.message as ToWorker);
      continue;
    }
    if (!spinUntilRung(bell, BELL_TASKS, seen, WORKER_SPIN_US)) return;
  }
}

const hook: PoolWorkerHook = {
  runNested(task) {
    const id = nextNestedId++;
    send({ type: 'nested', id, ...task });
    return {
      outcome: new Promise((resolve) => nestedWaiters.set(id, resolve)),
      abort() {
        if (nestedWaiters.delete(id)) send({ type: 'nested-abort', id });
      },
    };
  },
};
(globalThis as Record<symbol, unknown>)[POOL_WORKER_HOOK] = hook;

port.on('message', (message: ToWorker) => {
  processMessage(message);
  serveUntilIdle();
});
startWatchingLeftovers();
countAlsoAlive(() => nestedWaiters.size > 0); // a nested call fn did not await resumes fn's code later
send({ type: 'ready' });
