// The pool of worker_threads that run withNetNS tasks. It lives on the thread
// that first calls withNetNS (never a switched thread), creates workers lazily
// up to a bound, sends queued tasks in batches, replaces workers that die or
// fail to restore, and keeps the process alive only while tasks are pending.
import { stat } from 'node:fs';
import { availableParallelism } from 'node:os';
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads';
import { abortError, ErrorCodes, netnsError } from '../core/errors.js';
import type { NestedTask } from './nested-hook.js';
import {
  BELL_RESULTS,
  BELL_TASKS,
  deserializeError,
  RESULT_FIELDS,
  serializeError,
  spinUntilRung,
  type FromWorker,
  type FunctionDef,
  type Outcome,
  type SerializedError,
  type ToWorker,
} from './wire.js';

export interface PoolStats {
  /** Live worker threads. */
  workers: number;
  /** Workers running a task right now. */
  busy: number;
  /** Tasks waiting for a worker. */
  queued: number;
  /** Tasks that ran to completion (successfully or not). */
  tasksRun: number;
  /** Workers thrown away instead of reused: failed restores, aborts, crashes. */
  threadsDiscarded: number;
  /** Restores that failed (each also emitted a NETNS_RESTORE_FAILED warning). */
  restoreFailures: number;
}

export interface PoolTask {
  fd: number;
  source: string;
  caller: string | null;
  args: unknown[];
  signal?: AbortSignal | undefined;
  /** Called once when the task settles, e.g. to release the namespace handle. */
  release?: (() => void) | undefined;
  /** Nested calls may exceed the bound so that a parent waiting on them can't deadlock. */
  nested?: boolean;
}

const MAX_BATCH = 256;
// Workers that die before answering at all (e.g. the addon fails to load in
// them) are not replaced forever: after this many in a row the pool is broken
// and calls fail at once, until closePool() starts a new one.
const MAX_FAILED_STARTS = 3;
const MAX_FUNCTIONS = 4096;
// A caller awaiting one call at a time gets its result without a trip through
// the event loop if the worker answers within this budget; repeated misses
// turn the wait off for a while, and a run of hits yields to the event loop.
const CALLER_SPIN_US = 40;
const MISSES_BEFORE_BACKOFF = 4;
const SPIN_BACKOFF_CALLS = 32;
const SPINS_PER_TURN = 256;
const workerUrl = new URL('./worker.js', import.meta.url);

class Pending {
  settled = false;
  worker: PoolWorker | null = null;
  onAbort: (() => void) | null = null;
  readonly promise: Promise<unknown>;
  resolve!: (value: unknown) => void;
  reject!: (error: unknown) => void;

  constructor(
    readonly id: number,
    readonly fnId: number,
    readonly task: PoolTask,
  ) {
    this.promise = new Promise((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
  }
}

class PoolWorker {
  readonly thread: Worker;
  readonly port: MessagePort;
  readonly bell = new Int32Array(new SharedArrayBuffer(8));
  readonly running = new Map<number, Pending>();
  readonly known = new Set<number>();
  forget = false;
  dead = false;
  /** Terminated by the pool and not yet gone. */
  exiting = false;
  /** Has answered at least once, so it started properly. */
  answered = false;
  nestedWaits = 0;
  exitCause: unknown = undefined;

  constructor() {
    const { port1, port2 } = new MessageChannel();
    this.port = port1;
    this.thread = new Worker(workerUrl, {
      workerData: { port: port2, bell: this.bell.buffer },
      transferList: [port2],
    });
    this.setActive(false);
  }

  setActive(active: boolean): void {
    if (active) {
      this.thread.ref();
      this.port.ref();
    } else {
      this.thread.unref();
      this.port.unref();
    }
  }

  post(message: ToWorker): void {
    this.port.postMessage(message);
    Atomics.add(this.bell, BELL_TASKS, 1);
  }
}

export class WorkerPool {
  maxWorkers: number;
  readonly #workers = new Set<PoolWorker>();
  readonly #idle: PoolWorker[] = [];
  readonly #functions = new Map<string, number>();
  #queue: Pending[] = [];
  #queueHead = 0;
  #nextId = 1;
  #nextFnId = 1;
  #dispatchScheduled = false;
  #primed = false;
  #spinBackoff = 0;
  #spinMisses = 0;
  #failedStarts = 0;
  #broken: Error | undefined;
  #spinsThisTurn = 0;
  #pendingCalls = 0;
  #exitingWorkers = 0;
  #idleWaiters: (() => void)[] = [];
  #tasksRun = 0;
  #threadsDiscarded = 0;
  #restoreFailures = 0;

  constructor(maxWorkers = availableParallelism()) {
    this.maxWorkers = checkedSize(maxWorkers);
  }

  run(task: PoolTask): Promise<unknown> {
    const pending = new Pending(this.#nextId++, this.#functionId(task.source, task.caller), task);
    this.#pendingCalls++;
    if (this.#broken) {
      this.#settle(pending, false, this.#broken);
      return pending.promise;
    }
    if (task.signal) this.#watchAbort(pending, task.signal);
    if (!pending.settled) {
      this.#queue.push(pending);
      this.#scheduleDispatch();
    }
    return pending.promise;
  }

  stats(): PoolStats {
    let busy = 0;
    for (const worker of this.#workers) if (worker.running.size > 0) busy++;
    return {
      workers: this.#workers.size,
      busy,
      queued: this.#queued(),
      tasksRun: this.#tasksRun,
      threadsDiscarded: this.#threadsDiscarded,
      restoreFailures: this.#restoreFailures,
    };
  }

  /** Resolves once no call is pending and every discarded thread has exited. */
  idle(): Promise<void> {
    if (this.#isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  #isIdle(): boolean {
    return this.#pendingCalls === 0 && this.#exitingWorkers === 0;
  }

  #wakeIdleWaiters(): void {
    if (this.#idleWaiters.length === 0 || !this.#isIdle()) return;
    const waiters = this.#idleWaiters;
    this.#idleWaiters = [];
    for (const wake of waiters) wake();
  }

  /** Terminates every worker; pending calls reject. */
  async destroy(): Promise<void> {
    const exits = [...this.#workers].map((worker) => {
      worker.dead = true;
      return worker.thread.terminate();
    });
    await Promise.all(exits);
  }

  /** Changes the bound; idle workers above it are let go. */
  resize(maxWorkers: number): void {
    this.maxWorkers = checkedSize(maxWorkers);
    while (this.#workers.size > this.maxWorkers && this.#idle.length > 0) {
      const worker = this.#idle.pop()!;
      worker.dead = true;
      this.#workers.delete(worker);
      void worker.thread.terminate();
    }
    this.#dispatch();
  }

  #functionId(source: string, caller: string | null): number {
    const key = caller === null ? source : `${caller}\0${source}`;
    let fnId = this.#functions.get(key);
    if (fnId === undefined) {
      if (this.#functions.size >= MAX_FUNCTIONS) this.#forgetFunctions();
      fnId = this.#nextFnId++;
      this.#functions.set(key, fnId);
    }
    return fnId;
  }

  // Bounds memory when callers generate endless distinct sources.
  #forgetFunctions(): void {
    this.#functions.clear();
    for (const worker of this.#workers) {
      worker.known.clear();
      worker.forget = true;
    }
  }

  #scheduleDispatch(): void {
    if (this.#dispatchScheduled) return;
    this.#dispatchScheduled = true;
    queueMicrotask(() => {
      this.#dispatchScheduled = false;
      this.#dispatch();
    });
  }

  #dispatch(): void {
    this.#primeThreadpool();
    while (this.#queued() > 0) {
      const worker = this.#idle.pop() ?? this.#spawn();
      if (!worker) return;
      const batch = this.#takeBatch();
      if (batch.length === 0) {
        this.#idle.push(worker);
        return;
      }
      this.#send(worker, batch);
    }
  }

  // libuv creates its shared threadpool from whichever thread first queues
  // work, and its threads inherit that thread's namespace. Make sure that is
  // this thread, before any worker can switch.
  #primeThreadpool(): void {
    if (this.#primed) return;
    this.#primed = true;
    stat('/', () => {});
  }

  #queued(): number {
    return this.#queue.length - this.#queueHead;
  }

  #capacity(): number {
    let nestedWaits = 0;
    for (const worker of this.#workers) nestedWaits += worker.nestedWaits;
    return this.maxWorkers + nestedWaits;
  }

  #spawn(): PoolWorker | undefined {
    const overBound = this.#workers.size >= this.#capacity();
    if (overBound && !this.#queue[this.#queueHead]?.task.nested) return undefined;
    const worker = new PoolWorker();
    this.#workers.add(worker);
    worker.port.on('message', (message: FromWorker) => this.#onMessage(worker, message));
    worker.thread.on('error', (error) => {
      worker.exitCause = error;
    });
    worker.thread.on('exit', () => this.#onExit(worker));
    return worker;
  }

  #takeBatch(): Pending[] {
    const slots = Math.max(1, this.#idle.length + 1 + Math.max(0, this.#capacity() - this.#workers.size));
    const size = Math.min(MAX_BATCH, Math.ceil(this.#queued() / slots));
    const batch: Pending[] = [];
    while (batch.length < size && this.#queued() > 0) {
      const next = this.#queue[this.#queueHead]!;
      // A call that may be aborted runs alone: aborting terminates its worker.
      if (next.task.signal && batch.length > 0) break;
      this.#queueHead++;
      if (next.settled) continue;
      batch.push(next);
      if (next.task.signal) break;
    }
    this.#compactQueue();
    return batch;
  }

  #compactQueue(): void {
    if (this.#queueHead === this.#queue.length) {
      this.#queue = [];
      this.#queueHead = 0;
    } else if (this.#queueHead > 1024 && this.#queueHead * 2 > this.#queue.length) {
      this.#queue = this.#queue.slice(this.#queueHead);
      this.#queueHead = 0;
    }
  }

  #send(worker: PoolWorker, batch: Pending[]): void {
    if (worker.running.size === 0) worker.setActive(true);
    const defs: FunctionDef[] = [];
    const tasks: unknown[] = [];
    for (const pending of batch) {
      pending.worker = worker;
      worker.running.set(pending.id, pending);
      const { fd, source, caller, args } = pending.task;
      if (!worker.known.has(pending.fnId)) {
        worker.known.add(pending.fnId);
        defs.push([pending.fnId, source, caller]);
      }
      tasks.push(pending.id, fd, pending.fnId, args);
    }
    const forget = worker.forget;
    worker.forget = false;
    const seenResults = Atomics.load(worker.bell, BELL_RESULTS);
    try {
      worker.post({ type: 'run', forget, defs, tasks });
    } catch {
      this.#sendOneByOne(worker, batch, forget, defs);
      return;
    }
    if (batch.length === 1) this.#awaitBriefly(worker, seenResults);
  }

  // Some task's arguments cannot be cloned: send individually so only it fails.
  #sendOneByOne(worker: PoolWorker, batch: Pending[], forget: boolean, defs: FunctionDef[]): void {
    worker.post({ type: 'run', forget, defs, tasks: [] });
    for (const pending of batch) {
      try {
        worker.post({ type: 'run', forget: false, defs: [], tasks: [pending.id, pending.task.fd, pending.fnId, pending.task.args] });
      } catch (error) {
        worker.running.delete(pending.id);
        const reason = error instanceof Error ? error.message : String(error);
        this.#settle(
          pending,
          false,
          netnsError(ErrorCodes.NOT_CLONEABLE, `fn's arguments cannot be sent to a worker thread: ${reason}`, {
            cause: error,
          }),
        );
      }
    }
    this.#maybeIdle(worker);
  }

  #awaitBriefly(worker: PoolWorker, seenResults: number): void {
    if (this.#spinBackoff > 0) {
      this.#spinBackoff--;
      return;
    }
    if (this.#spinsThisTurn++ === 0) setImmediate(() => (this.#spinsThisTurn = 0));
    if (this.#spinsThisTurn > SPINS_PER_TURN) return;
    if (!spinUntilRung(worker.bell, BELL_RESULTS, seenResults, CALLER_SPIN_US)) {
      if (++this.#spinMisses >= MISSES_BEFORE_BACKOFF) {
        this.#spinMisses = 0;
        this.#spinBackoff = SPIN_BACKOFF_CALLS;
      }
      return;
    }
    this.#spinMisses = 0;
    for (let received; (received = receiveMessageOnPort(worker.port)); ) {
      this.#onMessage(worker, received.message as FromWorker);
    }
  }

  #onMessage(worker: PoolWorker, message: FromWorker): void {
    switch (message.type) {
      case 'results':
        if (message.poisoned) this.#onPoisoned(worker, deserializeError(message.poisoned));
        this.#onResults(worker, message.results);
        return;
      case 'nested':
        this.#runNested(worker, message);
        return;
    }
  }

  #onResults(worker: PoolWorker, results: unknown[]): void {
    worker.answered = true;
    this.#failedStarts = 0;
    for (let i = 0; i < results.length; i += RESULT_FIELDS) {
      const pending = worker.running.get(results[i] as number);
      if (!pending) continue;
      worker.running.delete(pending.id);
      this.#tasksRun++;
      const ok = results[i + 1] as boolean;
      const payload = results[i + 2];
      this.#settle(pending, ok, ok ? payload : deserializeError(payload as SerializedError));
    }
    this.#maybeIdle(worker);
  }

  #maybeIdle(worker: PoolWorker): void {
    if (worker.dead || worker.running.size > 0) return;
    worker.setActive(false);
    this.#idle.push(worker);
    this.#dispatch();
  }

  #onPoisoned(worker: PoolWorker, error: Error): void {
    this.#restoreFailures++;
    process.emitWarning(
      `a netns pool thread could not return to its own network namespace (${error.message}); it was discarded`,
      { code: 'NETNS_RESTORE_FAILED' },
    );
    this.#discard(worker);
  }

  #runNested(worker: PoolWorker, request: NestedTask & { id: number }): void {
    worker.nestedWaits++;
    const reply = (outcome: Outcome) => {
      worker.nestedWaits--;
      if (!worker.dead) worker.post({ type: 'nested-result', id: request.id, outcome });
    };
    const { fd, source, caller, args } = request;
    this.run({ fd, source, caller, args, nested: true }).then(
      (value) => reply({ ok: true, value }),
      (error: unknown) => reply({ ok: false, error: serializeError(error) }),
    );
  }

  #onExit(worker: PoolWorker): void {
    if (!worker.dead) this.#threadsDiscarded++;
    if (worker.exiting) this.#exitingWorkers--;
    worker.dead = true;
    worker.port.close();
    this.#workers.delete(worker);
    const idleIndex = this.#idle.indexOf(worker);
    if (idleIndex >= 0) this.#idle.splice(idleIndex, 1);
    for (const pending of worker.running.values()) {
      this.#settle(
        pending,
        false,
        netnsError(ErrorCodes.WORKER_EXITED, 'the worker thread running fn exited before fn settled', {
          cause: worker.exitCause,
        }),
      );
    }
    worker.running.clear();
    if (!worker.answered && !worker.exiting && ++this.#failedStarts >= MAX_FAILED_STARTS) this.#failQueue(worker.exitCause);
    if (this.#queued() > 0) this.#scheduleDispatch();
    this.#wakeIdleWaiters();
  }

  #failQueue(cause: unknown): void {
    this.#broken = netnsError(ErrorCodes.WORKER_EXITED, `netns pool threads keep dying before they start: ${String((cause as Error)?.message ?? cause)}`, { cause });
    while (this.#queued() > 0) this.#settle(this.#queue[this.#queueHead++]!, false, this.#broken);
    this.#compactQueue();
  }

  #discard(worker: PoolWorker): void {
    if (!worker.dead) {
      worker.dead = true;
      this.#threadsDiscarded++;
    }
    if (!worker.exiting) {
      worker.exiting = true;
      this.#exitingWorkers++;
    }
    void worker.thread.terminate();
  }

  #watchAbort(pending: Pending, signal: AbortSignal): void {
    if (signal.aborted) {
      this.#settle(pending, false, abortError(signal));
      return;
    }
    pending.onAbort = () => {
      const worker = pending.worker;
      this.#settle(pending, false, abortError(signal));
      if (worker?.running.delete(pending.id)) this.#discard(worker);
    };
    signal.addEventListener('abort', pending.onAbort, { once: true });
  }

  #settle(pending: Pending, ok: boolean, value: unknown): void {
    if (pending.settled) return;
    pending.settled = true;
    if (pending.onAbort) pending.task.signal?.removeEventListener('abort', pending.onAbort);
    pending.task.release?.();
    this.#pendingCalls--;
    if (ok) pending.resolve(value);
    else pending.reject(value);
    this.#wakeIdleWaiters();
  }
}

function checkedSize(maxWorkers: number): number {
  if (!Number.isSafeInteger(maxWorkers) || maxWorkers < 1) {
    throw netnsError(ErrorCodes.INVALID_ARG, `maxWorkers must be a positive integer, got ${maxWorkers}`);
  }
  return maxWorkers;
}
