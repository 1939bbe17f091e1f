// Inside a pool worker, withNetNS must not start threads of its own (they would
// inherit the switched namespace), so it hands nested calls to the pool on the
// thread that owns it. The hook is found through a global registered symbol,
// which works even when fn loads another copy of this package.
import type { FnSpec, NestedTarget, Outcome } from './wire.js';

export const POOL_WORKER_HOOK = Symbol.for('netns.poolWorker');

export interface NestedTask {
  target: NestedTarget;
  fn: FnSpec;
  args: unknown[];
}

export interface NestedCall {
  outcome: Promise<Outcome>;
  /** Tells the pool to abort the call; its outcome never arrives then. */
  abort(): void;
}

export interface PoolWorkerHook {
  runNested(task: NestedTask): NestedCall;
}

export function poolWorkerHook(): PoolWorkerHook | undefined {
  return (globalThis as Record<symbol, PoolWorkerHook | undefined>)[POOL_WORKER_HOOK];
}
