// withNetNS: run a JavaScript function inside a network namespace, on a pool
// thread that switches and comes back, never on the calling thread.
import { ErrorCodes, netnsError } from '../core/errors.js';
import { callerFile, functionSource } from './fn-source.js';
import { NetNS } from '../netns.js';
import { WorkerPool, type PoolStats } from './pool.js';
import { poolWorkerHook, type NestedTask, type PoolWorkerHook } from './nested-hook.js';
import { deserializeError } from './wire.js';

export type NetnsTarget = NetNS | string;

export interface WithNetNSOptions {
  /** Aborting rejects with an AbortError; a running fn's worker is terminated. */
  signal?: AbortSignal;
}

export interface PoolOptions {
  /** Upper bound on worker threads (default: os.availableParallelism()). */
  maxWorkers?: number;
}

let pool: WorkerPool | undefined;
let configuredSize: number | undefined;

function getPool(): WorkerPool {
  pool ??= new WorkerPool(configuredSize);
  return pool;
}

/** Sets the pool's bound; takes effect at once if the pool is running. */
export function configurePool(options: PoolOptions): void {
  if (options.maxWorkers === undefined) return;
  if (pool) pool.resize(options.maxWorkers);
  else configuredSize = new WorkerPool(options.maxWorkers).maxWorkers;
}

export function poolStats(): PoolStats {
  return pool?.stats() ?? { workers: 0, busy: 0, queued: 0, tasksRun: 0, threadsDiscarded: 0, restoreFailures: 0 };
}

/**
 * Resolves once no withNetNS call is pending and every thread the pool
 * discarded (after an abort or a failed restore) has exited.
 */
export function poolIdle(): Promise<void> {
  return pool?.idle() ?? Promise.resolve();
}

/** Terminates the pool's threads; calls still pending reject. The next call starts a new pool. */
export async function closePool(): Promise<void> {
  const closing = pool;
  pool = undefined;
  await closing?.destroy();
}

function acquire(target: NetnsTarget): { fd: number; release: () => void } {
  if (target instanceof NetNS) {
    const fd = target.acquire();
    return { fd, release: () => target.release() };
  }
  if (typeof target !== 'string') {
    throw netnsError(ErrorCodes.INVALID_ARG, 'target must be a NetNS, a path or a namespace name');
  }
  const ns = NetNS.open(target);
  return { fd: ns.fd, release: () => ns.close() };
}

type Fn<A extends unknown[], R> = (...args: A) => R;

/**
 * Runs `fn(...args)` inside the network namespace `target` and resolves with
 * its (awaited) result. `fn` is sent as source text to a pool thread: it sees
 * its arguments, globals, `require` and `import()`, not its enclosing scope.
 */
export function withNetNS<A extends unknown[], R>(target: NetnsTarget, fn: Fn<A, R>, ...args: A): Promise<Awaited<R>>;
export function withNetNS<A extends unknown[], R>(
  target: NetnsTarget,
  options: WithNetNSOptions,
  fn: Fn<A, R>,
  ...args: A
): Promise<Awaited<R>>;
export function withNetNS(target: NetnsTarget, ...rest: unknown[]): Promise<unknown> {
  const withOptions = typeof rest[0] !== 'function';
  const options = (withOptions ? rest[0] : undefined) as WithNetNSOptions | undefined;
  const fn = withOptions ? rest[1] : rest[0];
  const args = rest.slice(withOptions ? 2 : 1);
  try {
    const source = functionSource(fn);
    const caller = callerFile(source);
    const { fd, release } = acquire(target);
    const hook = poolWorkerHook();
    if (hook) return runNested(hook, { fd, source, caller, args }, release);
    return getPool().run({ fd, source, caller, args, signal: options?.signal, release });
  } catch (error) {
    return Promise.reject(error);
  }
}

async function runNested(hook: PoolWorkerHook, task: NestedTask, release: () => void): Promise<unknown> {
  try {
    const outcome = await hook.runNested(task);
    if (outcome.ok) return outcome.value;
    throw deserializeError(outcome.error);
  } finally {
    release();
  }
}
