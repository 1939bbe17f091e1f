// Filters: RTM_NEWTFILTER / DELTFILTER / GETTFILTER, as `tc filter` (iproute2
// 6.1) sends them (captured with strace; test/unit/netlink-tc-filters.test.ts):
//   tcmsg{AF_UNSPEC, ifindex, handle 0, parent, info = priority << 16 | htons(protocol)},
//   TCA_KIND, TCA_OPTIONS.
// u32: { TCA_U32_CLASSID, TCA_U32_SEL tc_u32_sel (TERMINAL) + one tc_u32_key
// per 32-bit word of each address matched: IPv4 source at offset 12 and
// destination at 16, IPv6 at 8 and 24; mask and value in network order }.
// matchall: { TCA_MATCHALL_ACT { 1 { TCA_ACT_KIND "gact", TCA_ACT_OPTIONS
// (NLA_F_NESTED) { TCA_GACT_PARMS tc_gen, action TC_ACT_SHOT } } } }.
// A classifier or action the kernel has no module for is ERR_NETNS_UNSUPPORTED
// naming it (cls_matchall, act_gact).
import { attr, AttributeMap, type Attribute } from './attributes.js';
import { checkUint, invalid } from './checks.js';
import { AF_INET, NLA_F_NESTED, NLM_F_CREATE, NLM_F_EXCL } from './constants.js';
import type { NetlinkHandle } from './handle.js';
import { checkKeys, filterSpecKeys, SPEC_KEYS } from './keys.js';
import { checkLinkRef, describeLink, type LinkRef, type Links } from './links.js';
import type { NetlinkMessage, NetlinkRequest } from './message.js';
import * as T from './tc-constants.js';
import { filterParent, formatFilterParent, formatHandle, parseHandle, parseTcmsg, sendTc, tcmsg, type TcHandle } from './tc-message.js';
import { checkSameFamily, familyName, formatAddress, own, parsePrefix, type ParsedPrefix } from './validate.js';

/** Where a filter attaches: a qdisc ("1:", "ffff:" for ingress) or a clsact hook. */
export type FilterParent = TcHandle | 'ingress' | 'egress';

/** The packets a filter looks at, by EtherType: every one, IPv4, IPv6. */
export type FilterProtocol = 'all' | 'ip' | 'ipv6';

/** What every filter spec has. */
interface FilterBase {
  /** The link, by name or index. */
  link: LinkRef;
  /** The qdisc ("1:") or clsact hook (ingress, egress) the filter attaches to. */
  parent: FilterParent;
  /** 1-65535, lower first; the kernel picks one when absent (49152, then lower). */
  priority?: number;
  /** u32: the family of its match when absent (ip, ipv6); matchall: all. */
  protocol?: FilterProtocol;
}

/** What a u32 filter matches: IPv4 or IPv6 prefixes ("10.0.0.0/24", "fd00::2"; both of one family). */
export interface U32Match {
  /** The destination address or prefix. */
  destination?: string;
  /** The source address or prefix. */
  source?: string;
}

/** A u32 filter steering matching packets into a class: `tc filter add ... u32 match ip dst P flowid M:N`. */
export interface U32FilterSpec extends FilterBase {
  /** The u32 classifier. */
  kind: 'u32';
  /** What to match: at least one of destination, source. */
  match: U32Match;
  /** The class matching packets go to ("1:10"). */
  classid: TcHandle;
}

/** A filter dropping every packet: `tc filter add ... matchall action drop` (modules cls_matchall, act_gact). */
export interface MatchallFilterSpec extends FilterBase {
  /** The matchall classifier. */
  kind: 'matchall';
  /** What to do with every packet: drop (gact's TC_ACT_SHOT). */
  action: 'drop';
}

/** What filters.add() takes. */
export type FilterSpec = U32FilterSpec | MatchallFilterSpec;

/** A filter as the kernel reports it: what `tc filter show` prints. */
export interface Filter {
  /** The interface index. */
  link: number;
  /** "1:", ingress, egress, ... */
  parent: string;
  /** The priority (tc's pref). */
  priority: number;
  /** all, ip, ipv6, or the EtherType number. */
  protocol: FilterProtocol | number;
  /** u32, matchall, ... */
  kind: string;
  /** The kernel's handle of the filter (u32: 0x80000800 is tc's 800::800). */
  handle: number;
  /** The class matching packets go to, when set ("1:10"). */
  classid?: string;
  /** A u32 filter's match, when it is the shape filters.add() makes. */
  match?: U32Match;
  /** A matchall filter's action, when it is drop. */
  action?: 'drop';
}

/** Which filters filters.delete() removes: those at `parent`, of one priority (and protocol) when given. */
export interface FilterSelector {
  /** The link, by name or index. */
  link: LinkRef;
  /** "1:", ingress, egress. */
  parent: FilterParent;
  /** Only this priority's; every filter at parent when absent. */
  priority?: number;
  /** Only this protocol's. */
  protocol?: FilterProtocol;
}

/** Which filters filters.list() returns: one link's, at one parent (the root qdisc when absent, as tc). */
export interface FilterQuery {
  /** The link, by name or index. */
  link: LinkRef;
  /** "1:", ingress, egress; the root qdisc when absent. */
  parent?: FilterParent;
}

const PROTOCOLS: Record<FilterProtocol, number> = { all: T.ETH_P_ALL, ip: T.ETH_P_IP, ipv6: T.ETH_P_IPV6 };
const htons = (n: number): number => ((n & 0xff) << 8) | (n >>> 8);

function protocolNumber(protocol: unknown): number | undefined {
  if (protocol === undefined) return undefined;
  if (typeof protocol !== 'string' || !Object.hasOwn(PROTOCOLS, protocol)) throw invalid(`filter protocol must be one of ${Object.keys(PROTOCOLS).join(', ')}, got ${JSON.stringify(protocol)}`);
  return PROTOCOLS[protocol as FilterProtocol];
}

function priorityNumber(priority: unknown): number {
  return priority === undefined ? 0 : checkUint(priority, 'filter priority', 0xffff, 1);
}

/** tcm_info: the priority in the high half, the protocol (network order) in the low. */
const info = (priority: number, protocol: number): number => ((priority << 16) | htons(protocol)) >>> 0;

/** tc_u32_key for each 32-bit word of `prefix` its length covers (a /0 IPv4 prefix still one, mask 0, as tc). */
function prefixKeys(prefix: ParsedPrefix, offset: number): Buffer[] {
  const keys: Buffer[] = [];
  const words = prefix.family === AF_INET ? 1 : Math.ceil(prefix.prefixLength / 32);
  for (let i = 0; i < words; i++) {
    const bits = Math.min(32, Math.max(0, prefix.prefixLength - 32 * i));
    const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
    const key = Buffer.alloc(T.TC_U32_KEY_SIZE);
    key.writeUInt32BE(mask, 0);
    key.writeUInt32BE((prefix.bytes.readUInt32BE(4 * i) & mask) >>> 0, 4);
    key.writeInt32LE(offset + 4 * i, 8);
    keys.push(key);
  }
  return keys;
}

/** The address offsets in the IP header: source, destination. */
const OFFSETS = { 4: [12, 16], 6: [8, 24] } as const;

function u32Options(spec: U32FilterSpec, protocol: number | undefined): { attributes: Attribute[]; protocol: number } {
  const match = own(spec.match);
  if (typeof match !== 'object' || match === null) throw invalid('a u32 filter needs match: { destination?, source? }');
  checkKeys(match, SPEC_KEYS['u32 match'], 'filters.add match');
  const source = match.source === undefined ? undefined : parsePrefix(match.source, 'u32 match source');
  const destination = match.destination === undefined ? undefined : parsePrefix(match.destination, 'u32 match destination');
  if (!source && !destination) throw invalid('a u32 filter matches a destination, a source, or both');
  if (source && destination) checkSameFamily(source, destination, 'u32 match destination');
  const family = (source ?? destination)!.family === AF_INET ? 4 : 6;
  const wanted = family === 4 ? T.ETH_P_IP : T.ETH_P_IPV6;
  if (protocol !== undefined && protocol !== T.ETH_P_ALL && protocol !== wanted) {
    throw invalid(`a u32 match on ${familyName((source ?? destination)!.family)} addresses needs protocol ${family === 4 ? 'ip' : 'ipv6'} (or all)`);
  }
  const [sourceAt, destinationAt] = OFFSETS[family];
  const keys = [...(source ? prefixKeys(source, sourceAt) : []), ...(destination ? prefixKeys(destination, destinationAt) : [])];
  const sel = Buffer.alloc(T.TC_U32_SEL_SIZE);
  sel.writeUInt8(T.TC_U32_TERMINAL, 0);
  sel.writeUInt8(keys.length, 2);
  const classid = parseHandle(spec.classid, 'u32 classid', 'required');
  const options = [attr.u32(T.TCA_U32_CLASSID, classid), attr.bytes(T.TCA_U32_SEL, Buffer.concat([sel, ...keys]))];
  return { attributes: [attr.nest(T.TCA_OPTIONS, options)], protocol: protocol ?? wanted };
}

function matchallOptions(spec: MatchallFilterSpec, protocol: number | undefined): { attributes: Attribute[]; protocol: number } {
  if (spec.action !== 'drop') throw invalid(`a matchall filter's action must be drop, got ${JSON.stringify(spec.action)}`);
  const gact = Buffer.alloc(T.TC_GACT_SIZE);
  gact.writeInt32LE(T.TC_ACT_SHOT, 8);
  const action = attr.nest(1, [attr.string(T.TCA_ACT_KIND, 'gact'), attr.nest(T.TCA_ACT_OPTIONS | NLA_F_NESTED, [attr.bytes(T.TCA_GACT_PARMS, gact)])]);
  return { attributes: [attr.nest(T.TCA_OPTIONS, [attr.nest(T.TCA_MATCHALL_ACT, [action])])], protocol: protocol ?? T.ETH_P_ALL };
}

const CLASSIFIERS = { u32: u32Options, matchall: matchallOptions } as const;
const MODULES = { u32: { classifier: 'u32' }, matchall: { classifier: 'matchall', action: 'gact' } } as const;

function describe(verb: string, spec: { link: LinkRef; parent: unknown; priority?: unknown; protocol?: unknown }, tail = ''): string {
  const parts = [`tc filter ${verb} dev ${describeLink(spec.link)}`, /^(ingress|egress)$/.test(String(spec.parent)) ? String(spec.parent) : `parent ${String(spec.parent)}`];
  if (spec.protocol !== undefined) parts.push(`protocol ${String(spec.protocol)}`);
  if (spec.priority !== undefined) parts.push(`prio ${String(spec.priority)}`);
  if (tail) parts.push(tail);
  return parts.join(' ');
}

/** The NEWTFILTER message for `spec`, as `tc filter add` sends it (validated; the link's index is written in when sent). */
export function filterRequest(spec: FilterSpec): NetlinkRequest {
  if (typeof spec !== 'object' || spec === null) throw invalid('a filter needs { link, parent, kind, ... }');
  checkLinkRef(spec.link);
  const { kind } = spec;
  if (typeof kind !== 'string' || !Object.hasOwn(CLASSIFIERS, kind)) throw invalid(`filter kind must be one of ${Object.keys(CLASSIFIERS).join(', ')}, got ${JSON.stringify(kind)}`);
  const parent = filterParent(spec.parent);
  const priority = priorityNumber(spec.priority);
  const { attributes, protocol } = CLASSIFIERS[kind](spec as never, protocolNumber(spec.protocol));
  const tail = kind === 'u32' ? `u32 flowid ${(spec as U32FilterSpec).classid}` : 'matchall action drop';
  return {
    type: T.RTM_NEWTFILTER,
    flags: NLM_F_CREATE | NLM_F_EXCL,
    header: tcmsg(0, parent, info(priority, protocol)),
    attributes: [attr.string(T.TCA_KIND, kind), ...attributes],
    what: describe('add', spec, tail),
  };
}

/** The DELTFILTER message, as `tc filter del dev L parent P [protocol X] [prio N]` sends it. */
export function deleteFilterRequest(selector: FilterSelector): NetlinkRequest {
  if (typeof selector !== 'object' || selector === null) throw invalid('filters.delete needs { link, parent, priority?, protocol? }');
  checkLinkRef(selector.link);
  const header = tcmsg(0, filterParent(selector.parent), info(priorityNumber(selector.priority), protocolNumber(selector.protocol) ?? 0));
  return { type: T.RTM_DELTFILTER, flags: 0, header, what: describe('del', selector) };
}

const PROTOCOL_NAMES = new Map(Object.entries(PROTOCOLS).map(([name, n]) => [n, name as FilterProtocol]));

/** A u32 selector's keys back to prefixes, when they are what u32Options makes; undefined otherwise. */
function parseU32Match(sel: Buffer, family: 4 | 6): U32Match | undefined {
  if (sel.length < T.TC_U32_SEL_SIZE) return undefined;
  const count = sel.readUInt8(2);
  if (sel.length < T.TC_U32_SEL_SIZE + count * T.TC_U32_KEY_SIZE) return undefined;
  const size = family === 4 ? 4 : 16;
  const words = { source: { value: Buffer.alloc(size), mask: Buffer.alloc(size), seen: false }, destination: { value: Buffer.alloc(size), mask: Buffer.alloc(size), seen: false } };
  const [sourceAt, destinationAt] = OFFSETS[family];
  for (let i = 0; i < count; i++) {
    const key = sel.subarray(T.TC_U32_SEL_SIZE + i * T.TC_U32_KEY_SIZE);
    const offset = key.readInt32LE(8);
    const field = offset >= sourceAt && offset < sourceAt + size ? words.source : offset >= destinationAt && offset < destinationAt + size ? words.destination : undefined;
    if (!field || key.readInt32LE(12) !== 0) return undefined;
    const at = offset - (field === words.source ? sourceAt : destinationAt);
    key.copy(field.mask, at, 0, 4);
    key.copy(field.value, at, 4, 8);
    field.seen = true;
  }
  const out: U32Match = {};
  for (const name of ['source', 'destination'] as const) {
    const field = words[name];
    if (!field.seen) continue;
    const bits = [...field.mask].map((b) => b.toString(2).padStart(8, '0')).join('');
    if (!/^1*0*$/.test(bits)) return undefined;
    out[name] = `${formatAddress(field.value)}/${bits.indexOf('0') === -1 ? bits.length : bits.indexOf('0')}`;
  }
  return out;
}

/** The family a u32 filter's keys are about: IPv6 for protocol ipv6 or keys outside IPv4's address offsets. */
function u32Family(protocol: number, sel: Buffer): 4 | 6 {
  if (protocol === T.ETH_P_IPV6) return 6;
  const count = sel.length >= T.TC_U32_SEL_SIZE ? sel.readUInt8(2) : 0;
  for (let i = 0; i < count && T.TC_U32_SEL_SIZE + (i + 1) * T.TC_U32_KEY_SIZE <= sel.length; i++) {
    const offset = sel.readInt32LE(T.TC_U32_SEL_SIZE + i * T.TC_U32_KEY_SIZE + 8);
    if (offset !== 12 && offset !== 16) return 6;
  }
  return 4;
}

/** A matchall filter's first action, when it is gact's drop. */
function parseDrop(options: AttributeMap): 'drop' | undefined {
  const first = options.nested(T.TCA_MATCHALL_ACT)?.nested(1);
  if (first?.string(T.TCA_ACT_KIND) !== 'gact') return undefined;
  const parms = first.nested(T.TCA_ACT_OPTIONS)?.get(T.TCA_GACT_PARMS);
  return parms !== undefined && parms.length >= T.TC_GACT_SIZE && parms.readInt32LE(8) === T.TC_ACT_SHOT ? 'drop' : undefined;
}

/** A filter from the kernel's dump; undefined for the entries that are not filters themselves (a classifier's head, u32's hash tables). */
export function parseFilter(message: NetlinkMessage): Filter | undefined {
  const m = parseTcmsg(message);
  const options = m.attributes.nested(T.TCA_OPTIONS);
  if (m.handle === 0 || options === undefined) return undefined;
  const protocolNumberSeen = htons(m.info & 0xffff);
  const out: Filter = {
    link: m.index,
    parent: formatFilterParent(m.parent),
    priority: m.info >>> 16,
    protocol: PROTOCOL_NAMES.get(protocolNumberSeen) ?? protocolNumberSeen,
    kind: m.kind,
    handle: m.handle,
  };
  if (m.kind === 'u32') {
    const sel = options.get(T.TCA_U32_SEL);
    if (sel === undefined) return undefined;
    const match = parseU32Match(sel, u32Family(protocolNumberSeen, sel));
    if (match) out.match = match;
  }
  const classid = options.u32(T.TCA_U32_CLASSID); // TCA_MATCHALL_CLASSID is the same number
  if (classid !== undefined) out.classid = formatHandle(classid);
  if (m.kind === 'matchall') {
    const action = parseDrop(options);
    if (action) out.action = action;
  }
  return out;
}

/**
 * Filters (classifiers) of the Netlink handle's namespace (`nl.filters`), as
 * `tc filter`, for u32 and matchall. Every method is async; kernel refusals
 * are NetnsErrors with the errno name as code, a classifier or action this
 * kernel lacks ERR_NETNS_UNSUPPORTED naming its module.
 */
export class Filters {
  readonly #nl: NetlinkHandle;
  readonly #links: Links;

  constructor(handle: NetlinkHandle, links: Links) {
    this.#nl = handle;
    this.#links = links;
  }

  /** One link's filters at `parent` (the root qdisc's when absent), as `tc filter show dev L [parent P]`. */
  async list(query: FilterQuery): Promise<Filter[]> {
    query = own(query);
    if (typeof query !== 'object' || query === null) throw invalid('filters.list needs { link, parent? }');
    checkKeys(query, SPEC_KEYS['filters.list'], 'filters.list');
    const parent = query.parent === undefined ? 0 : filterParent(query.parent);
    const index = await this.#links.index(checkLinkRef(query.link));
    const what = `tc filter show dev ${describeLink(query.link)}${query.parent === undefined ? '' : ` parent ${query.parent}`}`;
    const messages = await this.#nl.dump(T.RTM_GETTFILTER, tcmsg(0, parent, 0, index), [], what);
    return messages.filter((m) => m.type === T.RTM_NEWTFILTER).flatMap((m) => parseFilter(m) ?? []);
  }

  /** Adds a filter (`tc filter add`). */
  async add(spec: FilterSpec): Promise<void> {
    spec = own(spec);
    const keys = filterSpecKeys(spec?.kind);
    if (keys) checkKeys(spec, keys, 'filters.add');
    const request = filterRequest(spec);
    await sendTc(this.#nl, this.#links, request, spec.link, MODULES[spec.kind]);
  }

  /** Deletes the filters at `parent` of `priority` (and `protocol`), or all there without one (`tc filter del`). */
  async delete(selector: FilterSelector): Promise<void> {
    selector = own(selector);
    checkKeys(selector, SPEC_KEYS['filters.delete'], 'filters.delete');
    await sendTc(this.#nl, this.#links, deleteFilterRequest(selector), selector.link);
  }
}
