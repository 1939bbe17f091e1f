// IP forwarding in a namespace, as Go's ip.EnableIP4Forward/EnableIP6Forward:
// set to 1 where it is not already, never set back (other networks on the
// host may depend on it). Read and written through the NetNS handle's sysctl
// facility (/proc/sys/net opened inside the namespace): no `sysctl` process.
import { ErrorCodes, netnsError } from '../core/errors.js';
import type { NetNS } from '../netns.js';
import { checkArray, checkNs, invalidArg } from './arg-checks.js';

const KEYS = { 4: 'net/ipv4/ip_forward', 6: 'net/ipv6/conf/all/forwarding' } as const;

/**
 * Turns IP forwarding on in `ns` for each family given (4, 6), through the
 * namespace's /proc/sys/net (no `sysctl` process), and never turns it off
 * again (other networks may rely on it). Async; resolves with the families it
 * had to change. A family other than 4 or 6 rejects with ERR_NETNS_INVALID_ARG.
 */
export async function enableForward(ns: NetNS, families: Iterable<4 | 6>): Promise<(4 | 6)[]> {
  checkNs('enableForward', 'ns', ns);
  if (typeof (families as { [Symbol.iterator]?: unknown } | null | undefined)?.[Symbol.iterator] !== 'function') {
    throw invalidArg('enableForward', 'families must be a list of 4 and 6 (an iterable)');
  }
  const { sysctl } = ns;
  const changed: (4 | 6)[] = [];
  for (const family of new Set(families)) {
    if (family !== 4 && family !== 6) throw netnsError(ErrorCodes.INVALID_ARG, `enableForward: a family is 4 or 6, got ${String(family)}`);
    if ((await sysctl.get(KEYS[family])) === '1') continue;
    await sysctl.set(KEYS[family], 1);
    changed.push(family);
  }
  return changed;
}

/** The families of a result's addresses ('10.1.1.2/24' -> 4), for enableForward. */
export function familiesOf(ips: readonly { address: string }[]): (4 | 6)[] {
  checkArray('familiesOf', 'ips', ips);
  if (!ips.every((ip) => typeof ip?.address === 'string')) throw invalidArg('familiesOf', 'each of ips needs an address string');
  return [...new Set(ips.map((ip): 4 | 6 => (ip.address.includes(':') ? 6 : 4)))];
}
