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

/**
 * What a worker runs: fn's source text (its `require` resolving from the
 * file `caller`), or a named export of a module the worker imports once.
 */
export type FnSpec = { source: string; caller: string | null } | { module: string; exportName: string };

/** A function the worker has not seen yet, and the id later tasks name it by. */
export type FunctionDef = [fnId: number, fn: FnSpec];

/** Per task: id, namespace fd, function id, arguments. */
export const TASK_FIELDS = 4;

export type ToWorker =
  /** Task k of the batch has ticket `firstTicket + k` (see claims.ts). */
  | { type: 'run'; forget: boolean; defs: FunctionDef[]; tasks: unknown[]; firstTicket: number }
  | { type: 'nested-result'; id: number; outcome: Outcome };

/** Per result: id, ok, value or SerializedError. */
export const RESULT_FIELDS = 3;

/**
 * A nested call's target: a path the pool opens itself, or a descriptor the
 * waiting worker holds open (`owned`: the package opened it there, so the
 * pool closes it should that worker end before it could).
 */
export type NestedTarget = { path: string } | { fd: number; owned?: boolean };

export type FromWorker =
  | { type: 'ready' }
  /** `judging`: the call may have left work behind; a verdict follows before the worker takes more. */
  | { type: 'results'; results: unknown[]; poisoned?: SerializedError; judging?: boolean }
  /** `retire`: the call left work behind; the worker takes no further task. */
  | { type: 'verdict'; retire: boolean }
  | { type: 'nested'; id: number; target: NestedTarget; fn: FnSpec; args: unknown[] }
  /** The fn that asked for nested call `id` aborted it. */
  | { type: 'nested-abort'; id: number };

const CLONEABLE_PROP_TYPES = new Set(['string', 'number', 'boolean', 'bigint']);

/**
 * Never throws: a value whose description runs user code that fails (a
 * throwing getter, a Proxy, a null-prototype object) becomes a coded error.
 */
export function serializeError(error: unknown): SerializedError {
  try {
    return error instanceof Error ? describeError(error) : describeThrownValue(error);
  } catch (failure) {
    return unsendable('fn threw a value that', failure);
  }
}

function describeError(error: Error): SerializedError {
  const props: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(error)) {
    if (key === 'name' || key === 'message' || key === 'stack') continue;
    if (value === null || CLONEABLE_PROP_TYPES.has(typeof value)) props[key] = value;
  }
  const stack: unknown = error.stack;
  return { name: String(error.name), message: String(error.message), stack: typeof stack === 'string' ? stack : undefined, props };
}

function describeThrownValue(value: unknown): SerializedError {
  return { name: 'Error', message: `non-error thrown: ${String(value)}`, stack: undefined, props: {} };
}

/** ERR_NETNS_NOT_CLONEABLE, saying what could not be sent and why (if even that can be read). */
export function unsendable(what: string, failure: unknown): SerializedError {
  let reason = 'it could not be read';
  try {
    reason = failure instanceof Error ? failure.message : String(failure);
  } catch {
    // the failure itself cannot be described either
  }
  return {
    name: 'NetnsError',
    message: `${what} cannot be sent back to the calling thread: ${reason}`,
    stack: undefined,
    props: { code: ErrorCodes.NOT_CLONEABLE },
  };
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
