// A pool worker. Its OS thread is the one that switches: it opens its own home
// namespace before anything else, enters a task's namespace, runs fn, and
// restores. If a restore fails it reports and exits, never running again.
//
// Tasks arrive on a MessagePort. After finishing, the worker briefly polls a
// shared doorbell so that a caller issuing calls one after another is served
// without a trip through either thread's event loop.
import { receiveMessageOnPort, workerData, type MessagePort } from 'node:worker_threads';
import { fromNative } from '../core/errors.js';
import { compileFunction, explainReferenceError } from './fn-source.js';
import { native } from '../core/native.js';
import { POOL_WORKER_HOOK, type PoolWorkerHook } from './nested-hook.js';
import {
  BELL_RESULTS,
  BELL_TASKS,
  isThenable,
  serializeError,
  spinUntilRung,
  TASK_FIELDS,
  type FromWorker,
  type Outcome,
  type SerializedError,
  type ToWorker,
} from './wire.js';

const IDLE_SPIN_US = 60;

const { port, bell: bellBuffer } = workerData as { port: MessagePort; bell: SharedArrayBuffer };
const bell = new Int32Array(bellBuffer);
native.becomeSwitchThread();

type Compiled = { fn: (...args: unknown[]) => unknown } | { error: unknown };
const functions = new Map<number, Compiled>();
const backlog: ToWorker[] = [];
const nestedWaiters = new Map<number, (outcome: Outcome) => void>();
let results: unknown[] = [];
let busy = false;
let nextNestedId = 1;

function send(message: FromWorker): void {
  port.postMessage(message);
}

function flushResults(poisoned?: SerializedError): void {
  if (results.length === 0) return;
  const batch = results;
  results = [];
  try {
    send(poisoned ? { type: 'results', results: batch, poisoned } : { type: 'results', results: batch });
  } catch {
    // One value could not be cloned; send them one by one so only it fails.
    for (let i = 0; i < batch.length; i += 3) sendOne(batch[i] as number, batch[i + 1] as boolean, batch[i + 2]);
    if (poisoned) send({ type: 'results', results: [], poisoned });
  }
  Atomics.add(bell, BELL_RESULTS, 1);
}

function sendOne(id: number, ok: boolean, payload: unknown): void {
  try {
    send({ type: 'results', results: [id, ok, payload] });
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    const notCloneable = Object.assign(new Error(`fn's result cannot be sent back to the calling thread: ${reason}`), {
      code: 'ERR_NETNS_NOT_CLONEABLE',
    });
    send({ type: 'results', results: [id, false, serializeError(notCloneable)] });
  }
}

function pushResult(id: number, ok: boolean, value: unknown): void {
  results.push(id, ok, ok ? value : serializeError(explainReferenceError(value)));
}

function define(fnId: number, source: string, caller: string | null): void {
  try {
    functions.set(fnId, { fn: compileFunction(source, caller) });
  } catch (error) {
    functions.set(fnId, { error });
  }
}

// Leaves the namespace; a thread that cannot is reported and ends here.
function finish(id: number, ok: boolean, value: unknown): void {
  const restoreError = native.restore();
  pushResult(id, ok, value);
  if (!restoreError) return;
  // The pool learns of it in the same message as the result, so it never
  // hands this thread another task.
  flushResults(serializeError(fromNative(restoreError)));
  process.exit(1);
}

/** Runs tasks from `start`; returns true if it stopped to await an async fn. */
function runFrom(tasks: unknown[], start: number): boolean {
  busy = true;
  for (let i = start; i < tasks.length; i += TASK_FIELDS) {
    const id = tasks[i] as number;
    const compiled = functions.get(tasks[i + 2] as number)!;
    if ('error' in compiled) {
      pushResult(id, false, compiled.error);
      continue;
    }
    try {
      native.enter(tasks[i + 1] as number);
    } catch (error) {
      pushResult(id, false, fromNative(error));
      continue;
    }
    let ok = true;
    let value: unknown;
    try {
      value = compiled.fn(...(tasks[i + 3] as unknown[]));
    } catch (error) {
      ok = false;
      value = error;
    }
    if (ok && isThenable(value)) {
      flushResults(); // callers already done need not wait for this one
      const next = i + TASK_FIELDS;
      Promise.resolve(value)
        .then(
          (settled) => finish(id, true, settled),
          (error: unknown) => finish(id, false, error),
        )
        .then(() => {
          if (!runFrom(tasks, next)) serveUntilIdle();
        });
      return true;
    }
    finish(id, ok, value);
  }
  busy = false;
  flushResults();
  return false;
}

function processMessage(message: ToWorker): void {
  if (message.type === 'nested-result') {
    nestedWaiters.get(message.id)?.(message.outcome);
    nestedWaiters.delete(message.id);
    return;
  }
  if (busy) {
    backlog.push(message);
    return;
  }
  if (message.forget) functions.clear();
  for (const [fnId, source, caller] of message.defs) define(fnId, source, caller);
  runFrom(message.tasks, 0);
}

// Handles whatever is queued, then polls the doorbell for a short while.
// Returns to the event loop once nothing arrives or an async fn is pending.
function serveUntilIdle(): void {
  while (!busy) {
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
    if (!spinUntilRung(bell, BELL_TASKS, seen, IDLE_SPIN_US)) return;
  }
}

const hook: PoolWorkerHook = {
  runNested(task) {
    const id = nextNestedId++;
    send({ type: 'nested', id, ...task });
    return new Promise((resolve) => nestedWaiters.set(id, resolve));
  },
};
(globalThis as Record<symbol, unknown>)[POOL_WORKER_HOOK] = hook;

port.on('message', (message: ToWorker) => {
  processMessage(message);
  serveUntilIdle();
});
