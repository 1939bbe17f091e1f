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
  /** The error's `cause`, when that is an Error too (a wrapped import failure keeps Node's error there). */
  cause?: SerializedError;
  /** ERR_NETNS_NON_ERROR_THROWN: the value fn threw, already known to clone. */
  thrown?: { value: unknown };
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

// A chain of causes is followed this far; a cycle or a longer chain is cut.
const MAX_CAUSES = 4;

function describeError(error: Error, depth = 0): SerializedError {
  const props: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(error)) {
    // Stryker disable next-line ConditionalExpression,LogicalOperator,StringLiteral: they travel in their own fields; copied into props as well, they would arrive the same
    if (key === 'name' || key === 'message' || key === 'stack') continue;
    if (value === null || CLONEABLE_PROP_TYPES.has(typeof value)) props[key] = value;
  }
  const stack: unknown = error.stack;
  const described: SerializedError = {
    name: String(error.name),
    message: String(error.message),
    stack: typeof stack === 'string' ? stack : undefined,
    props,
  };
  const { cause } = error;
  if (cause instanceof Error && depth < MAX_CAUSES) described.cause = describeError(cause, depth + 1);
  // A nested call's non-Error, passed on again: its value was cloned once already.
  if (error instanceof NetnsError && error.code === ErrorCodes.NON_ERROR_THROWN && 'value' in error) described.thrown = { value: error.value };
  return described;
}

/** How a thrown non-Error reads in a message: strings quoted, anything else as String() gives it, cut short. */
function thrownText(value: unknown): string {
  let text: string;
  try {
    text = typeof value === 'string' ? JSON.stringify(value) : String(value);
  } catch {
    text = Object.prototype.toString.call(value);
  }
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

/**
 * A thrown string, number, undefined or object becomes a coded NetnsError,
 * the value itself in `value` when it survives a structured clone (a
 * function or a symbol does not: then only the message names it).
 */
function describeThrownValue(value: unknown): SerializedError {
  let thrown: { value: unknown } | undefined;
  try {
    thrown = { value: structuredClone(value) };
  } catch {
    thrown = undefined;
  }
  return {
    name: 'NetnsError',
    message: `fn threw a value that is not an Error: ${thrownText(value)}${thrown ? '' : ' (it cannot be cloned: not in value)'}`,
    stack: undefined,
    props: { code: ErrorCodes.NON_ERROR_THROWN },
    ...(thrown ? { thrown } : {}),
  };
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
  const options = data.cause === undefined ? undefined : { cause: deserializeError(data.cause) };
  let error: Error;
  if (data.name === 'NetnsError') {
    error = new NetnsError((data.props.code ?? ErrorCodes.UNKNOWN) as ErrorCode, data.message, options ?? {});
  } else if (Ctor) {
    error = new Ctor(data.message, options);
  } else {
    error = new Error(data.message, options);
    Object.defineProperty(error, 'name', { value: data.name, configurable: true, writable: true });
  }
  Object.assign(error, data.props);
  if (data.thrown) Object.assign(error, { value: data.thrown.value });
  if (data.stack !== undefined) error.stack = data.stack;
  return error;
}
