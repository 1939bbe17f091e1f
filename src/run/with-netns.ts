// withNetNS: run a JavaScript function inside a network namespace, on a pool
// thread that switches and comes back, never on the calling thread.
import { os } from '../core/builtins.js';
import { abortError, ErrorCodes, kindOf, netnsError } from '../core/errors.js';
import { isNsHandle } from '../core/handle.js';
import { native } from '../core/native.js';
import { NetNS } from '../netns.js';
import { callerFile, functionSource } from './fn-source.js';
import { poolWorkerHook, type NestedTask, type PoolWorkerHook } from './nested-hook.js';
import { checkedSize, WorkerPool, type PoolStats } from './pool/worker-pool.js';
import { deserializeError, type FnSpec, type NestedTarget } from './wire.js';
import { checkedModuleExport, isModuleExport, type ModuleExport } from './worker-module.js';

export type { PoolStats } from './pool/worker-pool.js';

/**
 * Where withNetNS runs: an open NetNS, or a namespace name (as `ip netns`
 * names it) or a path such as /proc/PID/ns/net, which withNetNS opens for the
 * call and closes after it.
 */
export type NetnsTarget = NetNS | string;

type NestedFn = Pick<NestedTask, 'fn' | 'args'>;

/** Per-call options of withNetNS. */
export interface WithNetNSOptions {
  /** Aborting rejects with an AbortError; a call already running has its worker terminated. */
  signal?: AbortSignal;
}

/** What configurePool takes. */
export interface PoolOptions {
  /** Upper bound on worker threads for top-level calls (default: os.availableParallelism()). */
  maxWorkers?: number;
}

let pool: WorkerPool | undefined;
let closing: Promise<void> = Promise.resolve();
let configuredSize: number | undefined; // os.availableParallelism() unless configured

function getPool(): WorkerPool {
  pool ??= new WorkerPool(configuredSize ?? os().availableParallelism(), openNestedTarget);
  return pool;
}

/** Sets the pool's bound; takes effect at once if the pool is running. */
export function configurePool(options: PoolOptions): void {
  if (typeof options !== 'object' || options === null) throw netnsError(ErrorCodes.INVALID_ARG, 'options must be an object');
  if (options.maxWorkers === undefined) return;
  configuredSize = checkedSize(options.maxWorkers);
  pool?.resize(configuredSize);
}

/** The withNetNS pool's counters, read synchronously; all zero before the first call. */
export function poolStats(): PoolStats {
  return pool?.stats() ?? { workers: 0, busy: 0, queued: 0, tasksRun: 0, threadsDiscarded: 0, restoreFailures: 0 };
}

/**
 * Resolves once no withNetNS call is pending and every thread the pool let
 * go (after an abort, a failed restore, or work left behind) has exited.
 */
export function poolIdle(): Promise<void> {
  return pool?.idle() ?? Promise.resolve();
}

/**
 * Ends the pool's threads. Every call not finished, started or not, rejects
 * with ERR_NETNS_POOL_CLOSED. The next withNetNS call starts a new pool.
 */
export async function closePool(): Promise<void> {
  if (pool) {
    closing = Promise.all([closing, pool.close()]).then(() => {});
    pool = undefined;
  }
  await closing; // a second closePool() also waits for the threads to be gone
}

function acquire(target: NetnsTarget): { fd: number; release: () => void } {
  if (isNsHandle(target)) {
    const fd = target.acquire();
    return { fd, release: () => target.release() };
  }
  if (typeof target !== 'string') {
    throw netnsError(ErrorCodes.INVALID_ARG, 'target must be a NetNS, a path or a namespace name');
  }
  const ns = NetNS.open(target);
  return { fd: ns.fd, release: () => ns.close() };
}

// A nested call's target named by path is opened by the pool's own thread, so
// that it is closed even if the worker that asked is terminated meanwhile; a
// descriptor the package opened in that worker is closed here in that case.
function openNestedTarget(target: NestedTarget, orphaned: () => boolean): { fd: number; release: () => void } {
  if ('path' in target) return acquire(target.path);
  const { fd, owned } = target;
  return { fd, release: () => owned && orphaned() && native().closeFd(fd) };
}

function checkedOptions(options: unknown): WithNetNSOptions {
  if (typeof options !== 'object' || options === null) {
    throw netnsError(ErrorCodes.INVALID_ARG, `options must be an object, got ${kindOf(options)}`);
  }
  const { signal } = options as { signal?: unknown };
  if (signal !== undefined && !(signal instanceof AbortSignal)) {
    throw netnsError(ErrorCodes.INVALID_ARG, 'options.signal must be an AbortSignal');
  }
  return options as WithNetNSOptions;
}

/**
 * A function to send as source text, or a worker module's export.
 * @inline
 */
type Fn<A extends unknown[], R> = ((...args: A) => R) | ModuleExport<A, R>;

function fnSpec(fn: unknown): FnSpec {
  if (isModuleExport(fn)) return checkedModuleExport(fn);
  const source = functionSource(fn);
  return { source, caller: callerFile(source, withNetNS) };
}

/**
 * Runs `fn(...args)` inside the network namespace `target` and resolves with
 * its (awaited) result. `fn` is sent as source text to a pool thread: it sees
 * its arguments, globals, `require` and `import()`, not its enclosing scope.
 * In place of fn, an export of a module named with workerModule() runs the
 * module's own code, imported once per pool thread.
 *
 * Rejects with what fn threw (name, message, stack and code kept; a thrown
 * non-Error is ERR_NETNS_NON_ERROR_THROWN), ERR_NETNS_NOT_CLONEABLE for an
 * argument or result that cannot be structured-cloned, ENOENT for a name
 * that does not exist, EPERM without CAP_SYS_ADMIN,
 * ERR_NETNS_WORKER_EXITED when the worker exits first,
 * ERR_NETNS_POOL_CLOSED when closePool() ends the call, and an AbortError
 * (`code: 'ABORT_ERR'`) when `options.signal` aborts.
 */
export function withNetNS<A extends unknown[], R>(target: NetnsTarget, fn: Fn<A, R>, ...args: A): Promise<Awaited<R>>;
export function withNetNS<A extends unknown[], R>(
  target: NetnsTarget,
  options: WithNetNSOptions,
  fn: Fn<A, R>,
  ...args: A
): Promise<Awaited<R>>;
export function withNetNS(target: NetnsTarget, ...rest: unknown[]): Promise<unknown> {
  try {
    // Options are an object that is neither fn nor a module export; anything else is taken as fn.
    const withOptions = typeof rest[0] === 'object' && rest[0] !== null && !isModuleExport(rest[0]);
    const options = withOptions ? checkedOptions(rest[0]) : undefined;
    const fn = fnSpec(withOptions ? rest[1] : rest[0]);
    const args = rest.slice(withOptions ? 2 : 1);
    const hook = poolWorkerHook();
    if (hook) return runNested(hook, target, { fn, args }, options?.signal);
    const { fd, release } = acquire(target);
    return getPool().run({ fd, fn, args, signal: options?.signal, release, nested: false });
  } catch (error) {
    return Promise.reject(error);
  }
}

// Inside a pool worker: the pool on the owning thread runs the call.
async function runNested(hook: PoolWorkerHook, target: NetnsTarget, fn: NestedFn, signal: AbortSignal | undefined): Promise<unknown> {
  if (isNsHandle(target)) {
    const fd = target.acquire();
    try {
      return await settleNested(hook, { target: { fd }, ...fn }, signal);
    } finally {
      target.release();
    }
  }
  if (typeof target !== 'string') throw netnsError(ErrorCodes.INVALID_ARG, 'target must be a NetNS, a path or a namespace name');
  // /proc/thread-self names whichever thread opens it: only this one can.
  if (target.startsWith('/proc/thread-self/')) {
    using own = NetNS.open(target);
    return await settleNested(hook, { target: { fd: own.fd, owned: true }, ...fn }, signal);
  }
  return settleNested(hook, { target: { path: target }, ...fn }, signal);
}

function settleNested(hook: PoolWorkerHook, task: NestedTask, signal: AbortSignal | undefined): Promise<unknown> {
  if (signal?.aborted) return Promise.reject(abortError(signal));
  const call = hook.runNested(task);
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      call.abort();
      reject(abortError(signal!));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    void call.outcome.then((outcome) => {
      signal?.removeEventListener('abort', onAbort);
      if (outcome.ok) resolve(outcome.value);
      else reject(deserializeError(outcome.error));
    });
  });
}
