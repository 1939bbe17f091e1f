// Node's own file errors (readFile, mkdir, writeFile, rm) as NetnsErrors, since
// every error this package raises is one: Node's `code` (ENOENT, EACCES, ...),
// `errno`, `syscall` and `path` kept, Node's error as `cause`, and the message
// saying what the package was doing. core/errors.ts is to gain fromNodeError,
// which does the same for sockets with the same signature; this can become a
// call to it once both are merged.
import { ErrorCodes, NetnsError, netnsError, type ErrorCode } from '../../core/errors.js';

export function fileError(error: unknown, where: string): NetnsError {
  if (error instanceof NetnsError) return error;
  if (!(error instanceof Error)) return netnsError(ErrorCodes.UNKNOWN, `${String(error)} ${where}`, { cause: error });
  const node = error as NodeJS.ErrnoException;
  const code = (typeof node.code === 'string' && node.code.startsWith('E') ? node.code : ErrorCodes.UNKNOWN) as ErrorCode;
  return netnsError(code, `${error.message} ${where}`, {
    cause: error,
    ...(typeof node.errno === 'number' ? { errno: node.errno } : {}),
    ...(typeof node.syscall === 'string' ? { syscall: node.syscall } : {}),
    ...(typeof node.path === 'string' ? { path: node.path } : {}),
  });
}
