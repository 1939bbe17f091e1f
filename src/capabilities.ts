// Capabilities this package cares about, by name, and whether the calling
// thread has one in its effective set (capabilities are per thread).
import { readFileSync } from 'node:fs';

export const CAPABILITIES = { CAP_NET_ADMIN: 12, CAP_SYS_ADMIN: 21 } as const;
/** A capability this package can test for or drop: 'CAP_NET_ADMIN' or 'CAP_SYS_ADMIN'. */
export type CapabilityName = keyof typeof CAPABILITIES;

/**
 * Whether the calling thread has capability `name` in its effective set, read
 * synchronously from /proc/thread-self/status (capabilities are per thread).
 * Tests use it to skip what needs root: CAP_SYS_ADMIN for namespaces,
 * CAP_NET_ADMIN for links, addresses and nftables.
 */
export function hasEffectiveCapability(name: CapabilityName): boolean {
  const capEff = /^CapEff:\s*([0-9a-f]+)$/m.exec(readFileSync('/proc/thread-self/status', 'utf8'))?.[1];
  return capEff !== undefined && ((BigInt(`0x${capEff}`) >> BigInt(CAPABILITIES[name])) & 1n) === 1n;
}
