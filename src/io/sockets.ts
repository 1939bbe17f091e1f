// Sockets created inside a namespace on the addon's I/O threads and handed to
// Node as ordinary objects. A socket keeps the namespace it was created in, so
// only creation (and binding) needs the namespace; all I/O then runs on the
// calling thread's event loop.
import type dgram from 'node:dgram';
import type { EventEmitter } from 'node:events';
import type net from 'node:net';
import { dgram as loadDgram, net as loadNet } from '../core/builtins.js';
import { ErrorCodes, fromNodeError, kindOf, netnsError, NetnsError, systemError } from '../core/errors.js';
import { native } from '../core/native.js';
import type { NsHandle } from '../core/handle.js';
import { checkPort, checkUnixPath, numericHostFamily } from './address.js';
import { runIo } from './run-io.js';
import {
  isLinkLocal,
  localPortOf,
  reportAcceptedAddresses,
  reportAddress,
  reportSocketAddresses,
  resolveZone,
  splitZone,
  type ZoneInterface,
} from './zone.js';

const DOMAINS = { unix: 1, inet: 2, inet6: 10, netlink: 16, packet: 17 } as const;
const TYPES = { stream: 1, dgram: 2, raw: 3, seqpacket: 5 } as const;
const SOCK_NONBLOCK = 0o4000;
const EADDRNOTAVAIL = 99;
const NETLINK_SOCK_DIAG = 4;
const ETIMEDOUT = 110;
const DEFAULT_BACKLOG = 511;
const DEFAULT_CONNECT_TIMEOUT_MS = 30_000;
// socket(2) takes an int; families check the range further themselves.
const PROTOCOL_MAX = 2 ** 31 - 1;
// setTimeout's limit: longer delays fire at once.
const TIMEOUT_MAX = 2 ** 31 - 1;

/**
 * The address family of ns.socket(): unix, inet, inet6, netlink or packet.
 * @useDeclaredType
 */
export type SocketDomain = keyof typeof DOMAINS;
/**
 * The socket type of ns.socket(): stream, dgram, raw or seqpacket.
 * @useDeclaredType
 */
export type SocketType = keyof typeof TYPES;

/** Where ns.listen() binds: a numeric host and port, or a unix path. */
export interface ListenOptions {
  /** Numeric address to bind (default 0.0.0.0). */
  host?: string;
  /** 0 (the default) picks a free port. */
  port?: number;
  /** listen(2)'s queue of connections not yet accepted (default 511, as Node's). */
  backlog?: number;
  /** A unix socket path instead of host/port; a leading '\0' makes it abstract (per namespace). */
  path?: string;
}

/** Where ns.connect() connects: a numeric host (IPv6 may carry a zone, fe80::1%eth0) and port, or a unix path. */
export interface ConnectOptions {
  /** A numeric IPv4 or IPv6 address: a name would be resolved in the host's namespace. */
  host?: string;
  /** 1 to 65535. */
  port?: number;
  /** A unix socket path instead of host/port; a leading '\0' makes it abstract. */
  path?: string;
  /** Give up with ETIMEDOUT after this many ms (default 30,000). */
  timeout?: number;
}

/** Where ns.createSocket() binds its UDP socket. */
export interface UdpOptions {
  /** Numeric address to bind (default 0.0.0.0 or ::). */
  address?: string;
  /** 0 (the default) picks a free port. */
  port?: number;
}

function pick<T extends object>(table: T, key: unknown, what: string): T[keyof T] {
  if (typeof key !== 'string' || !Object.hasOwn(table, key)) {
    throw netnsError(ErrorCodes.INVALID_ARG, `unknown socket ${what} ${JSON.stringify(key)}; expected one of ${Object.keys(table).join(', ')}`);
  }
  return table[key as keyof T];
}

/** A raw socket descriptor (O_CLOEXEC) for libraries Node cannot adopt, e.g. netlink. The caller closes it. */
export function rawSocket(ns: NsHandle, domain: SocketDomain, type: SocketType, protocol = 0): Promise<number> {
  let domainNumber: number;
  let typeNumber: number;
  try {
    domainNumber = pick(DOMAINS, domain, 'domain');
    typeNumber = pick(TYPES, type, 'type');
    if (typeof protocol !== 'number' || !Number.isInteger(protocol) || protocol < 0 || protocol > PROTOCOL_MAX) {
      throw netnsError(ErrorCodes.INVALID_ARG, `protocol must be an integer from 0 to ${PROTOCOL_MAX}, got ${String(protocol)}`);
    }
  } catch (error) {
    return Promise.reject(error);
  }
  return runIo(ns, (fd) => native().ioSocket(fd, domainNumber, typeNumber, protocol));
}

function checkOptionsObject(options: unknown, what: string): void {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw netnsError(ErrorCodes.INVALID_ARG, `${what} options must be an object, got ${kindOf(options)}`);
  }
}

function describe(options: { host?: string; port?: number; path?: string }): string {
  return options.path !== undefined ? JSON.stringify(options.path) : `${options.host}:${options.port}`;
}

// Adds where, as Node does for listen/connect errors.
function withAddress(error: unknown, options: { host?: string; port?: number; path?: string }): unknown {
  if (!(error instanceof NetnsError) || error.errno === undefined) return error;
  error.message = `${error.message} ${describe(options)}`;
  if (options.path === undefined) Object.assign(error, { address: options.host, port: options.port });
  else Object.assign(error, { address: options.path });
  return error;
}

/** Where an error happened, for its message: Node's own would not say which namespace. */
function inNamespace(ns: NsHandle): string {
  return `(in the namespace ${ns.path})`;
}

// The kernel matches an abstract unix name on its length too. Node 20 binds and
// connects one NUL-padded to the whole sun_path (108 bytes), Node 22 and later
// (libuv's uv_pipe_bind2/connect2) with the name's own length: bind as this
// Node connects, so that a plain net.connect in the namespace finds it.
const PADS_ABSTRACT_NAMES = Number(process.versions.node.split('.')[0]) < 22;
const SUN_PATH_BYTES = 108;

function unixBindName(path: string): string {
  if (!path.startsWith('\0') || !PADS_ABSTRACT_NAMES) return path;
  return path + '\0'.repeat(SUN_PATH_BYTES - Buffer.byteLength(path));
}

function bindIn(ns: NsHandle, type: number, target: { host: string; port: number; unix: boolean }, backlog: number) {
  const host = target.unix ? unixBindName(target.host) : target.host;
  return runIo(ns, (fd) => native().ioBind(fd, type, host, target.port, target.unix, backlog)).catch((error) => {
    throw fromNodeError(withAddress(error, target.unix ? { path: target.host } : target), inNamespace(ns));
  });
}

/** Binds and listens inside the namespace, then hands the socket to `server`. */
export async function listenIn<S extends net.Server>(ns: NsHandle, server: S, options: ListenOptions = {}): Promise<S> {
  checkOptionsObject(options, 'listen');
  if (!(server instanceof loadNet().Server)) throw netnsError(ErrorCodes.INVALID_ARG, 'server must be a net.Server (or http.Server)');
  if (server.listening) throw netnsError(ErrorCodes.INVALID_ARG, 'server is already listening');
  const backlog = options.backlog ?? DEFAULT_BACKLOG;
  if (typeof backlog !== 'number' || !Number.isInteger(backlog) || backlog < 0 || backlog > PROTOCOL_MAX) {
    throw netnsError(ErrorCodes.INVALID_ARG, `backlog must be an integer from 0 to ${PROTOCOL_MAX}, got ${String(backlog)}`);
  }
  const target =
    options.path !== undefined
      ? { host: checkUnixPath(options.path), port: 0, unix: true }
      : { host: options.host ?? '0.0.0.0', port: checkPort(options.port), unix: false };
  if (!target.unix) numericHostFamily(target.host);
  const zoned = target.unix ? undefined : await linkLocalZone(ns, target.host);
  const fd = await bindIn(ns, TYPES.stream, target, backlog);
  let diagFd = -1;
  if (zoned) {
    try {
      diagFd = await runIo(ns, (nsFd) => native().ioSocket(nsFd, DOMAINS.netlink, TYPES.raw, NETLINK_SOCK_DIAG));
    } catch (error) {
      native().closeFd(fd);
      throw error;
    }
  }
  const port = zoned && (target.port || (await localPortOf(ns, fd, 'tcp6').catch(closeAnd(fd, diagFd))));
  await adopt(server, (ready) => server.listen({ fd }, ready)).catch((error) => closeAnd(diagFd)(fromNodeError(error, inNamespace(ns))));
  if (zoned) {
    // only while this listen lasts: a later server.listen() elsewhere gets Node's answer again
    const handle = (server as unknown as { _handle: unknown })._handle;
    const current = () => server.listening && (server as unknown as { _handle: unknown })._handle === handle;
    const local = { address: zoned.address, family: 'IPv6' as const, port: port as number };
    reportAddress(server, current, local);
    const onConnection = (socket: net.Socket) => {
      if (current()) reportAcceptedAddresses(socket as unknown as { _handle?: { fd?: number } }, diagFd, zoned.iface, local);
    };
    server.prependListener('connection', onConnection);
    server.once('close', () => {
      server.off('connection', onConnection);
      native().closeFd(diagFd);
    });
  }
  return server;
}

/** For a link-local host with a zone: the address as Node would report it (fe80::1%eth0, the namespace's name), and the interface. */
async function linkLocalZone(ns: NsHandle, host: string): Promise<{ address: string; iface: ZoneInterface } | undefined> {
  const { address, zone } = splitZone(host);
  if (zone === undefined || !isLinkLocal(address)) return undefined;
  const iface = await resolveZone(ns, zone);
  return { address: `${address}%${iface.name}`, iface };
}

function closeAnd(...fds: number[]): (error: unknown) => never {
  return (error) => {
    for (const fd of fds) if (fd >= 0) native().closeFd(fd);
    throw error;
  };
}

/** Connects from inside the namespace; resolves with the connected net.Socket. */
export async function connectIn(ns: NsHandle, options: ConnectOptions): Promise<net.Socket> {
  checkOptionsObject(options, 'connect');
  const timeout = options.timeout ?? DEFAULT_CONNECT_TIMEOUT_MS;
  if (typeof timeout !== 'number' || !Number.isFinite(timeout) || timeout <= 0 || timeout > TIMEOUT_MAX) {
    throw netnsError(ErrorCodes.INVALID_ARG, `timeout must be a number of ms from 1 to ${TIMEOUT_MAX}, got ${String(timeout)}`);
  }
  let domain: number;
  let target: net.NetConnectOpts & { host?: string; port?: number };
  let zoned: { address: string; iface: ZoneInterface; source: string } | undefined;
  if (options.path !== undefined) {
    domain = DOMAINS.unix;
    target = { path: checkUnixPath(options.path) };
  } else {
    domain = numericHostFamily(options.host) === 6 ? DOMAINS.inet6 : DOMAINS.inet;
    if (options.port === undefined || options.port === 0) throw netnsError(ErrorCodes.INVALID_ARG, 'connect needs a port from 1 to 65535 (or a path)');
    const { address, zone } = splitZone(options.host!);
    target = { host: zone === undefined ? options.host! : address, port: checkPort(options.port) };
    if (zone !== undefined) {
      // Node would resolve the zone in the host; the kernel takes the interface
      // from the socket instead when it is bound to a link-local address of it.
      const iface = await resolveZone(ns, zone);
      const source = iface.linkLocal[0];
      if (isLinkLocal(address)) {
        if (source === undefined) throw withAddress(systemError(EADDRNOTAVAIL, 'connect'), options);
        zoned = { address: `${address}%${iface.name}`, iface, source };
      }
    }
  }
  const fd = zoned
    ? await bindIn(ns, TYPES.stream, { host: `${zoned.source}%${zoned.iface.index}`, port: 0, unix: false }, -1)
    : await runIo(ns, (nsFd) => native().ioSocket(nsFd, domain, TYPES.stream | SOCK_NONBLOCK, 0));
  const { Socket } = loadNet();
  const socket = new Socket({ fd });
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(systemError(ETIMEDOUT, 'connect')), timeout);
      socket.once('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
      socket.connect(target, () => {
        clearTimeout(timer);
        resolve();
      });
    });
  } catch (error) {
    socket.destroy();
    throw fromNodeError(withAddress(error, options), inNamespace(ns));
  }
  socket.removeAllListeners('error');
  if (zoned) {
    const localPort = await localPortOf(ns, fd, 'tcp6').catch((error) => {
      socket.destroy();
      throw error;
    });
    reportSocketAddresses(
      socket,
      { address: `${zoned.source}%${zoned.iface.name}`, family: 'IPv6', port: localPort },
      { address: zoned.address, family: 'IPv6', port: target.port! },
    );
  }
  return socket;
}

/** A dgram.Socket bound inside the namespace. */
export async function createUdpSocket(ns: NsHandle, type: 'udp4' | 'udp6', options: UdpOptions = {}): Promise<dgram.Socket> {
  if (type !== 'udp4' && type !== 'udp6') throw netnsError(ErrorCodes.INVALID_ARG, `type must be 'udp4' or 'udp6', got ${JSON.stringify(type)}`);
  checkOptionsObject(options, 'createSocket');
  const host = options.address ?? (type === 'udp6' ? '::' : '0.0.0.0');
  if (numericHostFamily(host) !== (type === 'udp6' ? 6 : 4)) {
    throw netnsError(ErrorCodes.INVALID_ARG, `address ${host} does not match socket type ${type}`);
  }
  const port = checkPort(options.port);
  const zoned = await linkLocalZone(ns, host);
  const fd = await bindIn(ns, TYPES.dgram, { host, port, unix: false }, -1);
  const boundPort = zoned && (port || (await localPortOf(ns, fd, 'udp6').catch(closeAnd(fd))));
  const socket = loadDgram().createSocket(type);
  await adopt(socket, (ready) => socket.bind({ fd }, ready)).catch((error) => {
    throw fromNodeError(error, inNamespace(ns));
  });
  if (zoned) {
    let open = true;
    socket.once('close', () => (open = false));
    reportAddress(socket, () => open, { address: zoned.address, family: 'IPv6', port: boundPort as number });
  }
  return socket;
}

// Hands a fresh descriptor to a Node object, which owns it from then on.
function adopt(emitter: EventEmitter, start: (ready: () => void) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    emitter.once('error', reject);
    start(() => {
      emitter.off('error', reject);
      resolve();
    });
  });
}
