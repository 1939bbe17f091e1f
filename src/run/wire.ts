// What crosses between the calling thread and a pool worker. Errors are sent
// as plain data so that `code`, `errno` and other own properties survive the
// structured clone, which would otherwise keep only name, message and stack.
// Batches are flat arrays: cloning one array is much cheaper than many objects.
import { ErrorCodes, NetnsError, type ErrorCode } from '../core/errors.js';

export interface SerializedError {
  name: string;
  message: string;
  stack: string | undefined;
  props: Record<string, unknown>;
}

export type Outcome = { ok: true; value: unknown } | { ok: false; error: SerializedError };

/** A function the worker has not seen yet: id, source text, file `require` resolves from. */
export type FunctionDef = [fnId: number, source: string, caller: string | null];

/** Per task: id, namespace fd, function id, arguments. */
export const TASK_FIELDS = 4;

export type ToWorker =
  | { type: 'run'; forget: boolean; defs: FunctionDef[]; tasks: unknown[] }
  | { type: 'nested-result'; id: number; outcome: Outcome };

/** Per result: id, ok, value or SerializedError. */
export const RESULT_FIELDS = 3;

export type FromWorker =
  | { type: 'results'; results: unknown[]; poisoned?: SerializedError }
  | { type: 'nested'; id: number; fd: number; source: string; caller: string | null; args: unknown[] };

/** Shared doorbell words, so either side can wait for the other without the event loop. */
export const BELL_TASKS = 0;
export const BELL_RESULTS = 1;

const CLONEABLE_PROP_TYPES = new Set(['string', 'number', 'boolean', 'bigint']);

export function serializeError(error: unknown): SerializedError {
  if (!(error instanceof Error)) {
    return { name: 'Error', message: `non-error thrown: ${String(error)}`, stack: undefined, props: {} };
  }
  const props: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(error)) {
    if (key === 'name' || key === 'message' || key === 'stack') continue;
    if (value === null || CLONEABLE_PROP_TYPES.has(typeof value)) props[key] = value;
  }
  return { name: error.name, message: error.message, stack: error.stack, props };
}

const STANDARD_ERRORS: Record<string, ErrorConstructor> = {
  Error,
  TypeError,
  RangeError,
  ReferenceError,
  SyntaxError,
  EvalError,
  URIError,
};

export function deserializeError(data: SerializedError): Error {
  const Ctor = STANDARD_ERRORS[data.name];
  let error: Error;
  if (data.name === 'NetnsError') {
    error = new NetnsError((data.props.code ?? ErrorCodes.UNKNOWN) as ErrorCode, data.message);
  } else if (Ctor) {
    error = new Ctor(data.message);
  } else {
    error = new Error(data.message);
    Object.defineProperty(error, 'name', { value: data.name, configurable: true, writable: true });
  }
  Object.assign(error, data.props);
  if (data.stack !== undefined) error.stack = data.stack;
  return error;
}

export function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    (typeof value === 'object' || typeof value === 'function') &&
    value !== null &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}

/** Busy-waits until `bell[index]` differs from `seen`, for at most `budgetUs`. */
export function spinUntilRung(bell: Int32Array, index: number, seen: number, budgetUs: number): boolean {
  if (Atomics.load(bell, index) !== seen) return true;
  const deadline = performance.now() + budgetUs / 1000;
  for (let i = 1; ; i++) {
    if (Atomics.load(bell, index) !== seen) return true;
    if ((i & 63) === 0 && performance.now() > deadline) return false;
  }
}
