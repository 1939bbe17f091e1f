// IPv6 zones (fe80::1%eth0) name interfaces of the namespace, not of the host.
// Node (libuv) resolves a zone with if_nametoindex on the calling thread, in
// the host, and names a scope id with if_indextoname, in the host too: a zone
// that exists only in the namespace fails (EINVAL on connect, ENXIO from
// address()), and one that happens to exist in the host means another
// interface. So zones are resolved here, from the namespace's own
// /proc/net/if_inet6 read on an I/O thread inside it, and the addresses Node
// would report are computed from what the namespace says.
import { fs, net } from '../core/builtins.js';
import { callNative, ErrorCodes, netnsError } from '../core/errors.js';
import type { NsHandle } from '../core/handle.js';
import { native } from '../core/native.js';
import { encodeMessage, splitMessages } from '../netlink/message.js';
import { readFileIn } from './files.js';

const SCOPE_LINK = 0x20;
const IFA_F_TENTATIVE = 0x40;
const IFA_F_DADFAILED = 0x08;

export interface ZonedHost {
  /** The address without its zone, in canonical form. */
  address: string;
  zone: string | undefined;
}

export interface ZoneInterface {
  index: number;
  name: string;
  /** Usable link-local addresses of the interface (canonical form). */
  linkLocal: string[];
}

export function splitZone(host: string): ZonedHost {
  const at = host.indexOf('%');
  if (at < 0) return { address: host, zone: undefined };
  return { address: canonical(host.slice(0, at)), zone: host.slice(at + 1) };
}

function canonical(address: string): string {
  const { SocketAddress } = net();
  return new SocketAddress({ address, family: 'ipv6' }).address;
}

/** fe80::/10: the addresses whose scope id names an interface (what Node reports with a %zone). */
export function isLinkLocal(address: string): boolean {
  if (!address.includes(':')) return false;
  const first = Number.parseInt(canonical(address).split(':')[0] || '0', 16);
  return (first & 0xffc0) === 0xfe80;
}

function hexToIpv6(hex: string): string {
  return canonical(hex.match(/.{4}/g)!.join(':'));
}

/** The interface a zone (a name, or a numeric index as glibc accepts) names in the namespace. */
export async function resolveZone(ns: NsHandle, zone: string): Promise<ZoneInterface> {
  const text = (await readFileIn(ns, '/proc/net/if_inet6')).toString('utf8');
  const byIndex = new Map<number, ZoneInterface>();
  for (const line of text.split('\n')) {
    const [hex, index, , scope, flags, name] = line.trim().split(/\s+/);
    if (hex === undefined || name === undefined) continue;
    const entry = byIndex.get(Number.parseInt(index!, 16)) ?? { index: Number.parseInt(index!, 16), name, linkLocal: [] };
    byIndex.set(entry.index, entry);
    const usable = (Number.parseInt(flags!, 16) & (IFA_F_TENTATIVE | IFA_F_DADFAILED)) === 0;
    if (Number.parseInt(scope!, 16) === SCOPE_LINK && usable) entry.linkLocal.push(hexToIpv6(hex));
  }
  const numeric = /^\d+$/.test(zone) ? Number(zone) : undefined;
  const found = [...byIndex.values()].find((entry) => entry.name === zone || entry.index === numeric);
  if (found === undefined) {
    throw netnsError(ErrorCodes.INVALID_ARG, `IPv6 zone ${JSON.stringify(zone)}: no interface with IPv6 by that name or index in this namespace`);
  }
  return found;
}

/** The local port of a socket, looked up by inode in the namespace's /proc/net/{tcp6,udp6}. */
export async function localPortOf(ns: NsHandle, fd: number, table: 'tcp6' | 'udp6'): Promise<number> {
  const inode = String(fs().fstatSync(fd).ino);
  const text = (await readFileIn(ns, `/proc/net/${table}`)).toString('utf8');
  for (const line of text.split('\n').slice(1)) {
    const fields = line.trim().split(/\s+/);
    if (fields[9] === inode) return Number.parseInt(fields[1]!.split(':')[1]!, 16);
  }
  throw netnsError(ErrorCodes.INVALID_ARG, `socket ${fd} is not in this namespace's /proc/net/${table}`);
}

type AddressInfo = { address: string; family: 'IPv6'; port: number };

/** Makes a net.Server / dgram.Socket report the namespace's interface name instead of failing (or naming a host interface). */
export function reportAddress(target: { address(): unknown }, isOpen: () => boolean, info: AddressInfo): void {
  const original = target.address.bind(target);
  Object.defineProperty(target, 'address', {
    configurable: true,
    writable: true,
    value: () => (isOpen() ? { ...info } : original()),
  });
}

/** The same for a connected net.Socket's local and remote ends. */
export function reportSocketAddresses(socket: object, local: AddressInfo, remote: AddressInfo): void {
  const values: Record<string, unknown> = {
    localAddress: local.address,
    localPort: local.port,
    localFamily: 'IPv6',
    remoteAddress: remote.address,
    remotePort: remote.port,
    remoteFamily: 'IPv6',
  };
  for (const [key, value] of Object.entries(values)) Object.defineProperty(socket, key, { configurable: true, get: () => value });
  Object.defineProperty(socket, 'address', { configurable: true, writable: true, value: () => ({ ...local }) });
}

const SOCK_DIAG_BY_FAMILY = 20;
const NLM_F_REQUEST_DUMP = 0x1 | 0x300;
const AF_INET6 = 10;
const IPPROTO_TCP = 6;
const INET_DIAG_REQ_SIZE = 56;
const DIAG_SEQ = 1;

/** inet_diag_req_v2 for every TCP/IPv6 socket, whatever its state. */
function tcp6DumpRequest(): Buffer {
  const header = Buffer.alloc(INET_DIAG_REQ_SIZE);
  header.writeUInt8(AF_INET6, 0);
  header.writeUInt8(IPPROTO_TCP, 1);
  header.writeUInt32LE(0xffffffff, 4);
  return encodeMessage({ type: SOCK_DIAG_BY_FAMILY, flags: NLM_F_REQUEST_DUMP, header, what: 'dump TCP sockets' }, DIAG_SEQ, 0);
}

/**
 * The peer of an accepted TCP socket, by inode, from a sock_diag dump on a
 * NETLINK_SOCK_DIAG socket made in the namespace. Synchronous (the kernel
 * answers a dump as it is read), so that a getter can answer at once.
 */
export function tcp6PeerOf(diagFd: number, inode: number): { address: string; port: number } | undefined {
  const replies = callNative(() => native().netlinkTransact(diagFd, tcp6DumpRequest(), DIAG_SEQ, 1));
  for (const { type, payload } of splitMessages(replies ?? Buffer.alloc(0))) {
    if (type !== SOCK_DIAG_BY_FAMILY || payload.readUInt32LE(68) !== inode) continue;
    return { address: hexToIpv6(payload.toString('hex', 24, 40)), port: payload.readUInt16BE(6) };
  }
  return undefined;
}

/**
 * For a server listening on a zoned link-local address: its connections'
 * ends named as the namespace names them (Node would name the peer's zone in
 * the host, wrongly or with ENXIO). Every link-local peer arrives on the
 * server's interface, which its bind tied it to.
 */
export function reportAcceptedAddresses(socket: { _handle?: { fd?: number } }, diagFd: number, iface: ZoneInterface, local: AddressInfo): void {
  let remote: AddressInfo | undefined;
  const peer = (): AddressInfo | undefined => {
    if (remote !== undefined) return remote;
    const fd = socket._handle?.fd;
    if (fd === undefined || fd < 0) return undefined;
    const found = tcp6PeerOf(diagFd, fs().fstatSync(fd).ino);
    if (found === undefined) return undefined;
    remote = { address: isLinkLocal(found.address) ? `${found.address}%${iface.name}` : found.address, family: 'IPv6', port: found.port };
    return remote;
  };
  const getters: Record<string, () => unknown> = {
    localAddress: () => local.address,
    localPort: () => local.port,
    localFamily: () => 'IPv6',
    remoteAddress: () => peer()?.address,
    remotePort: () => peer()?.port,
    remoteFamily: () => (peer() ? 'IPv6' : undefined),
  };
  for (const [key, get] of Object.entries(getters)) Object.defineProperty(socket, key, { configurable: true, get });
  Object.defineProperty(socket, 'address', { configurable: true, writable: true, value: () => ({ ...local }) });
}
