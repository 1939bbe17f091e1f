// One withNetNS call from the moment it is queued until it settles.
import { isOpen, revokeClaim } from '../claims.js';
import type { FnSpec } from '../wire.js';

export interface PoolTask {
  fd: number;
  fn: FnSpec;
  args: unknown[];
  signal?: AbortSignal | undefined;
  /** Called once when the call settles, e.g. to release the namespace handle. */
  release?: (() => void) | undefined;
  /** Asked for by a fn that waits for it: runs first, and may use threads beyond the bound. */
  nested: boolean;
}

export class PendingCall {
  settled = false;
  /** When it was last sent to a worker (performance.now()). */
  sentAt = 0;
  readonly promise: Promise<unknown>;
  resolve!: (value: unknown) => void;
  reject!: (error: unknown) => void;
  #ring: Int32Array | null = null;
  #ticket = -1;

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

  sentTo(ring: Int32Array, ticket: number): void {
    this.sentAt = performance.now();
    this.#ring = ring;
    this.#ticket = ticket;
  }

  /** True while the worker it was sent to has not started it (and now never will, once revoked). */
  isOpen(): boolean {
    return this.#ring !== null && isOpen(this.#ring, this.#ticket);
  }

  /** Takes the call back from its worker; false when the worker has already started it. */
  revoke(): boolean {
    if (this.#ring === null) return true;
    if (!revokeClaim(this.#ring, this.#ticket)) return false;
    this.#ring = null;
    return true;
  }
}
