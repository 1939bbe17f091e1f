// Configures an interface from a CNI result, as Go's ipam.ConfigureIface:
// IPv6 turned on for it (disable_ipv6=0, keep_addr_on_down=1) when the result
// has IPv6 addresses for it, its addresses (an IPv4 one shorter than /31 with
// its subnet's broadcast address, as Go's netlink adds it), the link up, IPv6 duplicate
// address detection awaited (address events, not a fixed sleep), then the
// result's routes through it, a route without a gateway taking the first
// gateway of its family. All over netlink and the namespace's sysctls.
import { ErrorCodes, type NetnsError, netnsError } from '../core/errors.js';
import { openNetlink, type Address, type Netlink, type NetlinkEvent, type RouteSpec } from '../netlink/index.js';
import { checkRoute } from '../netlink/routes.js';
import { AF_INET } from '../netlink/constants.js';
import { parsePrefix, type ParsedPrefix } from '../netlink/validate.js';
import type { NetNS } from '../netns.js';
import type { IpConfig, Result, Route } from './types.js';
import { checkNs, checkResult, checkString } from './arg-checks.js';

/** How long IPv6 duplicate address detection may take, as Go's SettleAddresses. */
export const DAD_TIMEOUT_MS = 10_000;

const familyOf = (cidr: string): 4 | 6 => (cidr.includes(':') ? 6 : 4);
const invalid = (message: string): NetnsError => netnsError(ErrorCodes.INVALID_ARG, `configureInterface: ${message}`);

/**
 * The result's IPs on `ifname`: those whose `interface` points at an entry of
 * that name (entries without `interface` are skipped). Synchronous; an entry
 * pointing at another interface or at none the result has throws
 * ERR_NETNS_INVALID_ARG.
 */
export function ipsFor(result: Result, ifname: string): IpConfig[] {
  checkResult('ipsFor', result);
  checkString('ipsFor', 'ifname', ifname);
  const out: IpConfig[] = [];
  for (const ip of result.ips ?? []) {
    if (ip.interface === undefined) continue;
    const entry = result.interfaces?.[ip.interface];
    if (!entry) throw invalid(`ips entry ${ip.address} points at interface ${ip.interface}, which the result does not have`);
    if (entry.name !== ifname) throw invalid(`ips entry ${ip.address} is for interface ${entry.name}, not ${ifname}`);
    out.push(ip);
  }
  return out;
}

/**
 * Gives `ifname` inside `ns` what `result` assigns it, as Go's
 * ipam.ConfigureIface: its addresses (those of `ips` whose `interface` names
 * it), the link up, IPv6 duplicate address detection awaited (up to
 * DAD_TIMEOUT_MS), then the result's routes through it (a route without `gw`
 * takes the first gateway of its family). Async, over netlink, no `ip`
 * process. Rejects with ERR_NETNS_INVALID_ARG, before changing anything, when
 * the result has no address for `ifname` or a bad address or route; the
 * kernel's refusals reject with its error code (ENODEV for a missing link,
 * EEXIST for an address already there); an IPv6 address that fails DAD is
 * EADDRINUSE, and DAD still running after DAD_TIMEOUT_MS is ETIMEDOUT.
 */
export async function configureInterface(ns: NetNS, ifname: string, result: Result): Promise<void> {
  checkNs('configureInterface', 'ns', ns);
  checkString('configureInterface', 'ifname', ifname);
  checkResult('configureInterface', result);
  const ips = ipsFor(result, ifname);
  if (ips.length === 0) throw invalid(`the result has no IP address for ${ifname}`);
  for (const ip of ips) parsePrefix(ip.address, 'result address', false); // every input checked before the first change
  const routes = (result.routes ?? []).map((route) => routeSpec(route, ips));
  const nl = await openNetlink(ns);
  try {
    const link = await nl.links.get(ifname);
    const v6 = ips.filter((ip) => familyOf(ip.address) === 6);
    if (v6.length > 0) {
      await ns.sysctl.set(`net/ipv6/conf/${ifname}/disable_ipv6`, 0);
      await ns.sysctl.set(`net/ipv6/conf/${ifname}/keep_addr_on_down`, 1);
    }
    // Subscribed before the link goes up, so no DAD outcome can pass unseen.
    const settled = v6.length > 0 ? await awaitDad(nl, link.index, v6.map((ip) => ip.address)) : undefined;
    try {
      for (const ip of ips) await nl.addresses.add({ link: link.index, address: ip.address, ...broadcastOf(parsePrefix(ip.address)) });
      await nl.links.up(link.index);
      await settled?.done;
    } finally {
      settled?.close();
    }
    for (const route of routes) await nl.routes.add({ ...route, device: link.index });
  } finally {
    nl.close();
  }
}

/** An IPv4 subnet's broadcast address (RFC 3021: none for /31 and /32), as vishvananda/netlink's AddrAdd sets it. */
function broadcastOf(prefix: ParsedPrefix): { broadcast?: string } {
  if (prefix.family !== AF_INET || prefix.prefixLength >= 31) return {};
  const value = (prefix.bytes.readUInt32BE(0) | (0xffffffff >>> prefix.prefixLength)) >>> 0; // >>> 0 for /0: all ones
  return { broadcast: [24, 16, 8, 0].map((shift) => (value >>> shift) & 0xff).join('.') };
}

/**
 * A result route as a netlink route spec, checked whole (so a bad table or
 * mtu is refused before the first change); the gateway falls back to the
 * first of its family among `ips`.
 */
function routeSpec(route: Route, ips: IpConfig[]): RouteSpec {
  const family = familyOf(route.dst);
  const gateway = route.gw ?? ips.find((ip) => ip.gateway !== undefined && familyOf(ip.gateway) === family)?.gateway;
  parsePrefix(route.dst, 'route dst'); // a CIDR, as CNI has it: netlink's 'default' is not one
  const spec: RouteSpec = { destination: route.dst };
  if (gateway !== undefined) spec.gateway = gateway;
  if (route.priority !== undefined) spec.metric = route.priority;
  if (route.table !== undefined) spec.table = route.table;
  if (route.scope !== undefined) spec.scope = route.scope;
  // 0 is "not set" in Go (the fields are omitempty; vishvananda/netlink sends no metric for it), so here too.
  if (route.mtu) spec.mtu = route.mtu;
  if (route.advmss) spec.advmss = route.advmss;
  checkRoute(spec);
  return spec;
}

const key = (address: Address): string => `${address.address}/${address.prefixLength}`;

/**
 * Resolves once each of `addresses` (CIDR text) on link `index` is no longer
 * tentative; rejects if one failed DAD or DAD_TIMEOUT_MS passed. Watches
 * address events (and the addresses there already), so nothing is polled.
 */
async function awaitDad(nl: Netlink, index: number, addresses: string[]): Promise<{ done: Promise<void>; close: () => void }> {
  const wanted = new Set(addresses.map((cidr) => {
    const prefix = parsePrefix(cidr);
    return `${prefix.text}/${prefix.prefixLength}`; // as events print it (RFC 5952)
  }));
  const watcher = await nl.watch({ addresses: true, existing: true });
  const flags = new Map<string, Address['flags']>();
  let synced = false;
  let timer: NodeJS.Timeout | undefined;
  const done = new Promise<void>((resolve, reject) => {
    const judge = (): void => {
      if (!synced) return;
      for (const cidr of wanted) {
        const seen = flags.get(cidr);
        if (seen?.includes('dadfailed')) return reject(netnsError('EADDRINUSE', `configureInterface: ${cidr} failed duplicate address detection (another host has it)`));
        if (seen === undefined || seen.includes('tentative')) return;
      }
      resolve();
    };
    watcher.on('data', (event: NetlinkEvent) => {
      if (event.type === 'synced') synced = true;
      else if (event.type === 'overflow') {
        synced = false; // a fresh dump follows
        flags.clear();
      }
      else if (event.type === 'address' && event.address.index === index && event.address.family === 6) {
        if (event.action === 'delete') flags.delete(key(event.address));
        else flags.set(key(event.address), event.address.flags);
      }
      judge();
    });
    watcher.on('error', reject);
    timer = setTimeout(() => reject(netnsError('ETIMEDOUT', `configureInterface: duplicate address detection did not finish within ${DAD_TIMEOUT_MS} ms`)), DAD_TIMEOUT_MS);
  });
  done.catch(() => {}); // observed by the caller's await; not unhandled if the caller failed first
  return {
    done,
    close: () => {
      clearTimeout(timer);
      watcher.close();
    },
  };
}
