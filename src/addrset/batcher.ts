// Gathers the transactions that owners submit in the same turn of the event
// loop into one nft transaction. If a combined transaction fails, each part
// is retried on its own so that its error reaches only its own callers (a
// destroy meeting EBUSY fails no one else). Several transactions may be in
// flight at once: nothing global is held across one.
import type { AddrsetBackend } from './backend.js';
import type { Op } from './ops.js';

interface Part {
  ops: Op[];
  resolve(): void;
  reject(error: unknown): void;
}

export class Batcher {
  readonly #backend: AddrsetBackend;
  #parts: Part[] = [];
  #scheduled = false;
  #inFlight = new Set<Promise<void>>();
  transactions = 0;
  failedTransactions = 0;

  constructor(backend: AddrsetBackend) {
    this.#backend = backend;
  }

  submit(ops: Op[]): Promise<void> {
    if (ops.length === 0) return Promise.resolve();
    return new Promise((resolve, reject) => {
      this.#parts.push({ ops, resolve, reject });
      if (!this.#scheduled) {
        this.#scheduled = true;
        setImmediate(() => void this.#track(this.#flush()));
      }
    });
  }

  /** Resolves when no transaction is queued or running. */
  async idle(): Promise<void> {
    while (this.#inFlight.size > 0 || this.#scheduled) {
      await Promise.allSettled([...this.#inFlight]);
      if (this.#scheduled) await new Promise((resolve) => setImmediate(resolve));
    }
  }

  #track(work: Promise<void>): Promise<void> {
    this.#inFlight.add(work);
    const done = () => this.#inFlight.delete(work);
    work.then(done, done);
    return work;
  }

  async #apply(ops: Op[]): Promise<void> {
    this.transactions++;
    try {
      await this.#backend.apply(ops);
    } catch (error) {
      this.failedTransactions++;
      throw error;
    }
  }

  async #flush(): Promise<void> {
    this.#scheduled = false;
    const parts = this.#parts;
    this.#parts = [];
    try {
      await this.#apply(parts.flatMap((part) => part.ops));
      for (const part of parts) part.resolve();
    } catch (error) {
      if (parts.length === 1) {
        parts[0]!.reject(error);
        return;
      }
      await Promise.all(parts.map((part) => this.#apply(part.ops).then(part.resolve, part.reject)));
    }
  }
}
