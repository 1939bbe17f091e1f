// Links (network interfaces): RTM_NEWLINK / DELLINK / GETLINK, encoded as
// `ip link` sends them (see reference/netlink-craft.md §2). Every create is one
// message, the veth peer's placement in another namespace included
// (IFLA_NET_NS_FD inside VETH_INFO_PEER), so the kernel makes the whole thing
// or nothing: no half-made pair to clean up.
import { ErrorCodes, kindOf, NetnsError, netnsError } from '../core/errors.js';
import { isNsHandle, type NsHandle } from '../core/handle.js';
import { attr, AttributeMap, encodeAttributes, type Attribute } from './attributes.js';
import * as C from './constants.js';
import type { NetlinkHandle, Settled } from './handle.js';
import type { NetlinkMessage, NetlinkRequest } from './message.js';
import { checkKeys, linkSpecKeys, SPEC_KEYS } from './keys.js';
import { checkIndex, checkLinkName, checkUint, formatMac, invalid, own, parseMac } from './validate.js';

/** A link by name or by index. */
export type LinkRef = string | number;

/** A network interface as the kernel reports it (RTM_NEWLINK): what `ip link show` prints. */
export interface Link {
  /** The interface index (ifindex), unique in the namespace. */
  index: number;
  /** The interface name (IFLA_IFNAME): eth0, lo... */
  name: string;
  /** IFLA_INFO_KIND: 'veth', 'bridge', ...; undefined for links without one (lo, physical). */
  kind?: string;
  /** The MTU in bytes. */
  mtu: number;
  /** The link-layer address ("02:00:00:00:00:01"); absent for links without one. */
  mac?: string;
  /** Flag names as `ip` prints them: NO-CARRIER, LOOPBACK, BROADCAST, ..., UP, LOWER_UP. */
  flags: string[];
  /** Administratively up (IFF_UP). */
  up: boolean;
  /** Operationally up (IFF_RUNNING): up with a carrier. */
  running: boolean;
  /** As `ip` prints it: UP, DOWN, UNKNOWN, LOWERLAYERDOWN... */
  operState: string;
  /** Index of the master (bridge) link. */
  master?: number;
  /** IFLA_LINK: a veth's peer index (in the peer's namespace), a vlan's or macvlan's parent. */
  linkIndex?: number;
  /** IFLA_LINK_NETNSID: the id, in this namespace, of the namespace linkIndex is in. */
  linkNetnsId?: number;
}

/**
 * The settings every kind of LinkSpec shares.
 * @inline
 */
interface CommonSpec {
  /** The new link's name (at most 15 bytes). */
  name: string;
  /** Its interface index (as `ip link add … index N`); the next free one when absent. Taken: EEXIST. */
  index?: number;
  /** The MTU in bytes; the kind's default when absent. */
  mtu?: number;
  /** The link-layer address; a random one when absent. */
  mac?: string;
  /** IFLA_TXQLEN; the kernel's default (1000) when absent. */
  txQueueLength?: number;
  /** Created up (IFF_UP in the same message). */
  up?: boolean;
  /** A bridge (or other master) to enslave it to. */
  master?: LinkRef;
}

/** What links.add() makes: a dummy, bridge, veth (with its peer, maybe in another namespace), vlan, macvlan or ipvlan, with common settings. */
export type LinkSpec = CommonSpec &
  (
    | {
        /** A pair of linked interfaces: what enters one leaves the other. */
        kind: 'veth';
        /** The other end, made in the same message. */
        peer: {
          /** Its name (at most 15 bytes). */
          name: string;
          /** The namespace to make it in (a NetNS); the netlink handle's when absent. */
          netns?: NsHandle;
          /** Its interface index in that namespace (as `ip link add … peer index N`); needs the link's own `index` (the kernel reads it only then); the next free one when absent. Taken: EBUSY. */
          index?: number;
          /** Its MTU in bytes; the kernel's default when absent. */
          mtu?: number;
          /** Its link-layer address; a random one when absent. */
          mac?: string;
          /** Its IFLA_TXQLEN; the kernel's default (1000) when absent. */
          txQueueLength?: number;
        };
      }
    | {
        /** A software switch: enslave links to it with `master`. */
        kind: 'bridge';
      }
    | {
        /** A link that discards what is sent through it: a home for addresses and routes. */
        kind: 'dummy';
      }
    | {
        /** An 802.1Q VLAN on top of `parent`. */
        kind: 'vlan';
        /** The link it is stacked on, by name or index. */
        parent: LinkRef;
        /** The VLAN id, 1-4094. */
        id: number;
      }
    | {
        /** A link of its own MAC address on top of `parent`. */
        kind: 'macvlan';
        /** The link it is stacked on, by name or index. */
        parent: LinkRef;
        /** 'private', 'vepa', 'bridge' (the default), 'passthru' or 'source', as `ip link ... type macvlan mode`. */
        mode?: keyof typeof MACVLAN_MODES;
      }
    | {
        /** A link sharing `parent`'s MAC address. */
        kind: 'ipvlan';
        /** The link it is stacked on, by name or index. */
        parent: LinkRef;
        /** 'l2' (the default), 'l3' or 'l3s'. */
        mode?: keyof typeof IPVLAN_MODES;
        /** 'bridge' (the default), 'private' or 'vepa'. */
        flags?: keyof typeof IPVLAN_FLAGS;
      }
  );

/** What links.set() changes in one message; only the fields given. */
export interface LinkChanges {
  /** true: set up (IFF_UP); false: set down. */
  up?: boolean;
  /** A new MTU in bytes. */
  mtu?: number;
  /** A new link-layer address. */
  mac?: string;
  /** A new name (the link must be down for most kinds). */
  name?: string;
  /** A bridge (or other master) to enslave to; null: no master. */
  master?: LinkRef | null;
}

const MACVLAN_MODES = { private: 1, vepa: 2, bridge: 4, passthru: 8, source: 16 } as const;
const IPVLAN_MODES = { l2: 0, l3: 1, l3s: 2 } as const;
const IPVLAN_FLAGS = { bridge: 0, private: 1, vepa: 2 } as const;
const OPER_STATES = ['UNKNOWN', 'NOTPRESENT', 'DOWN', 'LOWERLAYERDOWN', 'TESTING', 'DORMANT', 'UP'];
// net/if.h, in the order iproute2's print_link_flags prints them.
const FLAG_NAMES: [string, number][] = [
  ['LOOPBACK', 0x8], ['BROADCAST', 0x2], ['POINTOPOINT', 0x10], ['MULTICAST', 0x1000], ['NOARP', 0x80],
  ['ALLMULTI', 0x200], ['PROMISC', 0x100], ['MASTER', 0x400], ['SLAVE', 0x800], ['DEBUG', 0x4],
  ['DYNAMIC', 0x8000], ['AUTOMEDIA', 0x4000], ['PORTSEL', 0x2000], ['NOTRAILERS', 0x20], ['UP', 0x1],
  ['LOWER_UP', 0x10000], ['DORMANT', 0x20000], ['ECHO', 0x40000],
];
const IFF_RUNNING = 0x40;

/** struct ifinfomsg: u8 family, u8 pad, u16 type, s32 index, u32 flags, u32 change. */
export function ifinfomsg(index = 0, flags = 0, change = 0): Buffer {
  const out = Buffer.alloc(C.IFINFOMSG_SIZE);
  out.writeInt32LE(index, 4);
  out.writeUInt32LE(flags, 8);
  out.writeUInt32LE(change, 12);
  return out;
}

function createdButUnread(what: string, error: NetnsError): NetnsError {
  const message = `netlink: ${what}: created, but it could not be read back (changed meanwhile?): ${error.message}`;
  return new NetnsError(error.code, message, { errno: error.errno, syscall: error.syscall, extack: error.extack, cause: error });
}

/**
 * Sends `request`, validated already, for the link `ref`: its index goes in
 * bytes 4-7 of the header (ifaddrmsg, ndmsg), after a lookup for a name; an
 * index is taken as it is, with no turn of the microtask queue.
 */
export function sendOnLink(nl: NetlinkHandle, links: Links, request: NetlinkRequest, ref: LinkRef): Promise<unknown> {
  const send = (index: number): Promise<unknown> => {
    request.header.writeUInt32LE(index, 4);
    return nl.request([request]);
  };
  return typeof ref === 'number' ? send(checkIndex(ref)) : links.index(ref).then(send);
}

export function describeLink(ref: LinkRef): string {
  return typeof ref === 'number' ? `#${ref}` : ref;
}

export function checkLinkRef(ref: unknown): LinkRef {
  return typeof ref === 'number' ? checkIndex(ref) : checkLinkName(ref);
}

/** The link a request is about: by index in the header, or by IFLA_IFNAME (the kernel resolves it). */
function target(ref: LinkRef): { header: Buffer; attributes: Attribute[] } {
  if (typeof ref === 'number') return { header: ifinfomsg(ref), attributes: [] };
  return { header: ifinfomsg(), attributes: [attr.string(C.IFLA_IFNAME, ref)] };
}

export function parseLink(message: NetlinkMessage): Link {
  const p = message.payload;
  const a = AttributeMap.parse(p, C.IFINFOMSG_SIZE);
  const flags = p.readUInt32LE(8);
  const info = a.nested(C.IFLA_LINKINFO);
  const mac = a.get(C.IFLA_ADDRESS);
  const link: Link = {
    index: p.readInt32LE(4),
    name: a.string(C.IFLA_IFNAME) ?? '',
    mtu: a.u32(C.IFLA_MTU) ?? 0,
    flags: flagNames(flags),
    up: (flags & C.IFF_UP) !== 0,
    running: (flags & IFF_RUNNING) !== 0,
    operState: OPER_STATES[a.u8(C.IFLA_OPERSTATE) ?? 0] ?? 'UNKNOWN',
  };
  const kind = info?.string(C.IFLA_INFO_KIND);
  if (kind !== undefined) link.kind = kind;
  if (mac !== undefined) link.mac = formatMac(mac);
  optional(link, 'master', a.u32(C.IFLA_MASTER));
  optional(link, 'linkIndex', a.s32(C.IFLA_LINK));
  optional(link, 'linkNetnsId', a.s32(C.IFLA_LINK_NETNSID));
  return link;
}

/** A create and its read-back, as add() resolves or rejects. */
function settledAdd(create: NetlinkRequest, created: Settled, readBack: Settled, name: string): PromiseSettledResult<Link> {
  try {
    if (!created.ok) throw created.error;
    if (!readBack.ok) throw createdButUnread(create.what, readBack.error);
    return { status: 'fulfilled', value: onlyLink(readBack.messages, `get link ${name}`) };
  } catch (reason) {
    return { status: 'rejected', reason };
  }
}

function onlyLink(replies: NetlinkMessage[], what: string): Link {
  const message = replies.find((m) => m.type === C.RTM_NEWLINK);
  if (!message) throw netnsError(ErrorCodes.NETLINK_MALFORMED, `netlink: ${what}: the kernel answered without the link`);
  return parseLink(message);
}

function optional<K extends 'master' | 'linkIndex' | 'linkNetnsId'>(link: Link, key: K, value: number | undefined): void {
  if (value !== undefined) link[key] = value;
}

function flagNames(flags: number): string[] {
  const names = (flags & C.IFF_UP) !== 0 && (flags & IFF_RUNNING) === 0 ? ['NO-CARRIER'] : [];
  for (const [name, bit] of FLAG_NAMES) if ((flags & bit) !== 0) names.push(name);
  return names;
}

/**
 * Network interfaces of the Netlink handle's namespace (`nl.links`), as `ip link`.
 * Every method is async (one kernel round trip); kernel refusals are NetnsErrors
 * with the errno name as code (EEXIST, ENODEV, EPERM without CAP_NET_ADMIN).
 */
export class Links {
  readonly #nl: NetlinkHandle;

  constructor(handle: NetlinkHandle) {
    this.#nl = handle;
  }

  /** Every link of the namespace, as `ip link show`. */
  async list(): Promise<Link[]> {
    const messages = await this.#nl.dump(C.RTM_GETLINK, ifinfomsg(), [], 'list links');
    return messages.filter((m) => m.type === C.RTM_NEWLINK).map(parseLink);
  }

  /** A link by name or index; ENODEV (a coded error) when there is none. */
  async get(ref: LinkRef): Promise<Link> {
    checkLinkRef(ref);
    const [replies] = await this.#nl.request([{ type: C.RTM_GETLINK, flags: 0, ...target(ref), what: `get link ${describeLink(ref)}` }]);
    return onlyLink(replies!, `get link ${describeLink(ref)}`);
  }

  /** The index of a link; a number is checked and returned as it is. */
  async index(ref: LinkRef): Promise<number> {
    if (typeof ref === 'number') return checkIndex(ref);
    return (await this.get(ref)).index;
  }

  /**
   * Creates a link (one message) and reads it back in the same round trip.
   * If the read-back fails (the link was renamed, moved or deleted by someone
   * else in between), the error says the link was created.
   */
  async add(spec: LinkSpec): Promise<Link> {
    const [outcome] = await this.addEach([spec]);
    if (outcome!.status === 'rejected') throw outcome!.reason;
    return outcome!.value;
  }

  /**
   * @internal Creates each link as add() does, all in one round trip (one
   * hand-off to a thread, not one per link), and settles each in order. Every
   * spec is checked before anything is sent; rtnetlink is not transactional,
   * so one the kernel refuses leaves the others made.
   */
  async addEach(specs: readonly LinkSpec[]): Promise<PromiseSettledResult<Link>[]> {
    const checked = specs.map((spec) => {
      spec = own(spec);
      const keys = linkSpecKeys(spec?.kind); // an unknown kind is refused as such, before anything is sent
      if (keys) checkKeys(spec, keys, 'links.add');
      return spec;
    });
    const peerNamespaces = checked.map((spec) => (spec?.kind === 'veth' ? checkNamespace(own(spec.peer)?.netns, 'peer.netns') : undefined));
    // A peer's namespace fd is only valid while its handle is acquired.
    const acquired: NsHandle[] = [];
    try {
      const requests: NetlinkRequest[] = [];
      for (const [i, spec] of checked.entries()) {
        const netns = peerNamespaces[i];
        const nsFd = netns?.acquire();
        if (netns) acquired.push(netns);
        requests.push(await this.#createRequest(spec, nsFd), { type: C.RTM_GETLINK, flags: 0, ...target(spec.name), what: `get link ${spec.name}` });
      }
      const settled = await this.#nl.requestSettled(requests);
      return checked.map((spec, i) => settledAdd(requests[2 * i]!, settled[2 * i]!, settled[2 * i + 1]!, spec.name));
    } finally {
      for (const netns of acquired) netns.release();
    }
  }

  /** Changes a link; all given changes in one message. Every change is checked before anything is sent. */
  async set(ref: LinkRef, changes: LinkChanges): Promise<void> {
    changes = own(changes);
    checkKeys(changes, SPEC_KEYS['links.set'], 'links.set');
    checkLinkRef(ref);
    if (typeof changes !== 'object' || changes === null) throw invalid('link changes must be an object ({ up, mtu, mac, name, master })');
    if (changes.up !== undefined && typeof changes.up !== 'boolean') throw invalid(`up must be a boolean, got ${String(changes.up)}`);
    const newName = changes.name === undefined ? undefined : checkLinkName(changes.name, 'new interface name');
    const common = commonAttributes(changes);
    const master = changes.master === undefined || changes.master === null ? changes.master : checkLinkRef(changes.master);
    // Lookups (reads) only after every check.
    const attributes: Attribute[] = [];
    let index = typeof ref === 'number' ? ref : 0;
    if (newName !== undefined) {
      attributes.push(attr.string(C.IFLA_IFNAME, newName));
      if (index === 0) index = await this.index(ref); // the name attribute now names the new name
    } else if (index === 0) {
      attributes.push(attr.string(C.IFLA_IFNAME, ref as string));
    }
    attributes.push(...common);
    if (master !== undefined) attributes.push(attr.u32(C.IFLA_MASTER, master === null ? 0 : await this.index(master)));
    const up = changes.up === undefined ? [0, 0] : [changes.up ? C.IFF_UP : 0, C.IFF_UP];
    const header = ifinfomsg(index, up[0], up[1]); // change mask always given: 0 would mean "every flag"
    await this.#nl.request([{ type: C.RTM_NEWLINK, flags: 0, header, attributes, what: `set link ${describeLink(ref)}` }]);
  }

  /** Sets the link administratively up (`ip link set REF up`). */
  up(ref: LinkRef): Promise<void> {
    return this.set(ref, { up: true });
  }

  /** Sets the link administratively down (`ip link set REF down`). */
  down(ref: LinkRef): Promise<void> {
    return this.set(ref, { up: false });
  }

  /** Moves a link into another namespace, optionally renaming it there (one message). */
  async move(ref: LinkRef, to: NsHandle, options: { name?: string } = {}): Promise<void> {
    options = own(options);
    checkKeys(options, SPEC_KEYS['links.move'], 'links.move');
    checkLinkRef(ref);
    if (typeof options !== 'object' || options === null) throw invalid('move options must be an object ({ name })');
    const newName = options.name === undefined ? undefined : checkLinkName(options.name, 'new interface name');
    // Required here: checkNamespace lets undefined through for the specs where it is optional.
    if (checkNamespace(to, 'the namespace to move to') === undefined) throw invalid('move needs the namespace to move to (a NetNS)');
    const index = await this.index(ref);
    const nsFd = to.acquire();
    try {
      const attributes = [attr.u32(C.IFLA_NET_NS_FD, nsFd)];
      if (newName !== undefined) attributes.push(attr.string(C.IFLA_IFNAME, newName));
      const what = `move link ${describeLink(ref)} to ${to.path}`;
      await this.#nl.request([{ type: C.RTM_NEWLINK, flags: 0, header: ifinfomsg(index), attributes, what }]);
    } finally {
      to.release();
    }
  }

  /** Deletes a link (a veth's peer goes with it). */
  async delete(ref: LinkRef): Promise<void> {
    checkLinkRef(ref);
    await this.#nl.request([{ type: C.RTM_DELLINK, flags: 0, ...target(ref), what: `delete link ${describeLink(ref)}` }]);
  }

  async #createRequest(spec: LinkSpec, peerNsFd: number | undefined): Promise<NetlinkRequest> {
    const name = checkLinkName(spec?.name);
    if (spec.up !== undefined && typeof spec.up !== 'boolean') throw invalid(`up must be a boolean, got ${String(spec.up)}`);
    const attributes: Attribute[] = [attr.string(C.IFLA_IFNAME, name), ...commonAttributes(spec)];
    const info = linkInfo(spec, peerNsFd); // every check made before a lookup is sent
    const parent = 'parent' in spec ? checkLinkRef(spec.parent) : undefined;
    const master = spec.master === undefined ? undefined : checkLinkRef(spec.master);
    if (parent !== undefined) attributes.push(attr.u32(C.IFLA_LINK, await this.index(parent)));
    if (master !== undefined) attributes.push(attr.u32(C.IFLA_MASTER, await this.index(master)));
    attributes.push(info);
    const index = checkNewIndex(spec.index, 'index');
    const header = spec.up ? ifinfomsg(index, C.IFF_UP, C.IFF_UP) : ifinfomsg(index);
    const flags = C.NLM_F_CREATE | C.NLM_F_EXCL;
    return { type: C.RTM_NEWLINK, flags, header, attributes, what: `add ${spec.kind} link ${name}` };
  }
}

function commonAttributes(spec: { mtu?: number; mac?: string; txQueueLength?: number }): Attribute[] {
  const attributes: Attribute[] = [];
  if (spec.mtu !== undefined) attributes.push(attr.u32(C.IFLA_MTU, checkUint(spec.mtu, 'mtu', 0x7fffffff, 68)));
  if (spec.txQueueLength !== undefined) attributes.push(attr.u32(C.IFLA_TXQLEN, checkUint(spec.txQueueLength, 'txQueueLength')));
  if (spec.mac !== undefined) attributes.push(attr.bytes(C.IFLA_ADDRESS, parseMac(spec.mac)));
  return attributes;
}

/** IFLA_LINKINFO { INFO_KIND, INFO_DATA{...} } per kind. */
export function linkInfo(spec: LinkSpec, peerNsFd?: number): Attribute {
  const kind = attr.rawString(C.IFLA_INFO_KIND, spec.kind);
  const data = infoData(spec, peerNsFd);
  return attr.nest(C.IFLA_LINKINFO, data ? [kind, attr.nest(C.IFLA_INFO_DATA, data)] : [kind]);
}

function infoData(spec: LinkSpec, peerNsFd: number | undefined): Attribute[] | undefined {
  switch (spec.kind) {
    case 'bridge':
    case 'dummy':
      return undefined;
    case 'veth':
      return [vethPeer(spec.peer, peerNsFd, spec.index !== undefined)];
    case 'vlan':
      return [attr.u16(C.IFLA_VLAN_ID, checkUint(spec.id, 'vlan id', 4094, 1))];
    case 'macvlan':
      return [attr.u32(C.IFLA_MACVLAN_MODE, choose(MACVLAN_MODES, spec.mode ?? 'bridge', 'macvlan mode'))];
    case 'ipvlan':
      return [
        attr.u16(C.IFLA_IPVLAN_MODE, choose(IPVLAN_MODES, spec.mode ?? 'l2', 'ipvlan mode')),
        attr.u16(C.IFLA_IPVLAN_FLAGS, choose(IPVLAN_FLAGS, spec.flags ?? 'bridge', 'ipvlan flags')),
      ];
    default:
      throw invalid(`unsupported link kind ${JSON.stringify((spec as { kind: unknown }).kind)}`);
  }
}

type VethPeerSpec = { name: string; index?: number; mtu?: number; mac?: string; txQueueLength?: number };

/**
 * VETH_INFO_PEER = an ifinfomsg then the peer's attributes. IFLA_NET_NS_FD here
 * places the peer; at top level it would place only the primary end.
 */
function vethPeer(peer: VethPeerSpec | undefined, nsFd: number | undefined, ownIndexGiven: boolean): Attribute {
  if (typeof peer !== 'object' || peer === null) throw invalid('a veth needs peer: { name }');
  peer = own(peer);
  checkKeys(peer, SPEC_KEYS['links.add veth peer'], 'links.add veth peer');
  // The kernel reads the peer's index only when the link's own is given, and would silently pick another.
  if (peer.index !== undefined && !ownIndexGiven) throw invalid('peer index needs the link\'s own index: the kernel takes a veth peer\'s index only with it');
  const attributes: Attribute[] = [];
  if (nsFd !== undefined) attributes.push(attr.u32(C.IFLA_NET_NS_FD, nsFd));
  attributes.push(attr.string(C.IFLA_IFNAME, checkLinkName(peer.name, 'peer name')), ...commonAttributes(peer));
  return attr.bytes(C.VETH_INFO_PEER, Buffer.concat([ifinfomsg(checkNewIndex(peer.index, 'peer index')), encodeAttributes(attributes)]));
}

/**
 * A new link's ifi_index: 0 (absent) lets the kernel pick. A link's index is
 * a positive int, and 0 is not a value a caller can mean.
 */
function checkNewIndex(index: unknown, what: string): number {
  return index === undefined ? 0 : checkUint(index, what, 0x7fffffff, 1);
}

/** A NetNS (of any copy of the package); undefined passes (no namespace given). */
function checkNamespace(value: unknown, what: string): NsHandle | undefined {
  if (value === undefined || isNsHandle(value)) return value;
  throw invalid(`${what} must be a NetNS (NetNS.open(name) for a name or path), got ${kindOf(value)}`);
}

function choose<T extends Record<string, number>>(table: T, key: unknown, what: string): number {
  if (typeof key !== 'string' || !Object.hasOwn(table, key)) {
    throw invalid(`${what} must be one of ${Object.keys(table).join(', ')}, got ${JSON.stringify(key)}`);
  }
  return table[key]!;
}
