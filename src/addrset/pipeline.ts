// The one road to the kernel. Jobs are planned, sent and settled strictly in
// the order they were submitted, one transaction at a time; the jobs
// submitted while a transaction is in flight share the next one. A job is
// planned only when its transaction is about to be sent, so every plan sees
// the effect of every job before it, and the kernel goes through the same
// states as the model. If a shared transaction fails, every plan in it is
// undone and each job is planned and sent again on its own, so an error
// reaches only the jobs that cause it: this is the only place that isolates
// failures. A read can be run between transactions, when the kernel holds
// exactly what the model says (see exclusive()).
//
// Unless someone changed the table by hand (deleted it, a set, an element):
// then a job fails with ENOENT (or an overlap) however often it is sent. Such
// a failure of a job on its own first brings the model back in line with the
// kernel (`resync`), then plans and sends the job once more.
import { ErrorCodes } from '../core/errors.js';
import type { AddrsetBackend, WriterLock } from './backend.js';
import { undoPlan, type Plan } from './owner.js';

export interface Job {
  /** Plans against the model now, changing it; throwing fails only this job (having changed nothing). */
  plan(): Plan;
  landed(plan: Plan): void;
  failed(error: unknown): void;
}

type Entry = { job: Job } | { read: () => Promise<void> };

/** Failures that mean the kernel no longer holds what the model says. */
const DRIFT: ReadonlySet<unknown> = new Set(['ENOENT', ErrorCodes.ADDRSET_OVERLAP]);

export class Pipeline {
  readonly #backend: AddrsetBackend;
  readonly #lock: WriterLock;
  readonly #resync: () => Promise<void>;
  #queue: Entry[] = [];
  #running: Promise<void> | undefined;
  transactions = 0;
  failedTransactions = 0;

  constructor(backend: AddrsetBackend, lock: WriterLock, resync: () => Promise<void>) {
    this.#backend = backend;
    this.#lock = lock;
    this.#resync = resync;
  }

  submit(job: Job): void {
    this.#queue.push({ job });
    this.#start();
  }

  /** Runs `read` once every job submitted before it has settled and before any submitted after it is planned. */
  exclusive<T>(read: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({ read: () => read().then(resolve, reject) });
      this.#start();
    });
  }

  /** Resolves when nothing is queued or in flight. */
  async idle(): Promise<void> {
    while (this.#running) await this.#running;
  }

  #start(): void {
    if (this.#running) return;
    this.#running = this.#drain().finally(() => (this.#running = undefined));
  }

  async #drain(): Promise<void> {
    for (;;) {
      await new Promise((resolve) => setImmediate(resolve)); // let callers of this turn join the transaction
      const head = this.#queue[0];
      if (!head) return;
      if ('read' in head) {
        this.#queue.shift();
        await head.read();
        continue;
      }
      const next = this.#queue.findIndex((entry) => 'read' in entry);
      const jobs = this.#queue.splice(0, next < 0 ? this.#queue.length : next) as { job: Job }[];
      await this.#transact(jobs.map((entry) => entry.job));
    }
  }

  async #transact(jobs: Job[], resynced = false): Promise<void> {
    const planned: { job: Job; plan: Plan }[] = [];
    for (const job of jobs) {
      try {
        planned.push({ job, plan: job.plan() });
      } catch (error) {
        settle(() => job.failed(error));
      }
    }
    const ops = planned.flatMap(({ plan }) => plan.ops);
    try {
      if (ops.length > 0) await this.#apply(ops);
    } catch (error) {
      for (const { plan } of [...planned].reverse()) undoPlan(plan);
      if (planned.length > 1) {
        for (const { job } of planned) await this.#transact([job]);
      } else if (!resynced && DRIFT.has((error as { code?: unknown }).code) && (await this.#resynced())) {
        await this.#transact([planned[0]!.job], true);
      } else {
        settle(() => planned[0]!.job.failed(error));
      }
      return;
    }
    for (const { job, plan } of planned) settle(() => job.landed(plan));
  }

  /** Whether the model could be brought in line (a failure to do so leaves the job's own error to report). */
  async #resynced(): Promise<boolean> {
    try {
      await this.#resync();
      return true;
      // Stryker disable next-line BlockStatement: an empty catch returns undefined, which the caller's && reads as false
    } catch {
      return false;
    }
  }

  async #apply(ops: Parameters<AddrsetBackend['apply']>[0]): Promise<void> {
    this.transactions++;
    try {
      await this.#backend.apply(ops, this.#lock);
    } catch (error) {
      this.failedTransactions++;
      throw error;
    }
  }
}

// A job's callbacks run user code (event listeners); what they throw is
// reported as an uncaught exception, as from any listener, and the road to
// the kernel stays open.
function settle(callback: () => void): void {
  try {
    callback();
  } catch (error) {
    queueMicrotask(() => {
      throw error;
    });
  }
}
