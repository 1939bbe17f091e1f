// The pool of worker_threads that run withNetNS calls. It lives on the thread
// that first calls withNetNS (never a switched thread).
//
// Rules, in the order they matter:
// - A call is claimed by its worker before it runs (see wire.ts); until then
//   the pool may take it back: to abort it without killing a thread, to move
//   it off a worker that is stuck, retiring or gone, or to close the pool.
// - Top-level calls use at most `maxWorkers` workers. Nested calls (a fn is
//   waiting for them) go first, and may add a worker beyond the bound for
//   each worker that is waiting: enough to always progress, never more.
//   Workers above the bound are let go as soon as they are idle.
// - Workers start lazily, are replaced when they die, and keep the process
//   alive only while they have calls.
import { fs, util, workerThreads } from '../../core/builtins.js';
import { abortError, ErrorCodes, netnsError } from '../../core/errors.js';
import { CALLER_SPIN_US, SpinPolicy, spinUntilRung, BELL_RESULTS } from '../doorbell.js';
import { deserializeError, RESULT_FIELDS, serializeError, type FromWorker, type NestedTarget, type Outcome, type SerializedError } from '../wire.js';
import { AbortWatch } from './abort-watch.js';
import { FunctionRegistry } from './function-registry.js';
import { PendingCall, type PoolTask } from './pending-call.js';
import { PoolWorker } from './pool-worker.js';
import { laneOf, TaskQueue, type Lane } from './task-queue.js';

export type { PoolTask } from './pending-call.js';

/** poolStats(): the withNetNS thread pool now (workers, busy, queued) and counts since it started. */
export interface PoolStats {
  /** Live worker threads. */
  workers: number;
  /** Workers running a call right now. */
  busy: number;
  /** Calls waiting for a worker. */
  queued: number;
  /** Calls that ran to completion (successfully or not). */
  tasksRun: number;
  /** Workers thrown away instead of reused: failed restores, aborts, crashes, work left behind. */
  threadsDiscarded: number;
  /** Restores that failed (each also emitted a NETNS_RESTORE_FAILED warning). */
  restoreFailures: number;
}

/**
 * Opens a nested call's target on this thread; the pool releases it when the
 * call settles. `orphaned` tells whether the worker that asked is gone.
 */
export type OpenTarget = (target: NestedTarget, orphaned: () => boolean) => { fd: number; release: () => void };

const MAX_BATCH = 256;
// Workers that die before they are ready (e.g. the addon fails to load in
// them) are not replaced forever: after this many in a row the pool is broken.
const MAX_FAILED_STARTS = 3;
const EXTRA_IDLE_MS = 500;
const STEAL_AFTER_MS = 2;

export class WorkerPool {
  maxWorkers: number;
  readonly #openTarget: OpenTarget;
  readonly #workers = new Set<PoolWorker>();
  readonly #idle: PoolWorker[] = [];
  readonly #queue = new TaskQueue();
  readonly #registry = new FunctionRegistry();
  readonly #spin = new SpinPolicy();
  readonly #aborts = new AbortWatch<PendingCall>((call, signal) => this.#abort(call, signal));
  #nextId = 1;
  #dispatchScheduled = false;
  #primed = false;
  #failedStarts = 0;
  #broken: Error | undefined;
  #closed: Error | undefined;
  #pendingCalls = 0;
  #exitingWorkers = 0;
  #idleWaiters: (() => void)[] = [];
  #tasksRun = 0;
  #threadsDiscarded = 0;
  #restoreFailures = 0;
  #trimTimer: NodeJS.Timeout | undefined;
  #balanceTimer: NodeJS.Timeout | undefined;
  #shrinking = false;

  constructor(maxWorkers: number, openTarget: OpenTarget) {
    this.maxWorkers = checkedSize(maxWorkers);
    this.#openTarget = openTarget;
  }

  run(task: PoolTask): Promise<unknown> {
    const call = new PendingCall(this.#nextId++, this.#registry.idOf(task.fn), task);
    this.#pendingCalls++;
    const refused = this.#closed ?? this.#broken;
    if (refused) {
      this.#settle(call, false, refused);
      return call.promise;
    }
    if (task.signal) this.#watchAbort(call, task.signal);
    if (!call.settled) {
      this.#queue.push(call);
      this.#scheduleDispatch();
    }
    return call.promise;
  }

  stats(): PoolStats {
    let busy = 0;
    for (const worker of this.#workers) if (worker.running.size > 0) busy++;
    return {
      workers: this.#workers.size,
      busy,
      queued: this.#queue.size(),
      tasksRun: this.#tasksRun,
      threadsDiscarded: this.#threadsDiscarded,
      restoreFailures: this.#restoreFailures,
    };
  }

  /** Resolves once no call is pending, threads beyond the bound are gone, and every thread let go has exited. */
  idle(): Promise<void> {
    if (this.#isIdle()) return Promise.resolve();
    // Someone waits for a trim or a verdict: those must keep the process alive.
    this.#trimTimer?.ref();
    this.#holdJudgingWorkers();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  /** Rejects every call, started or not, with ERR_NETNS_POOL_CLOSED and ends every worker. */
  async close(): Promise<void> {
    clearTimeout(this.#trimTimer);
    clearTimeout(this.#balanceTimer);
    this.#closed ??= netnsError(ErrorCodes.POOL_CLOSED, 'the netns pool was closed before this call finished');
    // First take back every call not started, in one quick pass: none of them
    // may start while the threads are being ended.
    for (const worker of this.#workers) for (const call of worker.running.values()) call.revoke();
    for (const call of this.#queue.drain()) this.#settle(call, false, this.#closed);
    const exits: Promise<unknown>[] = [];
    for (const worker of [...this.#workers]) {
      for (const call of worker.running.values()) this.#settle(call, false, this.#closed);
      worker.running.clear();
      exits.push(new Promise((resolve) => worker.thread.once('exit', resolve)));
      this.#letGo(worker, false);
    }
    await Promise.all(exits);
  }

  /** Changes the bound; workers above it are let go as soon as they are idle. */
  resize(maxWorkers: number): void {
    this.maxWorkers = checkedSize(maxWorkers);
    this.#shrinking = this.#workers.size > this.maxWorkers;
    this.#dispatch();
  }

  #isIdle(): boolean {
    if (this.#pendingCalls > 0 || this.#exitingWorkers > 0 || this.#workers.size > this.maxWorkers) return false;
    for (const worker of this.#workers) if (worker.judging) return false;
    return true;
  }

  #wakeIdleWaiters(): void {
    if (this.#idleWaiters.length === 0 || !this.#isIdle()) return;
    const waiters = this.#idleWaiters;
    this.#idleWaiters = [];
    for (const wake of waiters) wake();
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
    if (this.#closed || this.#broken) return;
    this.#primeThreadpool();
    this.#dispatchLane('nested');
    this.#dispatchLane('top');
    this.#balance();
    this.#trimIdle();
    if (this.#queue.size() > 0) this.#holdJudgingWorkers();
  }

  // A worker's verdict is awaited by whoever waits for idleness, and by calls
  // queued meanwhile (it may free the worker for them): it keeps the process alive.
  #holdJudgingWorkers(): void {
    for (const worker of this.#workers) if (worker.judging) worker.setActive(true);
  }

  #dispatchLane(lane: Lane): void {
    while (this.#queue.size(lane) > 0 && this.#laneHasRoom(lane)) {
      const worker = this.#idle.pop() ?? this.#spawn();
      if (!worker) return;
      const batch = this.#queue.take(lane, this.#batchSize(lane));
      if (batch.length === 0) {
        this.#idle.push(worker);
        return;
      }
      this.#send(worker, batch);
    }
  }

  // Workers that are waiting for nested calls do no work: each may be
  // replaced by one more thread, so that nested calls always progress.
  #waitingWorkers(): number {
    let waiting = 0;
    for (const worker of this.#workers) if (worker.nestedWaits > 0) waiting++;
    return waiting;
  }

  #limit(): number {
    return this.maxWorkers + this.#waitingWorkers();
  }

  #topLevelWorkers(): number {
    let count = 0;
    for (const worker of this.#workers) if (worker.runsTopLevelCall()) count++;
    return count;
  }

  #laneHasRoom(lane: Lane): boolean {
    return lane === 'nested' || this.#topLevelWorkers() < this.maxWorkers;
  }

  #batchSize(lane: Lane): number {
    const available = this.#idle.length + 1 + Math.max(0, this.#limit() - this.#workers.size);
    const slots = lane === 'top' ? Math.min(available, Math.max(1, this.maxWorkers - this.#topLevelWorkers())) : available;
    return Math.min(MAX_BATCH, Math.ceil(this.#queue.size(lane) / slots));
  }

  // An idle worker takes half of the calls waiting on another worker (behind
  // a slow or endless fn, or a thread still starting), once they have waited
  // long enough that the other worker is not simply about to take them.
  #balance(): void {
    while (this.#queue.size() === 0) {
      const waitedSince = performance.now() - STEAL_AFTER_MS;
      const victim = this.#longestBacklog(waitedSince);
      if (!victim) return;
      const open = victim
        .openCalls()
        .filter((call) => call.sentAt <= waitedSince && (laneOf(call) === 'nested' || this.#laneHasRoom('top')));
      if (open.length === 0) return;
      // A new thread is worth starting only if the victim has started: else it is the faster one.
      const thief = this.#idle.pop() ?? (victim.ready ? this.#spawn() : undefined);
      if (!thief) return;
      const taken = open.slice(Math.floor(open.length / 2)).filter((call) => this.#takeBack(victim, call));
      if (taken.length === 0) {
        this.#idle.push(thief);
        return;
      }
      this.#send(thief, taken);
      this.#maybeIdle(victim);
    }
  }

  #longestBacklog(waitedSince: number): PoolWorker | undefined {
    let longest: PoolWorker | undefined;
    let most = 0;
    let youngest = Infinity;
    for (const worker of this.#workers) {
      let waiting = 0;
      for (const call of worker.running.values()) {
        if (!call.isOpen()) continue;
        if (call.sentAt <= waitedSince) waiting++;
        else youngest = Math.min(youngest, call.sentAt);
      }
      if (waiting > most) {
        most = waiting;
        longest = worker;
      }
    }
    if (!longest && youngest !== Infinity) this.#scheduleBalance(youngest + STEAL_AFTER_MS - performance.now());
    return longest;
  }

  #scheduleBalance(delayMs: number): void {
    if (this.#balanceTimer) return;
    this.#balanceTimer = setTimeout(() => {
      this.#balanceTimer = undefined;
      if (!this.#closed) this.#balance();
    }, Math.max(1, delayMs)).unref();
  }

  // Threads beyond the bound served nested calls: they go once idle for a
  // while (a waiting fn often nests again at once), or at once after resize
  // made the bound smaller.
  #trimIdle(): void {
    if (this.#workers.size <= this.maxWorkers) this.#shrinking = false;
    while (this.#idle.length > 0 && this.#workers.size > this.#limit()) {
      const longestIdle = this.#idle[0]!;
      const waitMs = longestIdle.idleSince + EXTRA_IDLE_MS - performance.now();
      if (!this.#shrinking && waitMs > 0) {
        this.#scheduleTrim(waitMs);
        return;
      }
      this.#letGo(this.#idle.shift()!, false);
    }
  }

  #scheduleTrim(delayMs: number): void {
    if (this.#trimTimer) return;
    this.#trimTimer = setTimeout(() => {
      this.#trimTimer = undefined;
      this.#trimIdle();
    }, delayMs);
    if (this.#idleWaiters.length === 0) this.#trimTimer.unref();
  }

  // libuv creates its shared threadpool from whichever thread first queues
  // work, and its threads inherit that thread's namespace. Make sure that is
  // this thread, before any worker can switch.
  #primeThreadpool(): void {
    if (this.#primed) return;
    this.#primed = true;
    fs().stat('/', () => {});
  }

  #spawn(): PoolWorker | undefined {
    if (this.#workers.size >= this.#limit()) return undefined;
    let worker: PoolWorker;
    try {
      worker = new PoolWorker(this.#registry);
    } catch (error) {
      this.#failQueue(`cannot start a netns pool thread${describeCause(error)}`, error);
      return undefined;
    }
    this.#workers.add(worker);
    worker.port.on('message', (message: FromWorker) => this.#onMessages(worker, message));
    worker.thread.on('error', (error) => {
      worker.exitCause = error;
    });
    worker.thread.on('exit', (exitCode) => this.#onExit(worker, exitCode));
    // Listening for messages refs the port again: a worker no call reaches (a
    // thief whose victim finished first) must not keep the process alive.
    worker.setActive(false);
    return worker;
  }

  #send(worker: PoolWorker, batch: PendingCall[]): void {
    if (worker.running.size === 0) worker.setActive(true);
    const seenResults = Atomics.load(worker.bell, BELL_RESULTS);
    try {
      worker.send(batch, this.#registry);
    } catch {
      this.#sendOneByOne(worker, batch);
      return;
    }
    if (batch.length === 1) this.#awaitBriefly(worker, seenResults);
  }

  // Some call's arguments cannot be cloned: send one by one so only it fails.
  #sendOneByOne(worker: PoolWorker, batch: PendingCall[]): void {
    for (const call of batch) {
      try {
        worker.send([call], this.#registry);
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        this.#settle(call, false, netnsError(ErrorCodes.NOT_CLONEABLE, `fn's arguments cannot be sent to a worker thread: ${reason}`, { cause: error }));
      }
    }
    this.#maybeIdle(worker);
  }

  // A caller awaiting one call at a time gets its result without a trip
  // through the event loop when the worker answers within a few microseconds.
  #awaitBriefly(worker: PoolWorker, seenResults: number): void {
    if (!this.#spin.shouldSpin()) return;
    const hit = spinUntilRung(worker.bell, BELL_RESULTS, seenResults, CALLER_SPIN_US);
    this.#spin.record(hit);
    if (hit) this.#drainPort(worker);
  }

  #drainPort(worker: PoolWorker): void {
    const { receiveMessageOnPort } = workerThreads();
    for (let received; (received = receiveMessageOnPort(worker.port)); ) this.#onMessage(worker, received.message as FromWorker);
  }

  // A worker posts one message per result: take every message waiting at once.
  #onMessages(worker: PoolWorker, first: FromWorker): void {
    this.#onMessage(worker, first);
    this.#drainPort(worker);
  }

  #onMessage(worker: PoolWorker, message: FromWorker): void {
    switch (message.type) {
      case 'ready':
        worker.ready = true;
        this.#failedStarts = 0;
        return;
      case 'results':
        if (message.judging) worker.judging = true;
        this.#onResults(worker, message.results);
        if (message.poisoned) this.#onPoisoned(worker, message.poisoned);
        else this.#maybeIdle(worker);
        return;
      case 'verdict': // also unasked: what a call's drained reactions made is still alive
        worker.judging = false;
        if (message.retire) this.#letGo(worker, true);
        else this.#maybeIdle(worker);
        this.#wakeIdleWaiters();
        return;
      case 'nested':
        this.#runNested(worker, message);
        return;
      case 'nested-abort':
        worker.nestedCalls.get(message.id)?.abort('aborted by the fn that asked for it');
        return;
    }
  }

  #onResults(worker: PoolWorker, results: unknown[]): void {
    for (let i = 0; i < results.length; i += RESULT_FIELDS) {
      const call = worker.running.get(results[i] as number);
      if (!call) continue;
      worker.running.delete(call.id);
      this.#tasksRun++;
      const ok = results[i + 1] as boolean;
      const payload = results[i + 2];
      this.#settle(call, ok, ok ? payload : deserializeError(payload as SerializedError));
    }
  }

  #maybeIdle(worker: PoolWorker): void {
    if (worker.gone || worker.running.size > 0) return;
    worker.setActive(false); // a worker judging a call's leftovers holds the process no more than an idle one
    if (worker.judging) return;
    worker.idleSince = performance.now();
    this.#idle.push(worker);
    this.#dispatch();
  }

  #onPoisoned(worker: PoolWorker, error: SerializedError): void {
    this.#restoreFailures++;
    process.emitWarning(
      `a netns pool thread could not return to its own network namespace (${error.message}); it was discarded`,
      { code: 'NETNS_RESTORE_FAILED' },
    );
    this.#letGo(worker, true);
  }

  #runNested(worker: PoolWorker, request: Extract<FromWorker, { type: 'nested' }>): void {
    const reply = (outcome: Outcome) => {
      worker.nestedWaits--;
      worker.nestedCalls.delete(request.id);
      worker.postNestedResult({ type: 'nested-result', id: request.id, outcome });
      this.#dispatch();
    };
    worker.nestedWaits++;
    const orphaned = new AbortController();
    worker.nestedCalls.set(request.id, orphaned);
    let opened: { fd: number; release: () => void };
    try {
      opened = this.#openTarget(request.target, () => worker.gone);
    } catch (error) {
      reply({ ok: false, error: serializeError(error) });
      return;
    }
    const { fn, args } = request;
    this.run({ fd: opened.fd, fn, args, nested: true, release: opened.release, signal: orphaned.signal }).then(
      (value) => reply({ ok: true, value }),
      (error: unknown) => reply({ ok: false, error: serializeError(error) }),
    );
  }

  /** Removes a worker from the pool and ends its thread; calls it has not started go back to the queue. */
  #letGo(worker: PoolWorker, discarded: boolean): void {
    if (worker.gone) return;
    this.#remove(worker, discarded);
    this.#exitingWorkers++;
    this.#requeueOpenCalls(worker);
    this.#abandonNestedCalls(worker);
    void worker.thread.terminate();
    this.#scheduleDispatch();
  }

  #remove(worker: PoolWorker, discarded: boolean): void {
    worker.gone = true;
    if (discarded) this.#threadsDiscarded++;
    this.#workers.delete(worker);
    const idleIndex = this.#idle.indexOf(worker);
    if (idleIndex >= 0) this.#idle.splice(idleIndex, 1);
  }

  #requeueOpenCalls(worker: PoolWorker): void {
    const taken = worker.openCalls().filter((call) => this.#takeBack(worker, call));
    this.#queue.returnTaken(taken);
  }

  // Nobody waits for the nested calls of a worker that is gone: abort them,
  // so that they hold no thread and no namespace.
  #abandonNestedCalls(worker: PoolWorker): void {
    for (const orphaned of worker.nestedCalls.values()) orphaned.abort(netnsError(ErrorCodes.WORKER_EXITED, 'the fn waiting for this nested call has ended'));
    worker.nestedCalls.clear();
  }

  #takeBack(worker: PoolWorker, call: PendingCall): boolean {
    if (!call.revoke()) return false;
    worker.running.delete(call.id);
    return true;
  }

  #onExit(worker: PoolWorker, exitCode: number): void {
    this.#drainPort(worker); // results it posted before it ended still count
    worker.port.close();
    const letGo = worker.gone;
    if (letGo) this.#exitingWorkers--;
    else this.#remove(worker, true);
    this.#requeueOpenCalls(worker);
    this.#abandonNestedCalls(worker);
    const cause = worker.exitCause;
    for (const call of worker.running.values()) {
      this.#settle(call, false, netnsError(ErrorCodes.WORKER_EXITED, `the worker thread running fn exited before fn settled${describeCause(cause)}`, { cause }));
    }
    worker.running.clear();
    if (!letGo && !worker.ready && ++this.#failedStarts >= MAX_FAILED_STARTS) {
      this.#failQueue(`netns pool threads keep dying before they start${describeCause(cause, exitCode)}`, cause);
    }
    if (this.#queue.size() > 0) this.#scheduleDispatch();
    this.#wakeIdleWaiters();
  }

  #failQueue(message: string, cause: unknown): void {
    this.#broken = netnsError(ErrorCodes.WORKER_EXITED, message, cause === undefined ? {} : { cause });
    for (const call of this.#queue.drain()) this.#settle(call, false, this.#broken);
  }

  #watchAbort(call: PendingCall, signal: AbortSignal): void {
    if (signal.aborted) this.#settle(call, false, abortError(signal));
    else this.#aborts.add(signal, call);
  }

  // A call not started is simply taken back; only a running fn costs its thread.
  #abort(call: PendingCall, signal: AbortSignal): void {
    const worker = [...this.#workers].find((candidate) => candidate.running.get(call.id) === call);
    // Its result may already be waiting: then the call is done, and the
    // worker is running something else that must not be ended for it.
    if (worker) this.#drainPort(worker);
    if (call.settled) return;
    this.#settle(call, false, abortError(signal));
    if (!worker) return;
    if (this.#takeBack(worker, call)) {
      this.#maybeIdle(worker);
      return;
    }
    worker.running.delete(call.id);
    this.#letGo(worker, true);
  }

  #settle(call: PendingCall, ok: boolean, value: unknown): void {
    if (call.settled) return;
    call.settled = true;
    if (call.task.signal) this.#aborts.delete(call.task.signal, call);
    call.task.release?.();
    this.#pendingCalls--;
    if (ok) call.resolve(value);
    else call.reject(value);
    this.#wakeIdleWaiters();
  }
}

// The cause goes into the message itself: a thread that cannot start is
// usually a setup problem (a file not found, a refused node option), and
// what is printed of an error is often only its message.
function describeCause(cause: unknown, exitCode?: number): string {
  if (cause === undefined) return exitCode === undefined ? '' : `: a thread exited with code ${exitCode} and no error`;
  if (!(cause instanceof Error)) return `: ${util().inspect(cause)}`;
  const code = (cause as { code?: unknown }).code;
  return `: ${typeof code === 'string' && !cause.message.startsWith(code) ? `${code}: ` : ''}${cause.message}`;
}

export function checkedSize(maxWorkers: unknown): number {
  if (typeof maxWorkers !== 'number' || !Number.isSafeInteger(maxWorkers) || maxWorkers < 1) {
    throw netnsError(ErrorCodes.INVALID_ARG, `maxWorkers must be a positive integer, got ${String(maxWorkers)}`);
  }
  return maxWorkers;
}
