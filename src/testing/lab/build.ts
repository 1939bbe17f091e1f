// Makes a planned lab: namespaces (made concurrently on the addon's threads),
// then over one netlink socket per node, no `ip` process: lo up, a bridge
// per switch, a veth pair per link (made from the switch's side, so the port
// is enslaved in the same message; the nodes' links at once), addresses,
// forwarding on routers, routes.
// Every step the kernel refuses becomes ERR_NETNS_FIXTURE naming the node and
// the step in `ip` terms; the caller then deletes what was made.
import { ErrorCodes, netnsError, type NetnsError } from '../../core/errors.js';
import { addAddressRequest, type AddressFlag } from '../../netlink/addresses.js';
import { attr } from '../../netlink/attributes.js';
import { IFF_UP, IFLA_MASTER, NLM_F_CREATE, NLM_F_EXCL, RTM_NEWLINK, RTM_NEWROUTE } from '../../netlink/constants.js';
import type { NetlinkHandle } from '../../netlink/handle.js';
import { openNetlink, type Netlink } from '../../netlink/index.js';
import { ifinfomsg } from '../../netlink/links.js';
import type { NetlinkRequest } from '../../netlink/message.js';
import { routeRequest } from '../../netlink/routes.js';
import { NetNS } from '../../netns.js';
import { allSettledOrThrow } from './all-settled.js';
import { untilAllLinksOperational } from './links-operational.js';
import type { LabPlan, PlannedEnd, PlannedLink, PlannedRoute } from './plan.js';

/** A node as made: its namespace, its name, its netlink socket. */
export interface LabNode {
  readonly key: string;
  readonly kind: 'host' | 'router' | 'switch';
  /** The namespace name in the lab's run directory (`ip netns` shows it where that is /run/netns). */
  readonly name: string;
  ns?: NetNS;
  nl?: Netlink;
  /**
   * Its nf_tables socket, opened on first use (impairments, partitions). The
   * opening itself is kept, so that two changes of the node at once share one
   * socket, and a close() while it opens closes it when it comes.
   */
  nft?: Promise<NetlinkHandle>;
}

/** The bridge every switch's ports are enslaved to. */
export const BRIDGE = 'br0';

/**
 * Runs `run` on a node as it is: an error keeps its code (ERR_NETNS_UNSUPPORTED,
 * EPERM...), its message gains the namespace it happened in.
 */
export async function inNode<T>(node: LabNode, run: (nl: Netlink, ns: NetNS) => Promise<T>): Promise<T> {
  try {
    return await run(node.nl!, node.ns!);
  } catch (error) {
    if (error instanceof Error) error.message += ` (in ${node.name})`;
    throw error;
  }
}

/** Runs one step in a node, as ERR_NETNS_FIXTURE naming the namespace and the step when it fails. */
export async function step<T>(node: LabNode, what: string, run: (nl: Netlink, ns: NetNS) => Promise<T>): Promise<T> {
  try {
    return await run(node.nl!, node.ns!);
  } catch (error) {
    throw fixtureError(node, what, error);
  }
}

/** ERR_NETNS_FIXTURE: `what` (in `ip` terms) failed in the node, the kernel's error as cause. */
function fixtureError(node: LabNode, what: string, error: unknown): NetnsError {
  const detail = error instanceof Error ? error.message : String(error);
  return netnsError(ErrorCodes.FIXTURE, `${what} in ${node.name} failed: ${detail}`, { cause: error });
}

/**
 * Makes every namespace concurrently; a node has `ns` once its namespace is
 * made (a name that was taken is never ours to delete). `meanwhile`
 * (synchronous, must not throw) runs while the addon's threads make them.
 */
export async function makeNamespaces(nodes: LabNode[], runDir: string, meanwhile?: () => void): Promise<void> {
  const making = allSettledOrThrow(
    nodes.map(async (node) => {
      node.ns = await NetNS.create(node.name, { runDir });
      node.nl = await openNetlink(node.ns);
    }),
  );
  meanwhile?.();
  await making;
}

/** A link's two ends in the order it is made: from the switch's side when there is one, so that end is enslaved as it is made. */
function madeFrom(link: PlannedLink, bridges: Map<string, number>): [PlannedEnd, PlannedEnd] {
  return bridges.has(link.b.node) && !bridges.has(link.a.node) ? [link.b, link.a] : [link.a, link.b];
}

/** Each planned end's interface index in its own node, by `node/iface`. */
type EndIndexes = Map<string, number>;
const endKey = (end: PlannedEnd): string => `${end.node}/${end.iface}`;

/**
 * Every link, each made from its switch's side when it has one (that end is
 * enslaved in the same message) and up. Each node makes its links in one
 * round trip, the nodes at once; `meanwhile` runs on this thread while the
 * kernel makes them. Returns both ends' indexes: the maker's from the link
 * read back, the peer's from that link's IFLA_LINK (a veth's peer).
 */
async function makeLinks(links: readonly PlannedLink[], nodes: Map<string, LabNode>, bridges: Map<string, number>, meanwhile?: () => void): Promise<EndIndexes> {
  const byMaker = new Map<string, NumberedLink[]>();
  for (const [number, link] of links.entries()) {
    const maker = madeFrom(link, bridges)[0].node;
    byMaker.set(maker, [...(byMaker.get(maker) ?? []), { link, number }]);
  }
  const indexes: EndIndexes = new Map();
  const making = allSettledOrThrow([...byMaker].map(([maker, own]) => makeLinksOf(nodes.get(maker)!, own, nodes, bridges, indexes)));
  meanwhile?.();
  await making;
  return indexes;
}

/** A planned link and its place in the plan, which gives its ends' indexes. */
interface NumberedLink {
  link: PlannedLink;
  number: number;
}

/**
 * Where the lab's veth ends are numbered from, two a link in plan order: each
 * end's index differs from its peer's (linkwatch activates a pair whose ends
 * share one, as each side's first link in a fresh namespace does, up to a
 * second late) and from every other end of the lab's. Above what a fresh
 * namespace holds before: lo, a switch's bridge, the fallback tunnels of
 * loaded modules.
 */
const FIRST_END_INDEX = 100;

async function makeLinksOf(maker: LabNode, links: NumberedLink[], nodes: Map<string, LabNode>, bridges: Map<string, number>, indexes: EndIndexes): Promise<void> {
  const pairs = links.map(({ link }) => madeFrom(link, bridges));
  const made = await maker.nl!.links.addEach(
    pairs.map(([first, second], i) => {
      const index = FIRST_END_INDEX + 2 * links[i]!.number;
      const peer = { name: second.iface, netns: nodes.get(second.node)!.ns!, index: index + 1 };
      return { kind: 'veth', name: first.iface, index, up: true, ...master(first, bridges), peer };
    }),
  );
  for (const [i, outcome] of made.entries()) {
    const [first, second] = pairs[i]!;
    const what = `link add ${first.iface} type veth peer name ${second.iface} netns ${nodes.get(second.node)!.name}`;
    if (outcome.status === 'rejected') throw fixtureError(maker, what, outcome.reason);
    if (outcome.value.linkIndex === undefined) throw fixtureError(maker, what, new Error("the kernel did not report the peer's index"));
    indexes.set(endKey(first), outcome.value.index);
    indexes.set(endKey(second), outcome.value.linkIndex);
  }
}

const master = (end: PlannedEnd, bridges: Map<string, number>): { master?: number } => (bridges.has(end.node) ? { master: bridges.get(end.node)! } : {});

/** One request of a node's batch, with its step in `ip` terms. */
type Step = [what: string, request: NetlinkRequest];

/** lo's index in every namespace (the kernel's LOOPBACK_IFINDEX). */
const LOOPBACK_INDEX = 1;

/**
 * What a node needs once its links are made, in one sendmsg (rtnetlink applies
 * the messages in order): lo up; each veth end made from the other side up
 * (the kernel refuses a peer up in the creating message: ENOTCONN, the pair is
 * not joined yet); its addresses; then its routes (a gateway must be on a link
 * that is up and addressed). About five round trips a node become one.
 */
async function configureNode(node: LabNode, ends: readonly PlannedEnd[], routes: readonly PlannedRoute[], made: { indexes: EndIndexes; peerEnds: Set<string>; bridges: Map<string, number> }): Promise<void> {
  const index = (iface: string): number => made.indexes.get(`${node.key}/${iface}`)!;
  const steps: Step[] = [['link set lo up', linkUpRequest(LOOPBACK_INDEX, 'lo')]];
  for (const end of ends.filter((e) => made.peerEnds.has(endKey(e)))) {
    steps.push([`link set ${end.iface} up`, linkUpRequest(index(end.iface), end.iface, made.bridges.get(node.key))]);
  }
  for (const end of ends) {
    for (const cidr of end.addresses) {
      // nodad: usable at once, not after a second of duplicate detection.
      const flags: AddressFlag[] = cidr.includes(':') ? ['nodad'] : [];
      steps.push([`addr add ${cidr} dev ${end.iface}`, addAddressRequest({ link: end.iface, address: cidr, flags }, index(end.iface))]);
    }
  }
  for (const { destination, gateway, device } of routes) {
    const request = routeRequest(RTM_NEWROUTE, NLM_F_CREATE | NLM_F_EXCL, { destination, gateway, device }, { device: index(device) });
    steps.push([`route add ${destination} via ${gateway} dev ${device}`, request]);
  }
  const settled = await node.nl!.handle.requestSettled(steps.map(([, request]) => request));
  const failed = settled.findIndex((outcome) => !outcome.ok);
  if (failed !== -1) throw fixtureError(node, steps[failed]![0], (settled[failed] as { error: NetnsError }).error);
}

/** `ip link set NAME up [master BRIDGE]` as a message, by index. */
function linkUpRequest(index: number, name: string, bridge?: number): NetlinkRequest {
  const attributes = bridge === undefined ? [] : [attr.u32(IFLA_MASTER, bridge)];
  return { type: RTM_NEWLINK, flags: 0, header: ifinfomsg(index, IFF_UP, IFF_UP), attributes, what: `set link ${name}` };
}

/**
 * Links made after this skip duplicate address detection, for their
 * link-local addresses too: while a link-local address is tentative the
 * kernel sends no neighbour solicitation for a packet it forwards, so a
 * router could not reach its next hop for the first second or two.
 */
async function skipDad(node: LabNode): Promise<void> {
  await step(node, 'sysctl -w net.ipv6.conf.default.accept_dad=0', (_, ns) => ns.sysctl.set('net.ipv6.conf.default.accept_dad', 0));
}

const FORWARDING = ['net.ipv4.ip_forward', 'net.ipv6.conf.all.forwarding'] as const;

async function setForwarding(node: LabNode, on: boolean, keys: readonly string[]): Promise<void> {
  for (const key of keys) await step(node, `sysctl -w ${key}=${on ? 1 : 0}`, (_, ns) => ns.sysctl.set(key, on ? 1 : 0));
}

/**
 * Routers forward; hosts must not, whatever the machine's own setting: a new
 * namespace copies IPv4's (and, with devconf_inherit_init_net, IPv6's) from
 * the machine, and a forwarding host would hide a missing route. One host's
 * values tell whether hosts need turning off, so most builds pay one read.
 */
async function setAllForwarding(nodes: LabNode[], ipv6: boolean): Promise<void> {
  const keys = ipv6 ? FORWARDING : FORWARDING.slice(0, 1);
  const routers = nodes.filter((node) => node.kind === 'router');
  const hosts = nodes.filter((node) => node.kind === 'host');
  const inherited = hosts.length === 0 ? [] : await inheritedForwarding(hosts[0]!, keys);
  await Promise.all([...routers.map((node) => setForwarding(node, true, keys)), ...hosts.map((node) => setForwarding(node, false, inherited))]);
}

/** The forwarding keys a fresh host has on. */
async function inheritedForwarding(host: LabNode, keys: readonly string[]): Promise<string[]> {
  const values = await Promise.all(keys.map((key) => step(host, `sysctl -n ${key}`, (_, ns) => ns.sysctl.get(key))));
  return keys.filter((_, i) => values[i]!.trim() !== '0');
}

/** A node's planned routes; own keys only (a node may be named `constructor`). */
const routesOf = (plan: LabPlan, key: string): readonly PlannedRoute[] => (Object.hasOwn(plan.routes, key) ? plan.routes[key]! : []);

/**
 * Builds the plan in `nodes`, whose namespaces are made (makeNamespaces).
 * `meanwhile` (synchronous, must not throw) runs while the links are made.
 */
export async function wireLab(plan: LabPlan, nodes: Map<string, LabNode>, meanwhile?: () => void): Promise<void> {
  if (plan.ipv6) await Promise.all([...nodes.values()].map(skipDad));
  const bridges = new Map<string, number>();
  const switches = [...nodes.values()].filter((node) => node.kind === 'switch');
  await allSettledOrThrow(
    switches.map(async (node) => {
      const bridge = await step(node, `link add ${BRIDGE} type bridge`, (nl) => nl.links.add({ kind: 'bridge', name: BRIDGE, up: true }));
      bridges.set(node.key, bridge.index);
    }),
  );
  const indexes = await makeLinks(plan.links, nodes, bridges, meanwhile);
  await setAllForwarding([...nodes.values()], plan.ipv6);
  const peerEnds = new Set(plan.links.map((link) => endKey(madeFrom(link, bridges)[1])));
  const endsOf = new Map<string, PlannedEnd[]>([...nodes.keys()].map((key) => [key, []]));
  for (const link of plan.links) for (const end of [link.a, link.b]) endsOf.get(end.node)!.push(end);
  const made = { indexes, peerEnds, bridges };
  await allSettledOrThrow([...nodes.values()].map((node) => configureNode(node, endsOf.get(node.key)!, routesOf(plan, node.key), made)));
  await untilAllLinksOperational([...nodes.values()].map((node) => node.nl!));
}
