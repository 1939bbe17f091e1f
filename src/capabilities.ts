// Capabilities this package cares about, by name, and whether the calling
// thread has one in its effective set (capabilities are per thread).
import { readFileSync } from 'node:fs';
import { ErrorCodes, netnsError } from './core/errors.js';

export const CAPABILITIES = { CAP_NET_ADMIN: 12, CAP_SYS_ADMIN: 21 } as const;
/**
 * A capability this package can test for or drop: 'CAP_NET_ADMIN' or 'CAP_SYS_ADMIN'.
 * @useDeclaredType
 */
export type CapabilityName = keyof typeof CAPABILITIES;

/**
 * Whether the calling thread has capability `name` in its effective set, read
 * synchronously from /proc/thread-self/status (capabilities are per thread).
 * Tests use it to skip what needs root: CAP_SYS_ADMIN for namespaces,
 * CAP_NET_ADMIN for links, addresses and nftables.
 */
export function hasEffectiveCapability(name: CapabilityName): boolean {
  const bit = capabilityNumber(name);
  const capEff = /^CapEff:\s*([0-9a-f]+)$/m.exec(readFileSync('/proc/thread-self/status', 'utf8'))?.[1];
  return capEff !== undefined && ((BigInt(`0x${capEff}`) >> BigInt(bit)) & 1n) === 1n;
}

/**
 * The capability's number; ERR_NETNS_INVALID_ARG for any other name. Exact
 * names only, as the type has them: a lower-case or CAP_-less spelling is
 * refused rather than guessed at, and the message says what is accepted.
 */
export function capabilityNumber(name: unknown): number {
  if (typeof name !== 'string' || !Object.hasOwn(CAPABILITIES, name)) {
    const accepted = Object.keys(CAPABILITIES).map((known) => `'${known}'`).join(' or ');
    throw netnsError(ErrorCodes.INVALID_ARG, `capability name must be ${accepted}, got ${typeof name === 'string' ? JSON.stringify(name) : typeof name}`);
  }
  return CAPABILITIES[name as CapabilityName];
}
