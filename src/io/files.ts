// Reading the per-namespace views of /proc. /proc/net and /proc/self/net name
// the namespace of the process's main thread, so they are read through
// /proc/thread-self/net on an I/O thread inside the namespace.
import { ErrorCodes, netnsError } from '../core/errors.js';
import { native } from '../core/native.js';
import type { NsHandle } from '../core/handle.js';
import { runIo } from './run-io.js';

const THREAD_NET = '/proc/thread-self/net';
const PER_NAMESPACE = [
  { prefix: '/proc/net', replace: THREAD_NET },
  { prefix: '/proc/self/net', replace: THREAD_NET },
  { prefix: THREAD_NET, replace: THREAD_NET },
  { prefix: '/proc/sys/net', replace: '/proc/sys/net' },
];

export function namespacedPath(path: unknown): string {
  if (typeof path !== 'string' || path.includes('\0')) {
    throw netnsError(ErrorCodes.INVALID_ARG, 'path must be a string without NUL bytes');
  }
  const parts = path.split('/');
  if (parts.includes('..') || parts.includes('.')) {
    throw netnsError(ErrorCodes.INVALID_ARG, `path must not contain '.' or '..': ${JSON.stringify(path)}`);
  }
  for (const { prefix, replace } of PER_NAMESPACE) {
    if (path === prefix || path.startsWith(`${prefix}/`)) return replace + path.slice(prefix.length);
  }
  throw netnsError(
    ErrorCodes.INVALID_ARG,
    `${JSON.stringify(path)} is not per namespace; readFile reads /proc/net/*, /proc/self/net/*, /proc/thread-self/net/* and /proc/sys/net/*`,
  );
}

export async function readFileIn(ns: NsHandle, path: string): Promise<Buffer> {
  const resolved = namespacedPath(path);
  return await runIo(ns, (fd) => native().ioReadFile(fd, resolved));
}
