// The coded error every netlink input check throws, and the integer check
// that message framing needs too. Apart from validate.ts so that framing (which
// io/zone.ts uses for every zoned socket) does not load the address parser,
// ipaddr.js: a CommonJS module, the costliest file of import('netns').
import { ErrorCodes, netnsError, type NetnsError } from '../core/errors.js';

export function invalid(message: string): NetnsError {
  return netnsError(ErrorCodes.NETLINK_INVALID, `netlink: ${message}`);
}

export function checkUint(value: unknown, what: string, max = 0xffffffff, min = 0): number {
  if (!Number.isSafeInteger(value) || (value as number) < min || (value as number) > max) {
    throw invalid(`${what} must be an integer from ${min} to ${max}, got ${String(value)}`);
  }
  return value as number;
}
