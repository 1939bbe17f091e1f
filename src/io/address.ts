// Hosts must be numeric: a name would be looked up on libuv's shared
// threadpool, in the host's namespace, with the host's resolver.
import { ErrorCodes, netnsError } from '../core/errors.js';
import { isIP } from '../core/ip.js';

/** Returns 4 or 6; IPv6 may carry a zone (fe80::1%eth0), resolved inside the namespace. */
export function numericHostFamily(host: unknown): 4 | 6 {
  if (typeof host !== 'string') throw invalidHost(host);
  const zoned = /%[\w.-]+$/.test(host);
  const family = isIP(host.replace(/%[\w.-]+$/, ''));
  if (family === 0 || (zoned && family === 4)) throw invalidHost(host);
  return family as 4 | 6;
}

function invalidHost(host: unknown): Error {
  return netnsError(
    ErrorCodes.INVALID_ARG,
    `host must be a numeric IPv4 or IPv6 address, got ${JSON.stringify(host)} (names would resolve in the host's namespace)`,
  );
}

export function checkPort(port: unknown): number {
  if (port === undefined) return 0;
  if (typeof port !== 'number' || !Number.isInteger(port) || port < 0 || port > 65535) {
    throw netnsError(ErrorCodes.INVALID_ARG, `port must be an integer from 0 to 65535, got ${String(port)}`);
  }
  return port;
}

export function checkUnixPath(path: unknown): string {
  if (typeof path !== 'string' || path.length === 0 || Buffer.byteLength(path) > 107) {
    throw netnsError(ErrorCodes.INVALID_ARG, 'a unix socket path must be a string of 1 to 107 bytes');
  }
  // a NUL inside a filesystem path would silently cut it short (abstract names, starting with NUL, may hold any byte)
  if (!path.startsWith('\0') && path.includes('\0')) {
    throw netnsError(ErrorCodes.INVALID_ARG, `a unix socket path must not contain a NUL byte after its start: ${JSON.stringify(path)}`);
  }
  return path;
}
