import { constants } from 'node:os';
import { getSystemErrorMap } from 'node:util';

/** Codes of errors raised by this package itself (system errors use errno names). */
export const ErrorCodes = {
  NOT_NETNS: 'ERR_NETNS_NOT_NETNS',
  CLOSED: 'ERR_NETNS_CLOSED',
  INVALID_NAME: 'ERR_NETNS_INVALID_NAME',
  INVALID_PATH: 'ERR_NETNS_INVALID_PATH',
  INVALID_ARG: 'ERR_NETNS_INVALID_ARG',
  MAIN_THREAD: 'ERR_NETNS_MAIN_THREAD',
  POISONED: 'ERR_NETNS_POISONED',
  WORKER_EXITED: 'ERR_NETNS_WORKER_EXITED',
  NOT_CLONEABLE: 'ERR_NETNS_NOT_CLONEABLE',
  SWITCHED_THREAD: 'ERR_NETNS_SWITCHED_THREAD',
  SYSCTL_SCOPE: 'ERR_NETNS_SYSCTL_SCOPE',
  INVALID_SYSCTL: 'ERR_NETNS_INVALID_SYSCTL',
} as const;

export interface NetnsErrorFields {
  errno?: number;
  syscall?: string;
  path?: string;
  cause?: unknown;
}

/**
 * The one error class of this package. Shaped like Node's SystemError:
 * `code` is always set; `errno` (negative, as in Node), `syscall` and `path`
 * are set when a system call failed.
 */
export class NetnsError extends Error {
  override name = 'NetnsError';
  readonly code: string;
  errno?: number;
  syscall?: string;
  path?: string;

  constructor(code: string, message: string, fields: NetnsErrorFields = {}) {
    super(message, fields.cause === undefined ? undefined : { cause: fields.cause });
    this.code = code;
    if (fields.errno !== undefined) this.errno = fields.errno;
    if (fields.syscall !== undefined) this.syscall = fields.syscall;
    if (fields.path !== undefined) this.path = fields.path;
  }
}

function describeErrno(errno: number): [code: string, description: string] {
  const known = getSystemErrorMap().get(-Math.abs(errno));
  if (known) return known;
  const name = Object.entries(constants.errno).find(([, n]) => n === Math.abs(errno))?.[0];
  return [name ?? `E${Math.abs(errno)}`, 'unknown system error'];
}

/** A system error in Node's wording: "ENOENT: no such file or directory, open '/x'". */
export function systemError(errno: number, syscall: string, path?: string): NetnsError {
  const [code, description] = describeErrno(errno);
  const where = path === undefined ? syscall : `${syscall} '${path}'`;
  return new NetnsError(code, `${code}: ${description}, ${where}`, {
    errno: -Math.abs(errno),
    syscall,
    ...(path === undefined ? {} : { path }),
  });
}

export function netnsError(code: string, message: string, fields?: NetnsErrorFields): NetnsError {
  return new NetnsError(code, message, fields);
}

interface NativeErrorShape {
  code?: string;
  errno?: number;
  syscall?: string;
  path?: string;
  message?: string;
}

/** Converts an Error thrown by the addon into a NetnsError. */
export function fromNative(error: unknown): unknown {
  if (!(error instanceof Error) || typeof (error as NativeErrorShape).code !== 'string') return error;
  const native = error as Error & NativeErrorShape;
  if (typeof native.errno === 'number' && native.syscall) {
    return systemError(native.errno, native.syscall, native.path);
  }
  const message = native.message.replace(/^[A-Z_]+: /, '');
  return netnsError(native.code!, message, native.path === undefined ? {} : { path: native.path });
}

/** Calls into the addon, translating its errors. */
export function callNative<T>(call: () => T): T {
  try {
    return call();
  } catch (error) {
    throw fromNative(error);
  }
}

export function abortError(signal: AbortSignal): Error {
  const error = new DOMException('The operation was aborted', 'AbortError');
  return Object.assign(error, { cause: signal.reason });
}
