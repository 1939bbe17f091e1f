// What a lab will be, worked out before anything is made (pure, so a bad
// spec fails here and the tests need no kernel): segments (a switch tree, or
// a direct link), their subnets, every interface and address, and every
// route. A plan is plain data: the CLI keeps it in a state file.
import { ErrorCodes, netnsError, type NetnsError } from '../../core/errors.js';
import { formatAddress, networkOf, parsePrefix, prefixesOverlap, type ParsedPrefix } from '../../netlink/validate.js';
import type { CheckedLabSpec, LabNodeKind } from './spec.js';
import type { Impairment } from './units.js';
import { planNat, UPLINK, type PlannedNat } from './nat-plan.js';
import type { LabNodeDirs } from './private-dirs.js';

/** One end of a planned link: the node, its interface, its addresses (none on a switch port). */
export interface PlannedEnd {
  /** The node's key. */
  node: string;
  /** Its interface name there (eth0, eth1, …). */
  iface: string;
  /** "10.0.1.1/24", "fd00:0:0:1::1/64". */
  addresses: string[];
}

/** A planned veth pair. */
export interface PlannedLink {
  /** The end named first in the spec. */
  a: PlannedEnd;
  /** The other end. */
  b: PlannedEnd;
  /** Index into LabPlan.segments. */
  segment: number;
  /** Impairments to apply once built, by sending node. */
  impair: Record<string, Impairment>;
}

/** One broadcast domain: a tree of switches and all linked to it, or a direct link. */
export interface Segment {
  /** Its IPv4 subnet ("10.0.1.0/24"). */
  subnet: string;
  /** Its IPv6 subnet, when the lab has IPv6. */
  subnet6?: string;
  /** The switches it is made of (none for a direct link). */
  switches: string[];
}

/** A route a node gets: a subnet it is not on (or, on a host, the default), through the first router on the way. */
export interface PlannedRoute {
  /** The subnet reached, or "default". */
  destination: string;
  /** The first router's address on the node's own segment. */
  gateway: string;
  /** The node's interface toward it. */
  device: string;
}

/** The whole lab as data. */
export interface LabPlan {
  /** The namespace name prefix. */
  prefix: string;
  /** Whether segments have IPv6 subnets too. */
  ipv6: boolean;
  /** Every node, hosts first, then routers, then switches, each in spec order. */
  nodes: {
    /** The node's name in the spec. */
    key: string;
    /** Host, router or switch. */
    kind: LabNodeKind;
    /** Its directories of its own, if any (LabHostSpec.dirs). */
    dirs?: LabNodeDirs;
  }[];
  /** The broadcast domains, in the order their first link appears. */
  segments: Segment[];
  /** The links, in spec order. */
  links: PlannedLink[];
  /** By node key, in the order they are added. */
  routes: Record<string, PlannedRoute[]>;
  /** The way out, when a router has `nat`. */
  nat?: PlannedNat;
}

const invalid = (message: string): NetnsError => netnsError(ErrorCodes.INVALID_ARG, `createLab: ${message}`);

const toBig = (bytes: Buffer): bigint => BigInt(`0x${bytes.toString('hex')}`);
function fromBig(value: bigint, length: number): Buffer {
  return Buffer.from(value.toString(16).padStart(length * 2, '0'), 'hex');
}

/** Each switch's tree: switches linked to switches, in any order of links, are one. */
function switchTrees(spec: CheckedLabSpec, isSwitch: (node: string) => boolean): (node: string) => string {
  const parent = new Map<string, string>();
  const root = (node: string): string => {
    while (parent.has(node)) node = parent.get(node)!;
    return node;
  };
  for (const { a, b } of spec.links) {
    if (isSwitch(a) && isSwitch(b) && root(a) !== root(b)) parent.set(root(a), root(b));
  }
  return root;
}

/** Segments in the order their first link appears; which segment each link is in. */
function segmentsOf(spec: CheckedLabSpec): { segments: Segment[]; linkSegment: number[] } {
  const isSwitch = (node: string): boolean => spec.nodes.get(node) === 'switch';
  const treeOf = switchTrees(spec, isSwitch);
  const byTree = new Map<string, number>();
  const segments: Segment[] = [];
  const linkSegment: number[] = [];
  for (const { a, b } of spec.links) {
    const tree = [a, b].filter(isSwitch).map(treeOf)[0];
    let index = tree === undefined ? undefined : byTree.get(tree);
    if (index === undefined) {
      index = segments.push({ subnet: '', switches: [] }) - 1;
      if (tree !== undefined) byTree.set(tree, index);
    }
    for (const end of [a, b].filter(isSwitch)) if (!segments[index]!.switches.includes(end)) segments[index]!.switches.push(end);
    linkSegment.push(index);
  }
  return { segments, linkSegment };
}

/** The subnet given for a segment of this family: by its switches, its link, or its first explicit address. */
function givenSubnet(spec: CheckedLabSpec, segment: Segment, links: number[], family: 4 | 6): string | undefined {
  const key = family === 4 ? 'subnet' : 'subnet6';
  const given = new Set<string>();
  for (const s of segment.switches) if (spec.switches.get(s)?.[key]) given.add(normalized(spec.switches.get(s)![key]!));
  for (const i of links) if (spec.links[i]!.options[key]) given.add(normalized(spec.links[i]!.options[key]!));
  if (given.size > 1) throw invalid(`one segment (${describeSegment(spec, segment, links)}) is given two ${key}s: ${[...given].join(', ')}`);
  if (given.size === 1) return [...given][0];
  for (const i of links) {
    for (const list of Object.values(spec.links[i]!.options.addresses ?? {})) {
      const cidr = list.find((text) => text.includes(':') === (family === 6) && text.includes('/'));
      if (cidr) return normalized(cidr);
    }
  }
  return undefined;
}

/** A prefix with its host bits cleared: "10.0.1.7/24" -> "10.0.1.0/24". */
function normalized(cidr: string): string {
  const p = parsePrefix(cidr);
  return `${formatAddress(networkOf(p))}/${p.prefixLength}`;
}

function describeSegment(spec: CheckedLabSpec, segment: Segment, links: number[]): string {
  if (segment.switches.length > 0) return `switch ${segment.switches.join(', ')}`;
  const { a, b } = spec.links[links[0]!]!;
  return `link ${a}-${b}`;
}

/** Fills every segment's subnets: given ones first, then the next free 10.0.N.0/24 and fd00:0:0:N::/64. */
function assignSubnets(spec: CheckedLabSpec, segments: Segment[], linkSegment: number[]): void {
  const linksOf = segments.map((_, index) => linkSegment.flatMap((s, i) => (s === index ? [i] : [])));
  const taken: ParsedPrefix[] = [];
  const take = (cidr: string, segment: number): void => {
    const p = parsePrefix(cidr);
    const clash = taken.find((other) => prefixesOverlap(other, p));
    if (clash) throw invalid(`subnet ${cidr} of ${describeSegment(spec, segments[segment]!, linksOf[segment]!)} overlaps ${formatAddress(networkOf(clash))}/${clash.prefixLength} of another segment`);
    taken.push(p);
  };
  const families: (4 | 6)[] = spec.ipv6 ? [4, 6] : [4];
  for (const family of families) {
    const key = family === 4 ? 'subnet' : 'subnet6';
    segments.forEach((segment, index) => {
      const given = givenSubnet(spec, segment, linksOf[index]!, family);
      if (given) {
        take(given, index);
        segment[key] = given;
      }
    });
    let next = 1;
    segments.forEach((segment, index) => {
      if (segment[key]) return;
      let cidr: string;
      do {
        if (next > 0xff && family === 4) throw invalid('more than 255 segments need a subnet picked: give switches and links their subnets');
        cidr = family === 4 ? `10.0.${next}.0/24` : `fd00:0:0:${next.toString(16)}::/64`;
        next++;
      } while (taken.some((other) => prefixesOverlap(other, parsePrefix(cidr))));
      take(cidr, index);
      segment[key] = cidr;
    });
  }
}

/** Hands out a segment's addresses: explicit ones reserved first, then the lowest free host numbers. */
class AddressPool {
  readonly #subnet: ParsedPrefix;
  readonly #used = new Set<bigint>();
  #next: bigint;

  constructor(subnet: string) {
    this.#subnet = parsePrefix(subnet);
    this.#next = this.#pointToPoint() ? 0n : 1n;
  }

  /** A /31 or /127 (RFC 3021, RFC 6164), or a single address: every address is a host's. */
  #pointToPoint(): boolean {
    return this.#size() <= 2n;
  }

  /** Reserves an explicit address (bare, or with the subnet's own length). */
  reserve(text: string, where: string, everywhere: Set<string>): string {
    const p = parsePrefix(text);
    const length = text.includes('/') ? p.prefixLength : this.#subnet.prefixLength;
    const inside = prefixesOverlap({ ...p, prefixLength: this.#subnet.prefixLength }, this.#subnet);
    if (!inside || length !== this.#subnet.prefixLength) throw invalid(`${where} ${text} is not in its segment's subnet ${this.#cidr()}`);
    const host = toBig(p.bytes) - toBig(networkOf(this.#subnet));
    if (!this.#pointToPoint() && (host === 0n || (p.family === 2 && host === this.#size() - 1n))) throw invalid(`${where} ${text} is the network or broadcast address of ${this.#cidr()}`);
    return this.#claim(host, where, everywhere);
  }

  /** The next free address. */
  take(where: string, everywhere: Set<string>): string {
    while (this.#used.has(this.#next)) this.#next++;
    const last = this.#subnet.family === 2 && !this.#pointToPoint() ? this.#size() - 2n : this.#size() - 1n;
    if (this.#next > last) throw invalid(`${this.#cidr()} has no address left for ${where}: give the segment a larger subnet`);
    return this.#claim(this.#next, where, everywhere);
  }

  #claim(host: bigint, where: string, everywhere: Set<string>): string {
    const length = this.#subnet.bytes.length;
    const address = formatAddress(fromBig(toBig(networkOf(this.#subnet)) + host, length));
    if (everywhere.has(address)) throw invalid(`${where}: address ${address} is given twice`);
    everywhere.add(address);
    this.#used.add(host);
    return `${address}/${this.#subnet.prefixLength}`;
  }

  #size(): bigint {
    return 1n << BigInt(this.#subnet.bytes.length * 8 - this.#subnet.prefixLength);
  }

  #cidr(): string {
    return `${formatAddress(networkOf(this.#subnet))}/${this.#subnet.prefixLength}`;
  }
}

/** Every interface and address: eth0, eth1, … per node in link order; explicit addresses reserved before any is picked. */
function planLinks(spec: CheckedLabSpec, segments: Segment[], linkSegment: number[]): PlannedLink[] {
  const counters = new Map<string, number>();
  const iface = (node: string): string => {
    const n = counters.get(node) ?? 0;
    counters.set(node, n + 1);
    return `eth${n}`;
  };
  const pools = segments.map((segment) => ({ 4: new AddressPool(segment.subnet), 6: segment.subnet6 ? new AddressPool(segment.subnet6) : undefined }));
  const everywhere = new Set<string>();
  const links: PlannedLink[] = spec.links.map(({ a, b, options }, i) => ({
    a: { node: a, iface: iface(a), addresses: [] },
    b: { node: b, iface: iface(b), addresses: [] },
    segment: linkSegment[i]!,
    impair: options.impair ?? {},
  }));
  const families: (4 | 6)[] = spec.ipv6 ? [4, 6] : [4];
  for (const pass of ['explicit', 'picked'] as const) {
    links.forEach((link, i) => {
      for (const end of [link.a, link.b]) {
        if (spec.nodes.get(end.node) === 'switch') continue;
        const explicit = spec.links[i]!.options.addresses?.[end.node] ?? [];
        for (const family of families) {
          const pool = pools[link.segment]![family]!;
          const given = explicit.find((text) => text.includes(':') === (family === 6));
          const where = `${end.node}'s ${end.iface} (link ${link.a.node}-${link.b.node})`;
          if (pass === 'explicit' && given) end.addresses.push(pool.reserve(given, where, everywhere));
          if (pass === 'picked' && !given) end.addresses.push(pool.take(where, everywhere));
        }
      }
    });
  }
  for (const link of links) for (const end of [link.a, link.b]) end.addresses.sort((x, y) => Number(x.includes(':')) - Number(y.includes(':')));
  return links;
}

/** A non-switch node's place on a segment: its interface and addresses there. */
interface Attachment {
  node: string;
  iface: string;
  addresses: string[];
}

const addressOf = (attachment: Attachment, family: 4 | 6): string | undefined =>
  attachment.addresses.find((cidr) => cidr.includes(':') === (family === 6))?.split('/')[0];

/**
 * Each node's routes: a breadth-first walk over segments, crossing only
 * routers (hosts do not forward), from the node's own segments. A subnet is
 * reached through the router on the node's own segment that starts the
 * shortest way there.
 */
function planRoutes(plan: Omit<LabPlan, 'routes'>, frrRouters: ReadonlySet<string>): Record<string, PlannedRoute[]> {
  const kinds = new Map(plan.nodes.map(({ key, kind }) => [key, kind]));
  const onSegment: Attachment[][] = plan.segments.map(() => []);
  for (const link of plan.links) for (const end of [link.a, link.b]) if (kinds.get(end.node) !== 'switch') onSegment[link.segment]!.push(end);
  // The uplink as one more segment, after the others, with only the NAT router on it: the way to it is the way out.
  // No route goes through its address (only the router itself is on it), so it is not listed.
  const uplink = plan.nat ? onSegment.push([{ node: plan.nat.node, iface: UPLINK, addresses: [] }]) - 1 : undefined;
  const routes: Record<string, PlannedRoute[]> = {};
  for (const { key, kind } of plan.nodes) {
    if (kind === 'switch') continue;
    routes[key] = [];
    const firstHop = new Map<number, { via: Attachment; out: Attachment } | null>();
    const queue: number[] = [];
    onSegment.forEach((members, segment) => {
      if (members.some((m) => m.node === key)) {
        firstHop.set(segment, null);
        queue.push(segment);
      }
    });
    while (queue.length > 0) {
      const segment = queue.shift()!;
      for (const router of onSegment[segment]!.filter((m) => m.node !== key && kinds.get(m.node) === 'router')) {
        const hop = firstHop.get(segment) ?? { via: router, out: onSegment[segment]!.find((m) => m.node === key)! };
        onSegment.forEach((members, next) => {
          if (firstHop.has(next) || !members.some((m) => m.node === router.node)) return;
          firstHop.set(next, hop);
          queue.push(next);
        });
      }
    }
    for (const [segment, hop] of [...firstHop].sort(([x], [y]) => x - y)) {
      if (segment === uplink) {
        // the NAT router's own default goes with its uplink (makeUplink)
        if (hop !== null) routes[key].push({ destination: 'default', gateway: addressOf(hop.via, 4)!, device: hop.out.iface });
        continue;
      }
      if (hop === null) continue;
      const { subnet, subnet6 } = plan.segments[segment]!;
      for (const [destination, family] of [[subnet, 4], [subnet6, 6]] as const) {
        const gateway = destination === undefined ? undefined : addressOf(hop.via, family);
        // FRR's routers learn IPv4 routes from their daemons (OSPFv2 carries no IPv6).
        const learnt = family === 4 && frrRouters.has(key);
        if (destination !== undefined && gateway !== undefined && !learnt) routes[key].push({ destination, gateway, device: hop.out.iface });
      }
    }
    if (kind === 'host') {
      routes[key].push(...defaultRoutes(routes[key]).filter((route) => !hasDefault(routes[key]!, route)));
      routes[key] = routes[key].filter((route) => !coveredByDefault(routes[key]!, route));
    }
  }
  return routes;
}

/**
 * A host's route that its default route of the same family already takes
 * (same router: a lab's addresses are unique, so the same link too): the
 * kernel forwards alike without it, and a host behind one router then has one
 * route to add, not one per subnet.
 */
const coveredByDefault = (routes: PlannedRoute[], route: PlannedRoute): boolean =>
  route.destination !== 'default' && routes.some((other) => other.destination === 'default' && other.gateway === route.gateway);

/**
 * A host's default routes, one per family, through the router of its first
 * route of that family: the way to an address outside the lab, as a machine
 * has. A router gets none: two routers defaulting to each other would loop.
 */
function defaultRoutes(routes: PlannedRoute[]): PlannedRoute[] {
  return [false, true].flatMap((ipv6) => {
    const first = routes.find((route) => route.gateway.includes(':') === ipv6);
    return first ? [{ destination: 'default', gateway: first.gateway, device: first.device }] : [];
  });
}

/** A host's default route of that family is already there (the way out, planned before). */
const hasDefault = (routes: PlannedRoute[], route: PlannedRoute): boolean =>
  routes.some((other) => other.destination === 'default' && other.gateway.includes(':') === route.gateway.includes(':'));

/**
 * The plan of a checked spec; ERR_NETNS_INVALID_ARG for overlapping subnets,
 * duplicate or misplaced addresses. `machineSubnets`: what a NAT uplink's
 * subnet, picked here, must not overlap besides the lab's own.
 */
export function planLab(spec: CheckedLabSpec, machineSubnets: string[] = []): LabPlan {
  const { segments, linkSegment } = segmentsOf(spec);
  assignSubnets(spec, segments, linkSegment);
  const links = planLinks(spec, segments, linkSegment);
  const nodes = [...spec.nodes].map(([key, kind]) => (spec.dirs.has(key) ? { key, kind, dirs: spec.dirs.get(key)! } : { key, kind }));
  const nat = spec.nat && planUplink(spec.nat, segments, machineSubnets);
  const plan = { prefix: spec.prefix, ipv6: spec.ipv6, nodes, segments, links, ...(nat ? { nat } : {}) };
  return { ...plan, routes: planRoutes(plan, new Set(spec.frr.keys())) };
}

function planUplink(nat: { node: string; subnet?: string }, segments: Segment[], machineSubnets: string[]): PlannedNat {
  const lab = segments.map((segment) => segment.subnet);
  if (nat.subnet !== undefined) {
    // All checked already (the spec's, the lab's, the machine's routes): parsed for their bytes alone.
    const given = parsePrefix(nat.subnet);
    const clash = (subnets: string[]) => subnets.find((subnet) => prefixesOverlap(given, parsePrefix(subnet)));
    const inLab = clash(lab);
    if (inLab) throw invalid(`router ${nat.node}'s nat subnet ${nat.subnet} overlaps the lab's ${inLab}`);
    // the machine's end would take over the machine's own addresses or routes
    const onMachine = clash(machineSubnets);
    if (onMachine) throw invalid(`router ${nat.node}'s nat subnet ${nat.subnet} overlaps the machine's ${onMachine}`);
  }
  return planNat(nat.node, nat.subnet, [...lab, ...machineSubnets]);
}

