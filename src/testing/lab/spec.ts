// A lab's spec, checked whole before anything is made: an unknown node, a
// duplicate link, a loop of switches or a bad address is refused with
// ERR_NETNS_INVALID_ARG naming it, and nothing is built.
import { ErrorCodes, kindOf, netnsError, shownValue, type NetnsError } from '../../core/errors.js';
import { refuseUnknownKeys } from '../../core/known-keys.js';
import { assertValidName } from '../../core/names.js';
import { own } from '../../core/own.js';
import { parsePrefix } from '../../netlink/validate.js';
import { DEFAULT_PREFIX, ownerStem } from '../owner.js';
import { checkFrrSpec, type CheckedFrrSpec, type LabFrrSpec } from './frr-spec.js';
import { checkNodeDirs, type LabNodeDirs } from './private-dirs.js';
import { checkImpairment, type Impairment } from './units.js';

/** A switch: a Linux bridge in a namespace of its own, joining everything linked to it into one subnet. */
export interface LabSwitchSpec {
  /** The IPv4 subnet of its segment ("10.0.7.0/24"); one is picked when absent. */
  subnet?: string;
  /** The IPv6 subnet of its segment ("fd00:0:0:7::/64"); one is picked when absent. */
  subnet6?: string;
}

/** A host: a namespace of its own, forwarding off. */
export interface LabHostSpec {
  /**
   * Directories of its own, by path on the machine: 'empty' (a folder of the
   * lab's), 'overlay' (the machine's content, changes kept apart) or a folder
   * of the test's, laid over the path for every command run in the node.
   */
  dirs?: LabNodeDirs;
}

/** A router's `nat`: the way out of the lab. */
export interface LabNatSpec {
  /** The IPv4 subnet between the router and the machine, /24 to /30; a /30 of 100.64.0.0/10 free on the machine when absent. */
  subnet?: string;
}

/** A router: IPv4 and IPv6 forwarding on; routes planned by the lab, or learnt by FRR. */
export interface LabRouterSpec extends LabHostSpec {
  /** Runs FRR (zebra and its routing daemons) in the router: the lab then installs no IPv4 route in it, FRR does. */
  frr?: LabFrrSpec;
  /**
   * The lab's way out (one router at most): an `uplink` to the namespace that
   * builds the lab, masqueraded; every node's IPv4 default route leads here.
   */
  nat?: LabNatSpec;
}

/** Options of one link (the third element of a link). */
export interface LabLinkOptions {
  /** Addresses of this link's ends, by node ("10.0.1.10/24", or an IPv4 and an IPv6 one); the rest are picked. */
  addresses?: Record<string, string | string[]>;
  /** For a link between two nodes that are not switches: the IPv4 subnet of that point-to-point segment. */
  subnet?: string;
  /** As subnet, for IPv6. */
  subnet6?: string;
  /** Impairment of the traffic each end sends, by the sending node: { h1: { rate: '1mbit', delay: '20ms' } }. */
  impair?: Record<string, Impairment>;
}

/** A link: two nodes, and optionally its options. */
export type LabLinkSpec = [string, string] | [string, string, LabLinkOptions];

/**
 * What createLab builds. Node keys (letters, digits, _ and -, up to 32) are
 * unique across hosts, routers and switches. Every segment (a switch and all
 * linked to it, switches linked to switches included, or a direct link between
 * two other nodes) is one subnet; routers forward, and every node gets a route
 * to every subnet it can reach through routers.
 */
export interface LabSpec {
  /** End hosts: one namespace each, forwarding off. */
  hosts: Record<string, LabHostSpec>;
  /** Routers: one namespace each, IPv4 and IPv6 forwarding on. */
  routers?: Record<string, LabRouterSpec>;
  /** Switches: a bridge (br0) in a namespace of its own; its ports carry no address. */
  switches?: Record<string, LabSwitchSpec>;
  /** Links, each a veth pair; a node's interfaces are eth0, eth1, … in link order. */
  links?: LabLinkSpec[];
  /** IPv6 beside IPv4 (default true): every segment gets both. */
  ipv6?: boolean;
  /** Name prefix (default 'nsfix-'); sweep(prefix) cleans up after crashed runs. */
  prefix?: string;
}

/** The node kinds of a lab. */
export type LabNodeKind = 'host' | 'router' | 'switch';

/** A link's options as checked: each end's addresses a list. */
export type CheckedLinkOptions = Omit<LabLinkOptions, 'addresses'> & { addresses?: Record<string, string[]> };

/** A spec as checkLabSpec returns it: own properties only, defaults filled in. */
export interface CheckedLabSpec {
  nodes: Map<string, LabNodeKind>;
  switches: Map<string, LabSwitchSpec>;
  /** The routers that run FRR. */
  frr: Map<string, CheckedFrrSpec>;
  /** The nodes that have directories of their own. */
  dirs: Map<string, LabNodeDirs>;
  /** The router that is the way out, if one is. */
  nat?: { node: string; subnet?: string };
  links: { a: string; b: string; options: CheckedLinkOptions }[];
  ipv6: boolean;
  prefix: string;
}

/** A node key or a lab name: letters, digits, _ and -, up to 32; never a dot, so `<lab>.<node>` reads one way. */
export const LAB_KEY = /^[A-Za-z0-9_-]{1,32}$/;
const SPEC_KEYS = ['hosts', 'routers', 'switches', 'links', 'ipv6', 'prefix'];
const SWITCH_KEYS = ['subnet', 'subnet6'];
const LINK_KEYS = ['addresses', 'subnet', 'subnet6', 'impair'];

const invalid = (message: string): NetnsError => netnsError(ErrorCodes.INVALID_ARG, `createLab: ${message}`);
const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Checks a prefix ("10.0.1.0/24") of the family wanted, with a length given. */
export function checkSubnet(value: unknown, family: 4 | 6, what: string): string {
  let parsed;
  try {
    parsed = parsePrefix(value, what, false);
  } catch (error) {
    throw invalid(error instanceof Error ? error.message.replace(/^netlink: /, '') : `bad ${what}`);
  }
  if ((parsed.family === 2 ? 4 : 6) !== family) throw invalid(`${what} ${JSON.stringify(value)} is not an IPv${family} prefix`);
  return value as string;
}

const NODE_KEYS: Record<LabNodeKind, string[]> = { host: ['dirs'], router: ['frr', 'dirs', 'nat'], switch: SWITCH_KEYS };

/**
 * The shortest and the longest uplink subnet: two addresses at least, and
 * never so wide that the machine's end would route much of its world into the lab.
 */
const NAT_PREFIX_LENGTHS = [24, 30] as const;

/** Checks a router's `nat` (ERR_NETNS_INVALID_ARG). */
function checkNatSpec(key: string, nat: unknown): LabNatSpec {
  if (!isRecord(nat)) throw invalid(`router ${key}'s nat must be an object ({} or { subnet }), got ${kindOf(nat)}`);
  const given = own(nat);
  refuseUnknownKeys(given, ['subnet'], `createLab: router ${key}'s nat`, invalid);
  if (given.subnet === undefined) return {};
  const subnet = checkSubnet(given.subnet, 4, `router ${key}'s nat subnet`);
  const length = Number(subnet.split('/')[1]);
  const [shortest, longest] = NAT_PREFIX_LENGTHS;
  if (length < shortest || length > longest) throw invalid(`router ${key}'s nat subnet must be a /${shortest} to a /${longest}, got ${subnet}`);
  return { subnet };
}

function checkNodes(spec: Record<string, unknown>, checked: Pick<CheckedLabSpec, 'nodes' | 'switches' | 'frr' | 'dirs' | 'nat'>): void {
  const { nodes, switches, frr, dirs } = checked;
  const groups: [string, LabNodeKind][] = [['hosts', 'host'], ['routers', 'router'], ['switches', 'switch']];
  for (const [group, kind] of groups) {
    const given = spec[group];
    if (given === undefined && group !== 'hosts') continue;
    if (!isRecord(given)) throw invalid(`${group} must be an object of node specs by key, got ${kindOf(given)}`);
    for (const [key, node] of Object.entries(own(given))) {
      if (!LAB_KEY.test(key) || key === '__proto__') throw invalid(`node key ${JSON.stringify(key)} must match ${LAB_KEY}`);
      if (nodes.has(key)) throw invalid(`node ${key} is declared twice (as a ${nodes.get(key)} and a ${kind})`);
      if (!isRecord(node)) throw invalid(`${kind} ${key} must be an object, got ${kindOf(node)}`);
      refuseUnknownKeys(node, NODE_KEYS[kind], `createLab: ${kind} ${key}`, invalid);
      nodes.set(key, kind);
      if (kind === 'switch') switches.set(key, checkSwitch(key, own(node)));
      if (kind === 'router' && own(node).frr !== undefined) frr.set(key, checkFrrSpec(key, own(node).frr));
      if (own(node).dirs !== undefined) dirs.set(key, checkNodeDirs(key, own(node).dirs));
      if (kind === 'router' && own(node).nat !== undefined) {
        if (checked.nat) throw invalid(`routers ${checked.nat.node} and ${key} both have nat: a lab has one way out`);
        checked.nat = { node: key, ...checkNatSpec(key, own(node).nat) };
      }
    }
  }
}

function checkSwitch(key: string, node: LabSwitchSpec): LabSwitchSpec {
  const checked: LabSwitchSpec = {};
  if (node.subnet !== undefined) checked.subnet = checkSubnet(node.subnet, 4, `switch ${key}'s subnet`);
  if (node.subnet6 !== undefined) checked.subnet6 = checkSubnet(node.subnet6, 6, `switch ${key}'s subnet6`);
  return checked;
}

function checkLink(link: unknown, nodes: Map<string, LabNodeKind>): { a: string; b: string; options: CheckedLinkOptions } {
  if (!Array.isArray(link) || link.length < 2 || link.length > 3) throw invalid(`a link is [nodeA, nodeB] or [nodeA, nodeB, options], got ${kindOf(link)}`);
  const [a, b, given] = link as unknown[];
  for (const end of [a, b]) {
    if (typeof end !== 'string' || !nodes.has(end)) throw invalid(`a link names unknown node ${shownValue(end, String)}`);
  }
  if (a === b) throw invalid(`a link joins two different nodes, not ${String(a)} to itself`);
  const name = `${String(a)}-${String(b)}`;
  if (given !== undefined && !isRecord(given)) throw invalid(`link ${name}'s options must be an object, got ${kindOf(given)}`);
  const options = own((given ?? {}) as LabLinkOptions);
  refuseUnknownKeys(options, LINK_KEYS, `createLab: link ${name}`, invalid);
  const checked: CheckedLinkOptions = {};
  const between = nodes.get(a as string) !== 'switch' && nodes.get(b as string) !== 'switch';
  for (const key of ['subnet', 'subnet6'] as const) {
    if (options[key] === undefined) continue;
    if (!between) throw invalid(`link ${name} has a ${key}, but it joins a switch: give the switch its ${key}`);
    checked[key] = checkSubnet(options[key], key === 'subnet' ? 4 : 6, `link ${name}'s ${key}`);
  }
  if (options.addresses !== undefined) checked.addresses = checkAddresses(options.addresses, a as string, b as string, nodes, name);
  if (options.impair !== undefined) checked.impair = checkImpairs(options.impair, a as string, b as string, name);
  return { a: a as string, b: b as string, options: checked };
}

function checkAddresses(given: unknown, a: string, b: string, nodes: Map<string, LabNodeKind>, name: string): Record<string, string[]> {
  if (!isRecord(given)) throw invalid(`link ${name}'s addresses must be an object by node, got ${kindOf(given)}`);
  const checked: Record<string, string[]> = Object.create(null);
  for (const [node, value] of Object.entries(own(given))) {
    if (node !== a && node !== b) throw invalid(`link ${name} gives an address to ${JSON.stringify(node)}, not one of its ends`);
    if (nodes.get(node) === 'switch') throw invalid(`link ${name} gives an address to switch ${node}: a switch port carries none`);
    const list = Array.isArray(value) ? value : [value];
    if (list.length === 0 || list.length > 2) throw invalid(`link ${name}'s address for ${node} is one prefix or [IPv4, IPv6]`);
    checked[node] = list.map((cidr: unknown) => checkEndAddress(cidr, `link ${name}'s address for ${node}`));
    const families = checked[node]!.map((cidr) => (cidr.includes(':') ? 6 : 4));
    if (families.length === 2 && families[0] === families[1]) throw invalid(`link ${name}'s addresses for ${node} are both IPv${families[0]}: give one of each family`);
  }
  return checked;
}

/** "10.0.1.10/24", or a bare address that takes its segment's prefix length; printed as parsed (RFC 5952 for IPv6). */
function checkEndAddress(cidr: unknown, what: string): string {
  try {
    const parsed = parsePrefix(cidr, what);
    return (cidr as string).includes('/') ? `${parsed.text}/${parsed.prefixLength}` : parsed.text;
  } catch (error) {
    throw invalid(error instanceof Error ? error.message.replace(/^netlink: /, '') : `bad ${what}`);
  }
}

function checkImpairs(given: unknown, a: string, b: string, name: string): Record<string, Impairment> {
  if (!isRecord(given)) throw invalid(`link ${name}'s impair must be an object by sending node, got ${kindOf(given)}`);
  const checked: Record<string, Impairment> = Object.create(null);
  for (const [node, impairment] of Object.entries(own(given))) {
    if (node !== a && node !== b) throw invalid(`link ${name} impairs ${JSON.stringify(node)}, not one of its ends`);
    checked[node] = checkImpairment(impairment, `link ${name}, sent by ${node}`);
  }
  return checked;
}

/** Refuses a second link between the same two nodes: a link is named by its ends. */
function refuseDuplicateLinks(links: { a: string; b: string }[]): void {
  const seen = new Set<string>();
  for (const { a, b } of links) {
    const key = [a, b].sort().join('\0');
    if (seen.has(key)) throw invalid(`${a} and ${b} are linked twice: a link is named by its two ends`);
    seen.add(key);
  }
}

/**
 * Refuses a cycle among switches: Linux bridges here run no spanning tree,
 * so a loop would flood every broadcast around it forever.
 */
function refuseSwitchLoops(links: { a: string; b: string }[], nodes: Map<string, LabNodeKind>): void {
  const parent = new Map<string, string>();
  const root = (key: string): string => {
    while (parent.has(key)) key = parent.get(key)!;
    return key;
  };
  for (const { a, b } of links) {
    if (nodes.get(a) !== 'switch' || nodes.get(b) !== 'switch') continue;
    const [ra, rb] = [root(a), root(b)];
    if (ra === rb) throw invalid(`switches ${a} and ${b} are already joined through other switches: this link would make a loop (bridges here run no spanning tree)`);
    parent.set(ra, rb);
  }
}

/** With ipv6: false, an IPv6 subnet or address given would be left out of the lab: refused instead. */
function refuseIpv6(switches: Map<string, LabSwitchSpec>, links: { a: string; b: string; options: CheckedLinkOptions }[]): void {
  for (const [key, node] of switches) if (node.subnet6 !== undefined) throw invalid(`switch ${key} has a subnet6, but the lab has ipv6: false`);
  for (const { a, b, options } of links) {
    const v6 = options.subnet6 !== undefined || Object.values(options.addresses ?? {}).some((list) => list.some((cidr) => cidr.includes(':')));
    if (v6) throw invalid(`link ${a}-${b} has an IPv6 subnet or address, but the lab has ipv6: false`);
  }
}

/** The spec checked whole (ERR_NETNS_INVALID_ARG, ERR_NETNS_INVALID_NAME for a prefix no name can start with). */
export function checkLabSpec(spec: unknown): CheckedLabSpec {
  if (!isRecord(spec)) throw invalid(`createLab takes a spec { hosts, routers?, switches?, links?, ipv6?, prefix? }, got ${kindOf(spec)}`);
  const given = own(spec);
  refuseUnknownKeys(given, SPEC_KEYS, 'the spec', invalid);
  const nodes = new Map<string, LabNodeKind>();
  const switches = new Map<string, LabSwitchSpec>();
  const frr = new Map<string, CheckedFrrSpec>();
  const dirs = new Map<string, LabNodeDirs>();
  const checked: Pick<CheckedLabSpec, 'nodes' | 'switches' | 'frr' | 'dirs' | 'nat'> = { nodes, switches, frr, dirs };
  checkNodes(given, checked);
  if (given.links !== undefined && !Array.isArray(given.links)) throw invalid(`links must be an array of [nodeA, nodeB] pairs, got ${kindOf(given.links)}`);
  const links = ((given.links ?? []) as unknown[]).map((link) => checkLink(link, nodes));
  refuseDuplicateLinks(links);
  refuseSwitchLoops(links, nodes);
  const { ipv6 = true, prefix = DEFAULT_PREFIX } = given as { ipv6?: unknown; prefix?: unknown };
  if (typeof ipv6 !== 'boolean') throw invalid(`ipv6 must be a boolean, got ${kindOf(ipv6)}`);
  if (typeof prefix !== 'string') throw invalid(`prefix must be a string, got ${kindOf(prefix)}`);
  if (!ipv6) refuseIpv6(switches, links);
  for (const key of nodes.keys()) assertValidName(`${prefix}${ownerStem('000000')}-${key}`);
  return { nodes, switches, frr, dirs, ...(checked.nat ? { nat: checked.nat } : {}), links, ipv6, prefix };
}
