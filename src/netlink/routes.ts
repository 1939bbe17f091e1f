// Routes: RTM_NEWROUTE / DELROUTE / GETROUTE, as `ip route` sends them
// (reference §2): tables below 256 in rtm_table, from 256 on in RTA_TABLE with
// rtm_table 0; protocol BOOT, table MAIN and, for a route with no gateway,
// scope LINK by default; deletes match on what is given (scope NOWHERE, protocol
// and type 0 match anything).
import { attr, AttributeMap, type Attribute } from './attributes.js';
import * as C from './constants.js';
import type { NetlinkHandle } from './handle.js';
import type { NetlinkMessage, NetlinkRequest } from './message.js';
import { checkLinkRef, describeLink, type LinkRef, type Links } from './links.js';
import { namesOf } from './enum-names.js';
import { checkKeys, SPEC_KEYS } from './keys.js';
import { scopeName, scopeNumber, type Family, type ScopeName } from './addresses.js';
import {
  addressFamily,
  checkFamily,
  checkSameFamily,
  checkUint,
  formatAddress,
  invalid,
  networkOf,
  own,
  parseAddress,
  parsePrefix,
  type ParsedAddress,
  type ParsedPrefix,
} from './validate.js';

export const ROUTE_TYPES = { unicast: 1, local: 2, broadcast: 3, anycast: 4, multicast: 5, blackhole: 6, unreachable: 7, prohibit: 8, throw: 9 } as const;
/**
 * A route's type (RTN_*) by name, as `ip route` prints it.
 * @useDeclaredType
 */
export type RouteType = keyof typeof ROUTE_TYPES;
export const ROUTE_PROTOCOLS = { redirect: 1, kernel: 2, boot: 3, static: 4, ra: 9, dhcp: 16 } as const;
/**
 * Who installed a route (RTPROT_*), by name; other values stay numbers.
 * @useDeclaredType
 */
export type RouteProtocol = keyof typeof ROUTE_PROTOCOLS;
const protocolName = namesOf(ROUTE_PROTOCOLS);
const typeName = namesOf(ROUTE_TYPES);
const TABLES = { main: C.RT_TABLE_MAIN, local: 255, default: 253 } as const;

/** One path of a multipath route. */
export interface NextHop {
  /** The next hop's address. */
  gateway?: string;
  /** The output link, by name or index. */
  device?: LinkRef;
  /** 1-256 (sent as hops = weight - 1). */
  weight?: number;
  /** Take the gateway as on the link even with no matching prefix (RTNH_F_ONLINK). */
  onlink?: boolean;
}

/** What routes.add() / replace() / delete() take: a destination ("10.0.0.0/24" or "default") and how to reach it. */
export interface RouteSpec {
  /** "10.0.0.0/16", "fd00::/64", a bare address (a host route), or "default". */
  destination: string;
  /** Needed only for "default" without a gateway; else taken from the addresses. */
  family?: Family;
  /** The next hop's address (RTA_GATEWAY). */
  gateway?: string;
  /** The output link, by name or index. */
  device?: LinkRef;
  /** Preferred source address (RTA_PREFSRC). */
  source?: string;
  /** link for a directly reachable destination; derived as `ip route` does when absent. */
  scope?: ScopeName | number;
  /** The priority (RTA_PRIORITY): lower wins. */
  metric?: number;
  /** 1-2^32-1, or main (default), local. */
  table?: number | keyof typeof TABLES;
  /** Who installed it (RTPROT_*): boot when absent, as `ip route add` sets it. */
  protocol?: number | RouteProtocol;
  /** unicast (the default), blackhole, unreachable, prohibit, local... */
  type?: RouteType;
  /** Take the gateway as on the link even with no matching prefix. */
  onlink?: boolean;
  /** Several next hops (ECMP) instead of gateway/device. */
  multipath?: NextHop[];
  /** Path MTU to the destination (RTAX_MTU): 1-65520. */
  mtu?: number;
  /** MSS advertised to TCP peers over this route (RTAX_ADVMSS): 1-65495. */
  advmss?: number;
}

/** A route as the kernel reports it (RTM_NEWROUTE): what `ip route show` prints. */
export interface Route {
  /** 4 or 6. */
  family: Family;
  /** Always with its length: "0.0.0.0/0" is the default route. */
  destination: string;
  /** The next hop's address. */
  gateway?: string;
  /** Output interface index. */
  device?: number;
  /** The preferred source address (RTA_PREFSRC). */
  source?: string;
  /** universe routes read global; link, host, or the number. */
  scope: ScopeName | number;
  /** The priority (RTA_PRIORITY), when set. */
  metric?: number;
  /** The table number: 254 main, 255 local. */
  table: number;
  /** Who installed it: kernel, boot, static..., or the number. */
  protocol: RouteProtocol | number;
  /** unicast, local, broadcast, blackhole..., or the number. */
  type: RouteType | number;
  /** RTNH_F_ONLINK set. */
  onlink: boolean;
  /** The next hops of a multipath route. */
  multipath?: {
    /** The next hop's address, when it has one. */
    gateway?: string;
    /** The output link's index. */
    device: number;
    /** 1-256: its share of the traffic. */
    weight: number;
    /** RTNH_F_ONLINK set. */
    onlink: boolean;
  }[];
  /** Path MTU (RTAX_MTU), when set. */
  mtu?: number;
  /** Advertised MSS (RTAX_ADVMSS), when set. */
  advmss?: number;
}

/** Which routes routes.list() returns: one table (main unless said, or 'all') and one family or both. */
export interface RouteFilter {
  /** Only this family; both when absent. */
  family?: Family;
  /** A table number or name; 'all' for every table. Default: main. */
  table?: number | keyof typeof TABLES | 'all';
}

/** struct rtmsg: family, dst_len, src_len, tos, table, protocol, scope, type, u32 flags. */
export function rtmsg(f: { family: number; dstLen?: number; table?: number; protocol?: number; scope?: number; type?: number; flags?: number }): Buffer {
  const out = Buffer.from([f.family, f.dstLen ?? 0, 0, 0, f.table ?? 0, f.protocol ?? 0, f.scope ?? 0, f.type ?? 0, 0, 0, 0, 0]);
  out.writeUInt32LE(f.flags ?? 0, 8);
  return out;
}

function tableNumber(table: RouteSpec['table']): number {
  if (table === undefined) return C.RT_TABLE_MAIN;
  if (typeof table === 'string') {
    if (!Object.hasOwn(TABLES, table)) throw invalid(`table must be a number or one of ${Object.keys(TABLES).join(', ')}, got ${JSON.stringify(table)}`);
    return TABLES[table];
  }
  return checkUint(table, 'table', 0xffffffff, 1);
}

function named<T extends Record<string, number>>(table: T, value: unknown, what: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value === 'number') return checkUint(value, what, 255);
  if (typeof value !== 'string' || !Object.hasOwn(table, value)) throw invalid(`${what} must be one of ${Object.keys(table).join(', ')} or 0-255, got ${JSON.stringify(value)}`);
  return table[value]!;
}

function destinationOf(spec: RouteSpec): ParsedPrefix {
  checkFamily(spec.family);
  if (spec.destination === 'default') {
    const family = spec.gateway !== undefined ? parseAddress(spec.gateway, 'gateway').family : spec.family === 6 ? C.AF_INET6 : C.AF_INET;
    const bytes = Buffer.alloc(family === C.AF_INET ? 4 : 16);
    return { family, bytes, text: 'default', prefixLength: 0 };
  }
  const prefix = parsePrefix(spec.destination, 'destination');
  if (spec.family !== undefined && (spec.family === 4) !== (prefix.family === C.AF_INET)) {
    throw invalid(`destination ${spec.destination} is not IPv${spec.family}`);
  }
  return { ...prefix, bytes: networkOf(prefix) };
}

/** What a route request is about, for errors: "10.10.0.0/16 via 10.9.0.254 dev vA table 1000". */
function describeRoute(spec: RouteSpec): string {
  const parts = [spec.destination];
  if (spec.gateway !== undefined) parts.push(`via ${spec.gateway}`);
  if (spec.device !== undefined) parts.push(`dev ${describeLink(spec.device)}`);
  if (spec.table !== undefined) parts.push(`table ${spec.table}`);
  return parts.join(' ');
}

/** Link indexes resolved by the caller: the route's device and each next hop's. */
export interface ResolvedDevices {
  device?: number;
  multipath?: (number | undefined)[];
}

export function routeRequest(type: number, flags: number, spec: RouteSpec, devices: ResolvedDevices): NetlinkRequest {
  const del = type === C.RTM_DELROUTE;
  const dst = destinationOf(spec);
  const gateway = spec.gateway === undefined ? undefined : familyChecked(dst, spec.gateway, 'gateway');
  const table = tableNumber(spec.table);
  const routeType = named(ROUTE_TYPES, spec.type, 'route type', del ? 0 : C.RTN_UNICAST);
  const attributes: Attribute[] = [];
  if (dst.prefixLength > 0) attributes.push(attr.bytes(C.RTA_DST, dst.bytes));
  if (gateway) attributes.push(attr.bytes(C.RTA_GATEWAY, gateway.bytes));
  if (spec.source !== undefined) attributes.push(attr.bytes(C.RTA_PREFSRC, familyChecked(dst, spec.source, 'source').bytes));
  if (table >= 256) attributes.push(attr.u32(C.RTA_TABLE, table));
  if (spec.metric !== undefined) attributes.push(attr.u32(C.RTA_PRIORITY, checkUint(spec.metric, 'metric')));
  if (spec.multipath !== undefined) attributes.push(multipath(dst, spec.multipath, devices.multipath ?? []));
  if (devices.device !== undefined) attributes.push(attr.u32(C.RTA_OIF, devices.device));
  const metrics = routeMetrics(spec);
  if (metrics.length > 0) attributes.push(attr.nest(C.RTA_METRICS, metrics)); // after RTA_OIF, as ip sends it
  const header = rtmsg({
    family: dst.family,
    dstLen: dst.prefixLength,
    table: table < 256 ? table : C.RT_TABLE_UNSPEC,
    protocol: named(ROUTE_PROTOCOLS, spec.protocol, 'protocol', del ? 0 : C.RTPROT_BOOT),
    scope: spec.scope !== undefined ? scopeNumber(spec.scope) : defaultScope(del, routeType, gateway !== undefined || spec.multipath !== undefined),
    type: routeType,
    flags: spec.onlink ? C.RTNH_F_ONLINK : 0,
  });
  const verb = del ? 'delete' : flags & C.NLM_F_REPLACE ? 'replace' : 'add';
  return { type, flags, header, attributes, what: `${verb} route ${describeRoute(spec)}` };
}

// The kernel (ip_metrics_convert) clamps larger values to these and stores 0
// as "no metric": refused here, so what is set is what a dump reads back.
const MAX_ROUTE_MTU = 65535 - 15;
const MAX_ADVMSS = 65535 - 40;

/** RTA_METRICS' children: RTAX_MTU, RTAX_ADVMSS (u32s), for those given. */
function routeMetrics(spec: RouteSpec): Attribute[] {
  const metrics: Attribute[] = [];
  if (spec.mtu !== undefined) metrics.push(attr.u32(C.RTAX_MTU, checkUint(spec.mtu, 'route mtu', MAX_ROUTE_MTU, 1)));
  if (spec.advmss !== undefined) metrics.push(attr.u32(C.RTAX_ADVMSS, checkUint(spec.advmss, 'advmss', MAX_ADVMSS, 1)));
  return metrics;
}

function defaultScope(del: boolean, type: number, viaGateway: boolean): number {
  if (del) return C.RT_SCOPE_NOWHERE;
  if (type === ROUTE_TYPES.local) return C.RT_SCOPE_HOST;
  if (type === ROUTE_TYPES.broadcast || type === ROUTE_TYPES.multicast || type === ROUTE_TYPES.anycast) return C.RT_SCOPE_LINK;
  if (type === ROUTE_TYPES.unicast && !viaGateway) return C.RT_SCOPE_LINK;
  return C.RT_SCOPE_UNIVERSE;
}

function familyChecked(dst: ParsedPrefix, text: string, what: string): ParsedAddress {
  const address = parseAddress(text, what);
  checkSameFamily(dst.text === 'default' ? { ...dst, text: `a default route of that family` } : dst, address, what);
  return address;
}

/** RTA_MULTIPATH: repeated rtnexthop{u16 len, u8 flags, u8 hops = weight-1, s32 ifindex} + RTA_GATEWAY. */
function multipath(dst: ParsedPrefix, hops: NextHop[], devices: (number | undefined)[]): Attribute {
  if (!Array.isArray(hops) || hops.length === 0) throw invalid('multipath must be a non-empty array of next hops');
  const parts = hops.map((given, i) => {
    const hop = own(given);
    if (typeof hop !== 'object' || hop === null) throw invalid('a next hop must be an object ({ gateway, device, weight, onlink })');
    const gateway = hop.gateway === undefined ? undefined : familyChecked(dst, hop.gateway, 'next-hop gateway');
    const tail = gateway ? encodeGateway(gateway) : Buffer.alloc(0);
    const head = Buffer.alloc(C.RTNEXTHOP_SIZE);
    head.writeUInt16LE(C.RTNEXTHOP_SIZE + tail.length, 0);
    head.writeUInt8(hop.onlink ? C.RTNH_F_ONLINK : 0, 2);
    head.writeUInt8(checkUint(hop.weight ?? 1, 'weight', 256, 1) - 1, 3);
    head.writeInt32LE(devices[i] ?? 0, 4);
    return Buffer.concat([head, tail]);
  });
  return attr.bytes(C.RTA_MULTIPATH, Buffer.concat(parts));
}

function encodeGateway(gateway: ParsedAddress): Buffer {
  const out = Buffer.alloc(4 + gateway.bytes.length); // 4- or 16-byte payload: already aligned
  out.writeUInt16LE(out.length, 0);
  out.writeUInt16LE(C.RTA_GATEWAY, 2);
  gateway.bytes.copy(out, 4);
  return out;
}

export function parseRoute(message: NetlinkMessage): Route {
  const p = message.payload;
  const family = p.readUInt8(0);
  const a = AttributeMap.parse(p, C.RTMSG_SIZE);
  const dstLen = p.readUInt8(1);
  const dst = a.get(C.RTA_DST) ?? Buffer.alloc(family === C.AF_INET ? 4 : 16);
  const route: Route = {
    family: family === C.AF_INET ? 4 : 6,
    destination: `${formatAddress(dst)}/${dstLen}`,
    scope: scopeName(p.readUInt8(6)),
    table: a.u32(C.RTA_TABLE) ?? p.readUInt8(4),
    protocol: protocolName(p.readUInt8(5)),
    type: typeName(p.readUInt8(7)),
    onlink: (p.readUInt32LE(8) & C.RTNH_F_ONLINK) !== 0,
  };
  const gateway = a.get(C.RTA_GATEWAY);
  if (gateway) route.gateway = formatAddress(gateway);
  const oif = a.u32(C.RTA_OIF);
  if (oif !== undefined) route.device = oif;
  const source = a.get(C.RTA_PREFSRC);
  if (source) route.source = formatAddress(source);
  const metric = a.u32(C.RTA_PRIORITY);
  if (metric !== undefined) route.metric = metric;
  const hops = a.get(C.RTA_MULTIPATH);
  if (hops) route.multipath = parseNextHops(hops);
  const metrics = a.nested(C.RTA_METRICS);
  const mtu = metrics?.u32(C.RTAX_MTU);
  if (mtu !== undefined) route.mtu = mtu;
  const advmss = metrics?.u32(C.RTAX_ADVMSS);
  if (advmss !== undefined) route.advmss = advmss;
  return route;
}

function parseNextHops(buffer: Buffer): NonNullable<Route['multipath']> {
  const hops: NonNullable<Route['multipath']> = [];
  let offset = 0;
  while (offset + C.RTNEXTHOP_SIZE <= buffer.length) {
    const length = buffer.readUInt16LE(offset);
    if (length < C.RTNEXTHOP_SIZE || offset + length > buffer.length) break;
    const flags = buffer.readUInt8(offset + 2);
    const hop: NonNullable<Route['multipath']>[number] = {
      device: buffer.readInt32LE(offset + 4),
      weight: buffer.readUInt8(offset + 3) + 1,
      onlink: (flags & C.RTNH_F_ONLINK) !== 0,
    };
    const gateway = AttributeMap.parse(buffer, offset + C.RTNEXTHOP_SIZE, offset + length).get(C.RTA_GATEWAY);
    if (gateway) hop.gateway = formatAddress(gateway);
    hops.push(hop);
    offset += (length + 3) & ~3;
  }
  return hops;
}

/** Every check add() makes before sending, links aside: for a caller that checks a batch of routes before its first change. */
export function checkRoute(spec: RouteSpec): void {
  spec = own(spec);
  checkRouteKeys(spec, 'routes.add');
  routeRequest(C.RTM_NEWROUTE, C.NLM_F_CREATE | C.NLM_F_EXCL, spec, {});
}

/** The route's keys and each next hop's (a hop that is not an object is refused later, as such). */
function checkRouteKeys(spec: RouteSpec, method: string): void {
  checkKeys(spec, SPEC_KEYS.route, method);
  const hops: unknown = spec?.multipath;
  if (Array.isArray(hops)) hops.forEach((hop, i) => checkKeys(hop, SPEC_KEYS['next hop'], `${method} multipath[${i}]`));
}

/**
 * Routes of the Netlink handle's namespace (`nl.routes`), as `ip route`. Every
 * method is async; kernel refusals are NetnsErrors with the errno name as code
 * (EEXIST, ESRCH for a missing route, ENETUNREACH, EPERM without CAP_NET_ADMIN).
 */
export class Routes {
  readonly #nl: NetlinkHandle;
  readonly #links: Links;

  constructor(handle: NetlinkHandle, links: Links) {
    this.#nl = handle;
    this.#links = links;
  }

  /** Routes of one table (main by default; 'all' for every one), of one family or both; cached clones left out. */
  async list(filter: RouteFilter = {}): Promise<Route[]> {
    filter = own(filter);
    if (typeof filter !== 'object' || filter === null) throw invalid('a route filter must be an object ({ table, family })');
    checkKeys(filter, SPEC_KEYS['routes.list'], 'routes.list');
    const family = addressFamily(checkFamily(filter.family));
    const table = filter.table === 'all' ? 0 : tableNumber(filter.table);
    // Strict checking keeps the header's other fields at 0 and honours RTA_TABLE as a filter.
    const attributes = table === 0 ? [] : [attr.u32(C.RTA_TABLE, table)];
    const messages = await this.#nl.dump(C.RTM_GETROUTE, rtmsg({ family }), attributes, 'list routes');
    return messages
      .filter((m) => m.type === C.RTM_NEWROUTE && (m.payload.readUInt32LE(8) & C.RTM_F_CLONED) === 0)
      .map(parseRoute)
      .filter((r) => table === 0 || r.table === table);
  }

  /** Adds a route; EEXIST if one to the same destination is there (replace() overwrites). */
  add(spec: RouteSpec): Promise<void> {
    return this.#send('routes.add', C.RTM_NEWROUTE, C.NLM_F_CREATE | C.NLM_F_EXCL, spec);
  }

  /** Adds, or replaces the route to the same destination (table, metric...). */
  replace(spec: RouteSpec): Promise<void> {
    return this.#send('routes.replace', C.RTM_NEWROUTE, C.NLM_F_CREATE | C.NLM_F_REPLACE, spec);
  }

  /** Deletes the first route matching what is given (destination, and gateway, device, table... if given). */
  delete(spec: RouteSpec): Promise<void> {
    return this.#send('routes.delete', C.RTM_DELROUTE, 0, spec);
  }

  async #send(method: string, type: number, flags: number, spec: RouteSpec): Promise<void> {
    spec = own(spec);
    if (typeof spec !== 'object' || spec === null) throw invalid('a route needs { destination }');
    checkRouteKeys(spec, method);
    routeRequest(type, flags, spec, {}); // validate everything before any lookup is sent
    // Every link named (the route's and each next hop's) is checked before the first lookup.
    const device = spec.device === undefined ? undefined : checkLinkRef(spec.device);
    const hopDevices = (spec.multipath ?? []).map((h) => (h.device === undefined ? undefined : checkLinkRef(h.device)));
    const devices: ResolvedDevices = {};
    if (device !== undefined) devices.device = await this.#links.index(device);
    if (spec.multipath) {
      devices.multipath = [];
      for (const ref of hopDevices) devices.multipath.push(ref === undefined ? undefined : await this.#links.index(ref));
    }
    await this.#nl.request([routeRequest(type, flags, spec, devices)]);
  }
}
