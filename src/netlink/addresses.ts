// Interface addresses: RTM_NEWADDR / DELADDR / GETADDR, as `ip addr` sends
// them: IFA_LOCAL and IFA_ADDRESS both the address (IFA_ADDRESS the peer's with
// `peer`), flags above 0xff in IFA_FLAGS with the header's field left 0,
// lifetimes in IFA_CACHEINFO.
import { ErrorCodes, netnsError } from '../core/errors.js';
import { attr, AttributeMap, type Attribute } from './attributes.js';
import * as C from './constants.js';
import type { NetlinkHandle } from './handle.js';
import type { NetlinkMessage, NetlinkRequest } from './message.js';
import { namesOf } from './enum-names.js';
import { checkKeys, SPEC_KEYS } from './keys.js';
import { checkLinkRef, describeLink, sendOnLink, type LinkRef, type Links } from './links.js';
import { addressFamily, checkFamily, checkSameFamily, checkUint, formatAddress, invalid, own, parseAddress, parsePrefix } from './validate.js';

/** Family as a number: 4 or 6. */
export type Family = 4 | 6;

export const ADDRESS_FLAGS = {
  secondary: 0x01,
  nodad: 0x02,
  optimistic: 0x04,
  dadfailed: 0x08,
  homeaddress: 0x10,
  deprecated: 0x20,
  tentative: 0x40,
  permanent: 0x80,
  managetempaddr: 0x100,
  noprefixroute: 0x200,
  mcautojoin: 0x400,
  stableprivacy: 0x800,
} as const;
/**
 * IFA_F_* flags by the names `ip address` prints (nodad, tentative, permanent...).
 * @useDeclaredType
 */
export type AddressFlag = keyof typeof ADDRESS_FLAGS;
/** What a caller may ask for (the rest the kernel sets). */
const SETTABLE: readonly AddressFlag[] = ['nodad', 'optimistic', 'homeaddress', 'managetempaddr', 'noprefixroute', 'mcautojoin'];

export const SCOPES = { global: C.RT_SCOPE_UNIVERSE, site: 200, link: C.RT_SCOPE_LINK, host: C.RT_SCOPE_HOST } as const;
/**
 * An address or route scope by name, as `ip` prints it.
 * @useDeclaredType
 */
export type ScopeName = keyof typeof SCOPES;
export const scopeName = namesOf(SCOPES);

/** What addresses.add() / replace() assign: `address` with its prefix ("10.0.0.1/24") on `link`. */
export interface AddressSpec {
  /** The link, by name or index. */
  link: LinkRef;
  /** "10.0.0.1/24", "fd00::1/64"; without a length, /32 or /128. */
  address: string;
  /** Point-to-point peer (IFA_ADDRESS): "10.0.0.2" or "10.0.0.2/32". */
  peer?: string;
  /** IPv4 broadcast address. */
  broadcast?: string;
  /** global (the default), site, link, host, or a number. */
  scope?: ScopeName | number;
  /** IFA_F_* to set: nodad, noprefixroute, ... */
  flags?: AddressFlag[];
  /** An IPv4 label ("eth0:1"), as `ip address add ... label`. */
  label?: string;
  /** Seconds; forever when absent. */
  validLifetime?: number;
  /** Seconds; at most validLifetime; forever when absent. */
  preferredLifetime?: number;
}

/** An interface address as the kernel reports it (RTM_NEWADDR): what `ip address show` prints. */
export interface Address {
  /** 4 or 6. */
  family: Family;
  /** The interface index. */
  index: number;
  /** The address, without its length. */
  address: string;
  /** The prefix length: 24 for 10.0.0.1/24. */
  prefixLength: number;
  /** The point-to-point peer, when it differs from the local address. */
  peer?: string;
  /** The IPv4 broadcast address, when set. */
  broadcast?: string;
  /** global, site, link, host, or the number. */
  scope: ScopeName | number;
  /** IFA_F_* by name: permanent, tentative, dadfailed... */
  flags: AddressFlag[];
  /** The IPv4 label, when set. */
  label?: string;
  /** Seconds left; undefined = forever. */
  validLifetime?: number;
  /** Seconds left before it is deprecated; undefined = forever. */
  preferredLifetime?: number;
}

/** Which addresses addresses.list() returns: of one link and/or one family; all when empty. */
export interface AddressFilter {
  /** Only this link's (by name or index). */
  link?: LinkRef;
  /** Only this family. */
  family?: Family;
}


/** struct ifaddrmsg: u8 family, u8 prefixlen, u8 flags, u8 scope, u32 index. */
export function ifaddrmsg(family: number, prefixLength: number, flags: number, scope: number, index: number): Buffer {
  const out = Buffer.allocUnsafe(C.IFADDRMSG_SIZE); // pooled: see quadBytes in validate.ts
  out[0] = family;
  out[1] = prefixLength;
  out[2] = flags;
  out[3] = scope;
  out.writeUInt32LE(index, 4);
  return out;
}

export function parseAddressMessage(message: NetlinkMessage): Address {
  const p = message.payload;
  const a = AttributeMap.parse(p, C.IFADDRMSG_SIZE);
  const local = a.get(C.IFA_LOCAL);
  const address = a.get(C.IFA_ADDRESS);
  if (!local && !address) throw netnsError(ErrorCodes.NETLINK_MALFORMED, 'netlink: an address message without an address');
  const flags = a.u32(C.IFA_FLAGS) ?? p.readUInt8(2);
  const scope = p.readUInt8(3);
  const out: Address = {
    family: p.readUInt8(0) === C.AF_INET ? 4 : 6,
    index: p.readUInt32LE(4),
    address: formatAddress((local ?? address)!),
    prefixLength: p.readUInt8(1),
    scope: scopeName(scope),
    flags: (Object.keys(ADDRESS_FLAGS) as AddressFlag[]).filter((k) => (flags & ADDRESS_FLAGS[k]) !== 0),
  };
  if (local && address && !local.equals(address)) out.peer = formatAddress(address);
  const broadcast = a.get(C.IFA_BROADCAST);
  if (broadcast) out.broadcast = formatAddress(broadcast);
  const label = a.string(C.IFA_LABEL);
  if (label !== undefined) out.label = label;
  const cache = a.get(C.IFA_CACHEINFO);
  if (cache && cache.length >= 8) {
    const preferred = cache.readUInt32LE(0);
    const valid = cache.readUInt32LE(4);
    if (valid !== C.INFINITY_LIFE_TIME) out.validLifetime = valid;
    if (preferred !== C.INFINITY_LIFE_TIME) out.preferredLifetime = preferred;
  }
  return out;
}

/** The NEWADDR message for `spec` on the link with index `index` (validated first). */
export function addAddressRequest(spec: AddressSpec, index: number, flags = C.NLM_F_CREATE | C.NLM_F_EXCL): NetlinkRequest {
  if (typeof spec !== 'object' || spec === null) throw invalid('an address needs { link, address }');
  checkLinkRef(spec.link);
  const local = parsePrefix(spec.address);
  const attributes: Attribute[] = [attr.bytes(C.IFA_LOCAL, local.bytes)];
  const peer = spec.peer === undefined ? undefined : parsePrefix(spec.peer, 'peer');
  if (peer) checkSameFamily(local, peer, 'peer');
  attributes.push(attr.bytes(C.IFA_ADDRESS, (peer ?? local).bytes));
  const headerFlags = addressFlags(spec.flags);
  if (headerFlags > 0xff) attributes.push(attr.u32(C.IFA_FLAGS, headerFlags));
  if (spec.label !== undefined) attributes.push(attr.string(C.IFA_LABEL, checkLabel(spec.label)));
  if (spec.broadcast !== undefined) {
    const broadcast = parseAddress(spec.broadcast, 'broadcast');
    checkSameFamily(local, broadcast, 'broadcast');
    if (broadcast.family !== C.AF_INET) throw invalid('broadcast is for IPv4 addresses only');
    attributes.push(attr.bytes(C.IFA_BROADCAST, broadcast.bytes));
  }
  if (spec.validLifetime !== undefined || spec.preferredLifetime !== undefined) attributes.push(cacheInfo(spec));
  const scope = scopeNumber(spec.scope);
  // As ip: a peer given with a length ("10.0.0.2/24") sets the prefix length.
  const prefixLength = peer && String(spec.peer).includes('/') ? peer.prefixLength : local.prefixLength;
  const header = ifaddrmsg(local.family, prefixLength, headerFlags > 0xff ? 0 : headerFlags, scope, index);
  return { type: C.RTM_NEWADDR, flags, header, attributes, what: `add address ${spec.address} on ${describeLink(spec.link)}` };
}

function addressFlags(flags: readonly AddressFlag[] | undefined): number {
  if (flags === undefined) return 0;
  if (!Array.isArray(flags)) throw invalid(`address flags must be an array of ${SETTABLE.join(', ')}`);
  return (flags as readonly AddressFlag[]).reduce<number>((sum, flag) => {
    if (!SETTABLE.includes(flag)) throw invalid(`address flag ${JSON.stringify(flag)} is not one of ${SETTABLE.join(', ')}`);
    return sum | ADDRESS_FLAGS[flag];
  }, 0);
}

function checkLabel(label: string): string {
  if (typeof label !== 'string' || label === '' || Buffer.byteLength(label) > 15 || /\p{Cc}/u.test(label)) {
    throw invalid(`bad address label ${JSON.stringify(label)} (1-15 bytes, no control characters)`);
  }
  return label;
}

export function scopeNumber(scope: ScopeName | number | undefined): number {
  if (scope === undefined) return C.RT_SCOPE_UNIVERSE;
  if (typeof scope === 'number') return checkUint(scope, 'scope', 255);
  if (!Object.hasOwn(SCOPES, scope)) throw invalid(`scope must be one of ${Object.keys(SCOPES).join(', ')} or 0-255, got ${JSON.stringify(scope)}`);
  return SCOPES[scope];
}

function cacheInfo(spec: AddressSpec): Attribute {
  const valid = spec.validLifetime === undefined ? C.INFINITY_LIFE_TIME : checkUint(spec.validLifetime, 'validLifetime');
  const preferred = spec.preferredLifetime === undefined ? valid : checkUint(spec.preferredLifetime, 'preferredLifetime');
  if (preferred > valid) throw invalid(`preferredLifetime ${preferred} is longer than validLifetime ${valid}`);
  const out = Buffer.alloc(16); // preferred, valid, cstamp, tstamp
  out.writeUInt32LE(preferred, 0);
  out.writeUInt32LE(valid, 4);
  return attr.bytes(C.IFA_CACHEINFO, out);
}

/**
 * Interface addresses of the Netlink handle's namespace (`nl.addresses`), as
 * `ip address`. Every method is async; kernel refusals are NetnsErrors with the
 * errno name as code (EEXIST, EADDRNOTAVAIL, EPERM without CAP_NET_ADMIN).
 */
export class Addresses {
  readonly #nl: NetlinkHandle;
  readonly #links: Links;

  constructor(handle: NetlinkHandle, links: Links) {
    this.#nl = handle;
    this.#links = links;
  }

  /** Addresses, optionally of one link (filtered by the kernel) and one family. */
  async list(filter: AddressFilter = {}): Promise<Address[]> {
    filter = own(filter);
    if (typeof filter !== 'object' || filter === null) throw invalid('an address filter must be an object ({ link, family })');
    checkKeys(filter, SPEC_KEYS['addresses.list'], 'addresses.list');
    const family = checkFamily(filter.family);
    const index = filter.link === undefined ? 0 : await this.#links.index(checkLinkRef(filter.link));
    const header = ifaddrmsg(addressFamily(family), 0, 0, 0, index);
    const messages = await this.#nl.dump(C.RTM_GETADDR, header, [], 'list addresses');
    return messages
      .filter((m) => m.type === C.RTM_NEWADDR)
      .map(parseAddressMessage)
      .filter((a) => index === 0 || a.index === index);
  }

  /** Adds an address; EEXIST if the link has it already (replace() updates instead). */
  async add(spec: AddressSpec): Promise<void> {
    spec = own(spec);
    checkKeys(spec, SPEC_KEYS.address, 'addresses.add');
    // validated before the link is looked up
    await sendOnLink(this.#nl, this.#links, addAddressRequest(spec, 0), spec.link);
  }

  /** Adds or updates (NLM_F_REPLACE): lifetimes and flags of an existing address change. */
  async replace(spec: AddressSpec): Promise<void> {
    spec = own(spec);
    checkKeys(spec, SPEC_KEYS.address, 'addresses.replace');
    await sendOnLink(this.#nl, this.#links, addAddressRequest(spec, 0, C.NLM_F_CREATE | C.NLM_F_REPLACE), spec.link);
  }

  /** Deletes an address ("10.0.0.1/24") from a link. */
  async delete(spec: { link: LinkRef; address: string; peer?: string }): Promise<void> {
    spec = own(spec);
    checkKeys(spec, SPEC_KEYS['addresses.delete'], 'addresses.delete');
    await sendOnLink(this.#nl, this.#links, deleteRequest(spec, 0), spec.link);
  }

  /** Deletes every address of a link (of one family if given), in one round trip; returns how many went. */
  async flush(link: LinkRef, family?: Family): Promise<number> {
    checkFamily(family); // before the lookup: bad input sends nothing
    const index = await this.#links.index(checkLinkRef(link));
    const found = await this.list({ link: index, ...(family === undefined ? {} : { family }) });
    if (found.length === 0) return 0;
    const requests = found.map((a) => flushRequest(a, describeLink(link)));
    const settled = await this.#nl.requestSettled(requests);
    // An address removed meanwhile (or with its primary: IPv4 secondaries go with it) is already gone.
    const failed = settled.find((s) => !s.ok && s.error.code !== 'EADDRNOTAVAIL');
    if (failed && !failed.ok) throw failed.error;
    return settled.filter((s) => s.ok).length;
  }
}

function deleteRequest(spec: { link: LinkRef; address: string; peer?: string }, index: number): NetlinkRequest {
  if (typeof spec !== 'object' || spec === null) throw invalid('an address needs { link, address }');
  checkLinkRef(spec.link);
  const local = parsePrefix(spec.address);
  const attributes = [attr.bytes(C.IFA_LOCAL, local.bytes)];
  if (spec.peer !== undefined) {
    const peer = parsePrefix(spec.peer, 'peer');
    checkSameFamily(local, peer, 'peer');
    attributes.push(attr.bytes(C.IFA_ADDRESS, peer.bytes));
  }
  const header = ifaddrmsg(local.family, local.prefixLength, 0, 0, index);
  return { type: C.RTM_DELADDR, flags: 0, header, attributes, what: `delete address ${spec.address} on ${describeLink(spec.link)}` };
}

function flushRequest(a: Address, link: string): NetlinkRequest {
  const spec = { link, address: `${a.address}/${a.prefixLength}`, ...(a.peer === undefined ? {} : { peer: a.peer }) };
  return deleteRequest(spec, a.index);
}
