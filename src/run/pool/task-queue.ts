// Calls waiting for a worker, in two lanes: nested calls (a fn is waiting for
// them, so they go first and may use threads beyond the bound) and the rest.
import type { PendingCall } from './pending-call.js';

export type Lane = 'nested' | 'top';

class Fifo {
  #items: PendingCall[] = [];
  #head = 0;

  get size(): number {
    return this.#items.length - this.#head;
  }

  push(call: PendingCall): void {
    this.#items.push(call);
  }

  // Calls taken back from a worker were queued before anything waiting now.
  pushFront(calls: PendingCall[]): void {
    this.#items = [...calls, ...this.#items.slice(this.#head)];
    this.#head = 0;
  }

  shift(): PendingCall | undefined {
    if (this.size === 0) return undefined;
    const call = this.#items[this.#head++]!;
    this.#compact();
    return call;
  }

  // Drops the calls already taken once they are over half the array (and
  // over 1,024: a queue that is often empty would copy at every turn).
  #compact(): void {
    // Stryker disable next-line ConditionalExpression,EqualityOperator,LogicalOperator,ArithmeticOperator: when the array is compacted changes memory and time, never the order (pool-parts.test.ts checks the order through compactions)
    if (this.#head > 1024 && this.#head * 2 > this.#items.length) {
      this.#items = this.#items.slice(this.#head);
      this.#head = 0;
    }
  }
}

export class TaskQueue {
  readonly #lanes: Record<Lane, Fifo> = { nested: new Fifo(), top: new Fifo() };

  size(lane?: Lane): number {
    return lane ? this.#lanes[lane].size : this.#lanes.nested.size + this.#lanes.top.size;
  }

  push(call: PendingCall): void {
    this.#lanes[laneOf(call)].push(call);
  }

  returnTaken(calls: PendingCall[]): void {
    for (const lane of ['nested', 'top'] as const) {
      const ofLane = calls.filter((call) => laneOf(call) === lane);
      // Stryker disable next-line ConditionalExpression,EqualityOperator: pushing no calls to the front changes nothing
      if (ofLane.length > 0) this.#lanes[lane].pushFront(ofLane);
    }
  }

  /** Up to `max` calls of a lane, skipping those settled (aborted) while queued. */
  take(lane: Lane, max: number): PendingCall[] {
    const batch: PendingCall[] = [];
    while (batch.length < max) {
      const call = this.#lanes[lane].shift();
      if (!call) break;
      if (!call.settled) batch.push(call);
    }
    return batch;
  }

  drain(): PendingCall[] {
    return [...this.take('nested', Infinity), ...this.take('top', Infinity)];
  }
}

export function laneOf(call: PendingCall): Lane {
  return call.task.nested ? 'nested' : 'top';
}
