// Neighbours (ARP / NDP entries): RTM_NEWNEIGH / DELNEIGH / GETNEIGH, encoded
// as `ip neigh` sends them (captured with strace on iproute2 6.1):
//   ndmsg{u8 family, u8 pad, u16 pad, s32 ifindex, u16 state, u8 flags, u8 type 0},
//   NDA_DST, NDA_LLADDR (when given).
// `ip` sends state NUD_PERMANENT unless told otherwise, on deletes too (the
// kernel ignores it there). Proxy entries (NTF_PROXY) are a separate table:
// added, deleted and dumped with that flag, and they carry no link-layer address.
// Dumps filter by link with NDA_IFINDEX (strict checking keeps the header's
// other fields 0, NTF_PROXY being the one flag allowed).
import { attr, AttributeMap, type Attribute } from './attributes.js';
import * as C from './constants.js';
import type { NetlinkHandle } from './handle.js';
import type { NetlinkMessage, NetlinkRequest } from './message.js';
import type { Family } from './addresses.js';
import { namesOf } from './enum-names.js';
import { checkKeys, SPEC_KEYS } from './keys.js';
import { checkLinkRef, describeLink, sendOnLink, type LinkRef, type Links } from './links.js';
import { addressFamily, checkFamily, familyName, formatAddress, formatMac, invalid, own, parseAddress, parseHardwareAddress } from './validate.js';

/** NUD_* (linux/neighbour.h); names as `ip neigh` takes them after `nud`. */
export const NEIGHBOUR_STATES = {
  none: 0x00,
  incomplete: 0x01,
  reachable: 0x02,
  stale: 0x04,
  delay: 0x08,
  probe: 0x10,
  failed: 0x20,
  noarp: 0x40,
  permanent: 0x80,
} as const;
const stateName = namesOf(NEIGHBOUR_STATES);
/**
 * A neighbour entry's NUD state by name, as `ip neigh` prints it.
 * @useDeclaredType
 */
export type NeighbourState = keyof typeof NEIGHBOUR_STATES;

/** NTF_* a caller may set, as `ip neigh` names them (`proxy` is its own option). */
export const NEIGHBOUR_FLAGS = { extern_learn: C.NTF_EXT_LEARNED, router: C.NTF_ROUTER } as const;
/**
 * NTF_* flags a caller may set, by name.
 * @useDeclaredType
 */
export type NeighbourFlag = keyof typeof NEIGHBOUR_FLAGS;

/** What neighbours.add() / replace() take: an IP `address` on `link`, with its link-layer address and state. */
export interface NeighbourSpec {
  /** The link, by name or index. */
  link: LinkRef;
  /** The neighbour's IP address: "10.0.0.2", "fd00::2" (no prefix length). */
  address: string;
  /** Its link-layer address: "02:00:00:00:00:02". Not for proxy entries. */
  lladdr?: string;
  /** Default: permanent, as `ip neigh add`. Not for proxy entries. */
  state?: NeighbourState;
  /** NTF_* to set: router, extern_learn. */
  flags?: NeighbourFlag[];
  /** A proxy ARP / NDP entry (NTF_PROXY): answered for, on that link. */
  proxy?: boolean;
  /** When given, the address must be of this family. */
  family?: Family;
}

/** A neighbour (ARP / NDP) or proxy entry as the kernel reports it: what `ip neigh show` prints. */
export interface Neighbour {
  /** 4 or 6. */
  family: Family;
  /** The interface index. */
  index: number;
  /** The neighbour's IP address. */
  address: string;
  /** Its link-layer address, when known. */
  lladdr?: string;
  /** The NUD state ('none' for a proxy entry); a number if not a single known state. */
  state: NeighbourState | number;
  /** Flags as `ip` names them: router, extern_learn, proxy, ... */
  flags: string[];
  /** A proxy entry (from `ip neigh show proxy`). */
  proxy: boolean;
}

/** Which entries neighbours.list() returns: of one link and/or one family; proxy: the proxy entries instead. */
export interface NeighbourFilter {
  /** Only this link's (by name or index). */
  link?: LinkRef;
  /** Only this family. */
  family?: Family;
  /** true: the proxy entries instead of the neighbour cache (as `ip neigh show proxy`). */
  proxy?: boolean;
}

/** Every NTF_* the kernel reports, named as iproute2 prints them. */
const REPORTED_FLAGS: [string, number][] = [
  ['use', C.NTF_USE],
  ['self', C.NTF_SELF],
  ['master', C.NTF_MASTER],
  ['proxy', C.NTF_PROXY],
  ['extern_learn', C.NTF_EXT_LEARNED],
  ['offload', C.NTF_OFFLOADED],
  ['sticky', C.NTF_STICKY],
  ['router', C.NTF_ROUTER],
];

/** struct ndmsg: u8 family, u8 pad1, u16 pad2, s32 ifindex, u16 state, u8 flags, u8 type. */
export function ndmsg(family: number, index: number, state: number, flags: number, type = 0): Buffer {
  const out = Buffer.alloc(C.NDMSG_SIZE);
  out.writeUInt8(family, 0);
  out.writeInt32LE(index, 4);
  out.writeUInt16LE(state, 8);
  out.writeUInt8(flags, 10);
  out.writeUInt8(type, 11);
  return out;
}

export function parseNeighbour(message: NetlinkMessage): Neighbour {
  const p = message.payload;
  const a = AttributeMap.parse(p, C.NDMSG_SIZE);
  const family = p.readUInt8(0);
  const stateBits = p.readUInt16LE(8);
  const flags = p.readUInt8(10);
  const dst = a.get(C.NDA_DST);
  const lladdr = a.get(C.NDA_LLADDR);
  const state = stateName(stateBits);
  const out: Neighbour = {
    family: family === C.AF_INET6 ? 6 : 4,
    index: p.readInt32LE(4),
    address: dst ? formatAddress(dst) : '',
    state,
    flags: REPORTED_FLAGS.filter(([, bit]) => (flags & bit) !== 0).map(([name]) => name),
    proxy: (flags & C.NTF_PROXY) !== 0,
  };
  if (lladdr && lladdr.length > 0) out.lladdr = formatMac(lladdr);
  return out;
}

function stateNumber(state: unknown): number {
  if (state === undefined) return NEIGHBOUR_STATES.permanent;
  if (typeof state !== 'string' || !Object.hasOwn(NEIGHBOUR_STATES, state)) {
    throw invalid(`neighbour state must be one of ${Object.keys(NEIGHBOUR_STATES).join(', ')}, got ${JSON.stringify(state)}`);
  }
  return NEIGHBOUR_STATES[state as NeighbourState];
}

function flagBits(flags: unknown): number {
  if (flags === undefined) return 0;
  if (!Array.isArray(flags)) throw invalid(`neighbour flags must be an array of ${Object.keys(NEIGHBOUR_FLAGS).join(', ')}`);
  return flags.reduce<number>((sum, flag: unknown) => {
    if (typeof flag !== 'string' || !Object.hasOwn(NEIGHBOUR_FLAGS, flag)) {
      throw invalid(`neighbour flag ${JSON.stringify(flag)} is not one of ${Object.keys(NEIGHBOUR_FLAGS).join(', ')}`);
    }
    return sum | NEIGHBOUR_FLAGS[flag as NeighbourFlag];
  }, 0);
}

/** The neighbour's address: an IPv4 or IPv6 address without a prefix length, of `family` if given. */
function neighbourAddress(spec: { address: unknown; family?: unknown }): ReturnType<typeof parseAddress> {
  const family = checkFamily(spec.family);
  const address = parseAddress(spec.address, 'neighbour address');
  if (family !== undefined && (family === 4) !== (address.family === C.AF_INET)) {
    throw invalid(`neighbour address ${address.text} is ${familyName(address.family)}, not IPv${family}`);
  }
  return address;
}

function describeNeighbour(spec: { address: unknown; link: LinkRef; proxy?: boolean }): string {
  return `${spec.proxy ? 'proxy ' : ''}neighbour ${String(spec.address)} on ${describeLink(spec.link)}`;
}

/** The NEWNEIGH message for `spec` on the link with index `index` (validated first). */
export function addNeighbourRequest(spec: NeighbourSpec, index: number, flags = C.NLM_F_CREATE | C.NLM_F_EXCL): NetlinkRequest {
  if (typeof spec !== 'object' || spec === null) throw invalid('a neighbour needs { link, address }');
  checkLinkRef(spec.link);
  const address = neighbourAddress(spec);
  const attributes: Attribute[] = [attr.bytes(C.NDA_DST, address.bytes)];
  let ntf = flagBits(spec.flags);
  let state: number;
  if (spec.proxy !== undefined && typeof spec.proxy !== 'boolean') throw invalid('proxy must be a boolean');
  if (spec.proxy) {
    if (spec.lladdr !== undefined) throw invalid('a proxy neighbour entry takes no lladdr');
    if (spec.state !== undefined) throw invalid('a proxy neighbour entry takes no state');
    ntf |= C.NTF_PROXY;
    state = NEIGHBOUR_STATES.permanent; // as ip sends it
  } else {
    state = stateNumber(spec.state);
    if (spec.lladdr !== undefined) attributes.push(attr.bytes(C.NDA_LLADDR, parseHardwareAddress(spec.lladdr, 'lladdr')));
  }
  const verb = flags & C.NLM_F_REPLACE ? 'replace' : 'add';
  return { type: C.RTM_NEWNEIGH, flags, header: ndmsg(address.family, index, state, ntf), attributes, what: `${verb} ${describeNeighbour(spec)}` };
}

/** The DELNEIGH message, as `ip neigh del` sends it (state NUD_PERMANENT, NTF_PROXY for a proxy entry). */
export function deleteNeighbourRequest(spec: { link: LinkRef; address: string; proxy?: boolean }, index: number): NetlinkRequest {
  if (typeof spec !== 'object' || spec === null) throw invalid('a neighbour needs { link, address }');
  checkLinkRef(spec.link);
  const address = parseAddress(spec.address, 'neighbour address');
  if (spec.proxy !== undefined && typeof spec.proxy !== 'boolean') throw invalid('proxy must be a boolean');
  const header = ndmsg(address.family, index, NEIGHBOUR_STATES.permanent, spec.proxy ? C.NTF_PROXY : 0);
  return { type: C.RTM_DELNEIGH, flags: 0, header, attributes: [attr.bytes(C.NDA_DST, address.bytes)], what: `delete ${describeNeighbour(spec)}` };
}

/**
 * Neighbour (ARP / NDP) entries of the Netlink handle's namespace
 * (`nl.neighbours`), as `ip neigh`. Every method is async; kernel refusals are
 * NetnsErrors with the errno name as code (EEXIST, ENOENT, EPERM).
 */
export class Neighbours {
  readonly #nl: NetlinkHandle;
  readonly #links: Links;

  constructor(handle: NetlinkHandle, links: Links) {
    this.#nl = handle;
    this.#links = links;
  }

  /**
   * The neighbour cache (or, with proxy: true, the proxy entries), optionally
   * of one link (filtered by the kernel, NDA_IFINDEX) and one family. Entries
   * in every state are listed, NOARP and NONE included (`ip neigh show nud all`).
   */
  async list(filter: NeighbourFilter = {}): Promise<Neighbour[]> {
    filter = own(filter);
    if (typeof filter !== 'object' || filter === null) throw invalid('a neighbour filter must be an object ({ link, family, proxy })');
    checkKeys(filter, SPEC_KEYS['neighbours.list'], 'neighbours.list');
    const family = checkFamily(filter.family);
    if (filter.proxy !== undefined && typeof filter.proxy !== 'boolean') throw invalid('proxy must be a boolean');
    const index = filter.link === undefined ? 0 : await this.#links.index(checkLinkRef(filter.link));
    const af = addressFamily(family);
    const attributes = index === 0 ? [] : [attr.u32(C.NDA_IFINDEX, index)];
    const header = ndmsg(af, 0, 0, filter.proxy ? C.NTF_PROXY : 0);
    const messages = await this.#nl.dump(C.RTM_GETNEIGH, header, attributes, `list ${filter.proxy ? 'proxy ' : ''}neighbours`);
    return messages
      .filter((m) => m.type === C.RTM_NEWNEIGH)
      .map(parseNeighbour)
      .filter((n) => (index === 0 || n.index === index) && (family === undefined || n.family === family) && n.proxy === (filter.proxy === true));
  }

  /** Adds an entry; EEXIST if there is one for that address on that link. */
  async add(spec: NeighbourSpec): Promise<void> {
    spec = own(spec);
    checkKeys(spec, SPEC_KEYS.neighbour, 'neighbours.add');
    await this.#sendChecked(addNeighbourRequest(spec, 0), spec);
  }

  /** Adds or overwrites (NLM_F_CREATE | NLM_F_REPLACE), as `ip neigh replace`. */
  async replace(spec: NeighbourSpec): Promise<void> {
    spec = own(spec);
    checkKeys(spec, SPEC_KEYS.neighbour, 'neighbours.replace');
    await this.#sendChecked(addNeighbourRequest(spec, 0, C.NLM_F_CREATE | C.NLM_F_REPLACE), spec);
  }

  /**
   * An lladdr longer than the link's own address would be cut short by the
   * kernel without a word (a tun link has none: a MAC given there is dropped):
   * it is checked against the link's address length first (a lookup, nothing
   * changed), which also gives the index to send.
   */
  async #sendChecked(request: NetlinkRequest, spec: NeighbourSpec): Promise<void> {
    if (spec.lladdr === undefined || spec.proxy) {
      await sendOnLink(this.#nl, this.#links, request, spec.link);
      return;
    }
    const given = parseHardwareAddress(spec.lladdr, 'lladdr').length;
    const link = await this.#links.get(spec.link);
    const expected = link.mac === undefined ? 0 : link.mac.split(':').length;
    if (given !== expected) throw invalid(`lladdr ${spec.lladdr} is ${given} bytes but ${describeLink(spec.link)}'s addresses are ${expected}`);
    await sendOnLink(this.#nl, this.#links, request, link.index);
  }

  /** Deletes the entry for `address` on `link` (the proxy entry with proxy: true). */
  async delete(spec: { link: LinkRef; address: string; proxy?: boolean }): Promise<void> {
    spec = own(spec);
    checkKeys(spec, SPEC_KEYS['neighbours.delete'], 'neighbours.delete');
    await sendOnLink(this.#nl, this.#links, deleteNeighbourRequest(spec, 0), spec.link);
  }


}
