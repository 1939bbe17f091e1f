// One worker thread of the pool, as the pool sees it: its port and doorbell,
// the calls sent to it, and whether it has started properly.
import type { MessagePort, Worker } from 'node:worker_threads';
import { workerThreads } from '../../core/builtins.js';
import { locate, WORKER_ENTRY } from '../../core/runtime-files.js';
import { newClaimRing, openClaim } from '../claims.js';
import { BELL_TASKS, BELL_WORDS } from '../doorbell.js';
import type { FunctionDef, ToWorker } from '../wire.js';
import type { FunctionRegistry } from './function-registry.js';
import type { PendingCall } from './pending-call.js';
import { startWorker } from './worker-exec-argv.js';

export class PoolWorker {
  readonly thread: Worker;
  readonly port: MessagePort;
  readonly bell = new Int32Array(new SharedArrayBuffer(BELL_WORDS * 4));
  readonly #claims = newClaimRing();
  #nextTicket = 0;
  /** Calls sent to this worker and not settled, started or not. */
  readonly running = new Map<number, PendingCall>();
  /** Said it is ready: its module loaded and it may switch. */
  ready = false;
  /** No longer part of the pool: terminated by it, or exited. */
  gone = false;
  /** Its last call may have left work behind: no new call until its verdict. */
  judging = false;
  /** When it last ran out of calls (performance.now()). */
  idleSince = 0;
  /** Nested calls its fn is waiting for. */
  nestedWaits = 0;
  /** Aborts each nested call it waits for (by request id), should it go first or ask to. */
  readonly nestedCalls = new Map<number, AbortController>();
  exitCause: unknown = undefined;
  readonly #known = new Set<number>();
  #generation: number;

  constructor(registry: FunctionRegistry) {
    const entry = locate(WORKER_ENTRY);
    const { MessageChannel } = workerThreads();
    const { port1, port2 } = new MessageChannel();
    this.port = port1;
    this.#generation = registry.generation;
    this.thread = startWorker(entry, {
      workerData: { port: port2, bell: this.bell.buffer, claims: this.#claims.buffer },
      transferList: [port2],
    });
  }

  /** Keeps the process alive only while the worker has calls. */
  setActive(active: boolean): void {
    if (active) {
      this.thread.ref();
      this.port.ref();
    } else {
      this.thread.unref();
      this.port.unref();
    }
  }

  runsTopLevelCall(): boolean {
    for (const call of this.running.values()) if (!call.task.nested) return true;
    return false;
  }

  /** Calls sent here that it has not started. */
  openCalls(): PendingCall[] {
    return [...this.running.values()].filter((call) => call.isOpen());
  }

  /** Sends a batch (to an idle worker: see claims.ts); throws if some argument cannot be cloned. */
  send(batch: PendingCall[], registry: FunctionRegistry): void {
    const forget = this.#generation !== registry.generation;
    if (forget) {
      this.#known.clear();
      this.#generation = registry.generation;
    }
    const defs: FunctionDef[] = [];
    const tasks: unknown[] = [];
    for (const call of batch) {
      if (!this.#known.has(call.fnId)) defs.push([call.fnId, call.task.fn]);
      tasks.push(call.id, call.task.fd, call.fnId, call.task.args);
    }
    const firstTicket = this.#nextTicket;
    batch.forEach((_, k) => openClaim(this.#claims, firstTicket + k));
    this.#post({ type: 'run', forget, defs, tasks, firstTicket });
    this.#nextTicket += batch.length;
    for (const [fnId] of defs) this.#known.add(fnId);
    batch.forEach((call, k) => {
      call.sentTo(this.#claims, firstTicket + k);
      this.running.set(call.id, call);
    });
  }

  postNestedResult(message: Extract<ToWorker, { type: 'nested-result' }>): void {
    if (!this.gone) this.#post(message);
  }

  #post(message: ToWorker): void {
    this.port.postMessage(message);
    Atomics.add(this.bell, BELL_TASKS, 1);
  }
}
