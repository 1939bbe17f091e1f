// CHECK helpers: whether a namespace still has what a result says an ADD
// made. Each failure is an error with code ERR_NETNS_CNI_CHECK and a message
// naming what is missing or differs; pluginMain prints it as CNI code 110
// (CniCode.CHECK_FAILED, in the plugins' own range: the spec has no code for it).
import { ErrorCodes, type NetnsError, netnsError } from '../core/errors.js';
import { openNetlink, type Route as KernelRoute } from '../netlink/index.js';
import { formatAddress, networkOf, own, parseAddress, parsePrefix } from '../netlink/validate.js';
import type { NetNS } from '../netns.js';
import type { IpConfig, Result, Route } from './types.js';
import { checkNs, checkObject, checkResult, checkString } from './arg-checks.js';

const mismatch = (message: string): NetnsError => netnsError(ErrorCodes.CNI_CHECK, `CHECK: ${message}`);

/**
 * `ifname` exists in `ns` (of `kind`, e.g. 'veth', when given), has the MAC
 * the result's interface entry gives it (if it gives one), and has every
 * address the result's ips put on that entry. The entry is the one named
 * `ifname` (and, with `sandbox`, in that sandbox: a chain's result may name
 * interfaces of several namespaces); the other entries' addresses, which
 * earlier or later plugins of a chain made, are not judged here. Async, over
 * netlink in `ns`: a difference rejects with ERR_NETNS_CNI_CHECK saying what
 * differs, which pluginMain answers as CNI code 110 (CniCode.CHECK_FAILED).
 */
export async function checkInterface(ns: NetNS, ifname: string, result: Result, options: { kind?: string; sandbox?: string } = {}): Promise<void> {
  checkNs('checkInterface', 'ns', ns);
  checkString('checkInterface', 'ifname', ifname);
  checkResult('checkInterface', result);
  checkObject('checkInterface', 'options', options);
  const { kind, sandbox } = own(options);
  const index = (result.interfaces ?? []).findIndex((i) => i.name === ifname && (sandbox === undefined || i.sandbox === sandbox));
  if (index < 0) throw mismatch(`the result has no interface named ${ifname}${sandbox === undefined ? '' : ` in ${sandbox}`}`);
  const entry = result.interfaces![index]!;
  const ips = (result.ips ?? []).filter((ip) => ip.interface === index);
  using nl = await openNetlink(ns);
  const link = await nl.links.get(ifname).catch((error: NetnsError) => {
    if (error.code === 'ENODEV') throw mismatch(`interface ${ifname} is missing in ${ns.path}`);
    throw error;
  });
  if (kind !== undefined && link.kind !== kind) throw mismatch(`interface ${ifname} is a ${link.kind ?? 'device without a kind'}, not a ${kind}`);
  if (entry.mac !== undefined && link.mac?.toLowerCase() !== entry.mac.toLowerCase()) {
    throw mismatch(`interface ${ifname} has MAC ${link.mac ?? 'none'}, the result says ${entry.mac}`);
  }
  const present = new Set((await nl.addresses.list({ link: link.index })).map((a) => `${a.address}/${a.prefixLength}`));
  for (const ip of ips) {
    const prefix = parsePrefix(ip.address, 'result address', false);
    if (!present.has(`${prefix.text}/${prefix.prefixLength}`)) throw mismatch(`address ${ip.address} is missing on ${ifname}`);
  }
}

/**
 * Every route of the result exists, in any routing table: same destination
 * and the same gateway (a route without one: the first gateway of its family
 * among the result's ips, as configureInterface added it; none: any). Async,
 * over netlink in `ns`: a missing route rejects with ERR_NETNS_CNI_CHECK.
 */
export async function checkRoutes(ns: NetNS, result: Result): Promise<void> {
  checkNs('checkRoutes', 'ns', ns);
  checkResult('checkRoutes', result);
  const wanted = result.routes ?? [];
  if (wanted.length === 0) return;
  using nl = await openNetlink(ns);
  const routes = await nl.routes.list({ table: 'all' });
  for (const route of wanted) {
    const destination = canonicalPrefix(route.dst);
    const gateway = expectedGateway(route, result.ips ?? []);
    const found = routes.some((r) => r.destination === destination && (gateway === undefined || gatewaysOf(r).includes(gateway)));
    if (!found) throw mismatch(`route to ${route.dst}${gateway === undefined ? '' : ` via ${gateway}`} is missing`);
  }
}

function canonicalPrefix(cidr: string): string {
  const prefix = parsePrefix(cidr, 'route destination');
  return `${formatAddress(networkOf(prefix))}/${prefix.prefixLength}`;
}

function expectedGateway(route: Route, ips: IpConfig[]): string | undefined {
  const v6 = route.dst.includes(':');
  const gateway = route.gw ?? ips.find((ip) => ip.gateway !== undefined && ip.gateway.includes(':') === v6)?.gateway;
  return gateway === undefined ? undefined : parseAddress(gateway, 'route gateway').text;
}

const gatewaysOf = (route: KernelRoute): string[] => [route.gateway, ...(route.multipath ?? []).map((hop) => hop.gateway)].filter((g): g is string => g !== undefined);
