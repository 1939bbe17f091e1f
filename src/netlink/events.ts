// rtnetlink events of one namespace, as an object-mode Readable: `for await`
// (leaving the loop closes the socket), `.on('data')`, backpressure, and
// ref()/unref() as a net.Socket has them.
//
// Each watcher has its own socket, made inside the namespace of the Netlink it
// came from and joined to the multicast groups asked for. With `existing`, it
// subscribes first and dumps after (as vishvananda/netlink's ListExisting and
// pyroute2 do), so nothing is lost in between: an event may repeat what the
// dump already showed, and applying events in order converges. When the kernel
// drops events for want of buffer room (ENOBUFS) the stream says so with an
// `overflow` event, and, with `existing`, dumps again.
//
// node:stream is loaded when the first watcher is made, not with this module
// (which index.ts, and so every netlink user, imports): a CNI plugin's ADD
// uses netlink but watches nothing, and the streams were a tenth of its
// instructions. The class is joined to Readable (prototype and statics) then;
// no instance can exist before, the constructor being private.
import type { Readable } from 'node:stream';
import { stream } from '../core/builtins.js';
import { callNative, ErrorCodes, fromNative, kindOf, netnsError, NetnsError } from '../core/errors.js';
import { refuseUnknownKeys } from '../core/known-keys.js';
import { native, type NativeFdWatch } from '../core/native.js';
import { parseAddressMessage, type Address, type Addresses } from './addresses.js';
import * as C from './constants.js';
import type { NetlinkHandle } from './handle.js';
import { parseLink, type Link, type Links } from './links.js';
import { splitMessages, type NetlinkMessage } from './message.js';
import { parseNeighbour, type Neighbour, type Neighbours } from './neighbours.js';
import { parseRoute, type Route, type Routes } from './routes.js';
import { nativeTransport } from './transport.js';
import { own } from './validate.js';

/** What a watcher needs of the Netlink it comes from (index.ts imports this file, not the reverse). */
export interface WatchSource {
  readonly handle: NetlinkHandle;
  readonly links: Pick<Links, 'list'>;
  readonly addresses: Pick<Addresses, 'list'>;
  readonly routes: Pick<Routes, 'list'>;
  readonly neighbours: Pick<Neighbours, 'list'>;
}

/** 'existing': from the dump; 'new': added or changed (RTM_NEW*); 'delete': removed. */
export type EventAction = 'existing' | 'new' | 'delete';

/** What a NetlinkWatcher yields: a link, address, route or neighbour change, the end of the initial dump, or an overflow. */
export type NetlinkEvent =
  | {
      /** A link changed (WatchOptions.links). */
      type: 'link';
      /** Listed, added or changed, or removed. */
      action: EventAction;
      /** The link as the message describes it (as it was, for a removal). */
      link: Link;
    }
  | {
      /** An address changed (WatchOptions.addresses). */
      type: 'address';
      /** Listed, added or changed, or removed. */
      action: EventAction;
      /** The address as the message describes it. */
      address: Address;
    }
  | {
      /** A route changed (WatchOptions.routes). */
      type: 'route';
      /** Listed, added or changed, or removed. */
      action: EventAction;
      /** The route as the message describes it. */
      route: Route;
    }
  | {
      /** A neighbour entry changed (WatchOptions.neighbours). */
      type: 'neighbour';
      /** Listed, added or changed, or removed. */
      action: EventAction;
      /** The entry as the message describes it. */
      neighbour: Neighbour;
    }
  /** The end of a dump's `existing` objects: what follows are changes. */
  | {
      /** The dump is over. */
      type: 'synced';
    }
  /** The kernel dropped events (error.code 'ENOBUFS'); with `existing`, a new dump follows. */
  | {
      /** Events were lost. */
      type: 'overflow';
      /** A NetnsError with code 'ENOBUFS'. */
      error: NetnsError;
    };

/** What nl.watch() reports: the kinds asked for (none: nothing but overflows), and with `existing` the current objects first. */
export interface WatchOptions {
  /** Link changes (RTNLGRP_LINK). */
  links?: boolean;
  /** IPv4 and IPv6 address changes. */
  addresses?: boolean;
  /** IPv4 and IPv6 route changes (cached clones left out). */
  routes?: boolean;
  /** Neighbour and proxy entry changes. */
  neighbours?: boolean;
  /** First the objects there now (action 'existing'), then { type: 'synced' }. Routes of every table; neighbours with the proxy entries. */
  existing?: boolean;
}

type Kind = 'links' | 'addresses' | 'routes' | 'neighbours';

const WATCH_OPTIONS = ['links', 'addresses', 'routes', 'neighbours', 'existing'];

/** watch()'s options as own properties, each a boolean; anything else is ERR_NETNS_INVALID_ARG rather than quietly nothing. */
function checkedWatchOptions(given: unknown): WatchOptions {
  if (given === undefined) return {};
  if (typeof given !== 'object' || given === null || Array.isArray(given)) {
    throw netnsError(ErrorCodes.INVALID_ARG, `watch options must be an object such as { links: true }, got ${kindOf(given)}`);
  }
  const options = own(given) as Record<string, unknown>;
  refuseUnknownKeys(options, WATCH_OPTIONS, 'watch', (message) => netnsError(ErrorCodes.INVALID_ARG, message));
  for (const [key, value] of Object.entries(options)) {
    if (value !== undefined && typeof value !== 'boolean') throw netnsError(ErrorCodes.INVALID_ARG, `watch option ${key} must be a boolean, got ${typeof value}`);
  }
  return options as WatchOptions;
}

/** What each option subscribes to, how its messages become events, and how its objects are listed. */
const KINDS: Record<Kind, {
  groups: number[];
  types: [newType: number, delType: number];
  event(action: EventAction, message: NetlinkMessage): NetlinkEvent | null;
  list(nl: WatchSource): Promise<NetlinkEvent[]>;
}> = {
  links: {
    groups: [1], // RTNLGRP_LINK
    types: [C.RTM_NEWLINK, C.RTM_DELLINK],
    event: (action, m) => ({ type: 'link', action, link: parseLink(m) }),
    list: async (nl) => (await nl.links.list()).map((link) => ({ type: 'link', action: 'existing', link })),
  },
  addresses: {
    groups: [5, 9], // RTNLGRP_IPV4_IFADDR, RTNLGRP_IPV6_IFADDR
    types: [C.RTM_NEWADDR, C.RTM_DELADDR],
    event: (action, m) => ({ type: 'address', action, address: parseAddressMessage(m) }),
    list: async (nl) => (await nl.addresses.list()).map((address) => ({ type: 'address', action: 'existing', address })),
  },
  routes: {
    groups: [7, 11], // RTNLGRP_IPV4_ROUTE, RTNLGRP_IPV6_ROUTE
    types: [C.RTM_NEWROUTE, C.RTM_DELROUTE],
    // Cached clones are left out, as routes.list() leaves them out.
    event: (action, m) => ((m.payload.readUInt32LE(8) & C.RTM_F_CLONED) !== 0 ? null : { type: 'route', action, route: parseRoute(m) }),
    list: async (nl) => (await nl.routes.list({ table: 'all' })).map((route) => ({ type: 'route', action: 'existing', route })),
  },
  neighbours: {
    groups: [3], // RTNLGRP_NEIGH: the cache and the proxy entries
    types: [C.RTM_NEWNEIGH, C.RTM_DELNEIGH],
    event: (action, m) => ({ type: 'neighbour', action, neighbour: parseNeighbour(m) }),
    list: async (nl) =>
      [...(await nl.neighbours.list()), ...(await nl.neighbours.list({ proxy: true }))].map((neighbour) => ({
        type: 'neighbour',
        action: 'existing',
        neighbour,
      })),
  },
};

/** Enough to absorb a burst (a dump of a busy namespace) before reading pauses. */
const HIGH_WATER_MARK = 1024;

/**
 * rtnetlink events of one namespace as an object-mode Readable of NetlinkEvent
 * (`for await`, leaving the loop closes it), made by nl.watch(). close() is
 * synchronous and idempotent; a failed read destroys the stream with a
 * NetnsError.
 */
export class NetlinkWatcher {
  readonly #nl: WatchSource;
  readonly #kinds: Kind[];
  readonly #existing: boolean;
  #watch: NativeFdWatch | undefined;
  /** Events that arrive while a dump is being pushed wait here, to follow it. */
  #held: NetlinkEvent[] | null = null;
  #resyncAgain = false;

  private constructor(nl: WatchSource, kinds: Kind[], existing: boolean) {
    joinReadable().call(this, { objectMode: true, highWaterMark: HIGH_WATER_MARK });
    this.#nl = nl;
    this.#kinds = kinds;
    this.#existing = existing;
  }

  /** What {@link Netlink.watch} calls; `nl` is a Netlink. Call that instead. */
  static async open(nl: WatchSource, given?: WatchOptions): Promise<NetlinkWatcher> {
    if (typeof nl !== 'object' || nl === null || typeof nl.handle !== 'object' || nl.handle === null) {
      throw netnsError(ErrorCodes.INVALID_ARG, 'NetlinkWatcher.open takes a Netlink: call nl.watch(options) instead');
    }
    const options = checkedWatchOptions(given);
    const kinds = (Object.keys(KINDS) as Kind[]).filter((kind) => options[kind] === true);
    const watcher = new NetlinkWatcher(nl, kinds, options.existing === true);
    const fd = await openBeside(nl);
    try {
      callNative(() => native().netlinkSubscribe(fd, kinds.flatMap((kind) => KINDS[kind].groups)));
    } catch (error) {
      nativeTransport.close(fd);
      throw error;
    }
    watcher.#watch = callNative(() => native().netlinkWatch(fd, (error, data) => watcher.#received(error, data)));
    if (watcher.#existing) {
      try {
        await watcher.#sync();
      } catch (error) {
        watcher.destroy();
        throw error;
      }
    }
    return watcher;
  }

  /** The watcher keeps the process alive (the default), as a net.Socket does. */
  ref(): this {
    this.#watch?.ref();
    return this;
  }

  /** The process may exit while this is open; an unreachable unref'd watcher is closed when collected. */
  unref(): this {
    this.#watch?.unref();
    return this;
  }

  /** Idempotent; the same as destroy(). The Netlink it came from stays open. */
  close(): void {
    this.destroy();
  }

  /** @internal Readable's hook: resumes reading the socket. */
  _read(): void {
    this.#watch?.resume();
  }

  /** @internal Readable's hook: stops polling and closes the socket. */
  _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.#watch?.close();
    callback(error);
  }

  #received(error: Error | null, data: Buffer | null): void {
    if (error) return this.#failed(fromNative(error) as NetnsError);
    try {
      for (const message of splitMessages(data!)) this.#emitEvent(this.#toEvent(message));
    } catch (parseError) {
      this.destroy(parseError as Error);
    }
  }

  #toEvent(message: NetlinkMessage): NetlinkEvent | null {
    for (const kind of this.#kinds) {
      const [newType, delType] = KINDS[kind].types;
      if (message.type === newType) return KINDS[kind].event('new', message);
      if (message.type === delType) return KINDS[kind].event('delete', message);
    }
    return null; // NLMSG_NOOP and the like
  }

  #emitEvent(event: NetlinkEvent | null): void {
    if (!event || this.destroyed) return;
    if (this.#held) this.#held.push(event);
    else if (!this.push(event)) this.#watch?.pause();
  }

  #failed(error: NetnsError): void {
    if (error.code !== 'ENOBUFS') return void this.destroy(error);
    this.#emitEvent({ type: 'overflow', error });
    if (!this.#existing) return;
    if (this.#held) this.#resyncAgain = true;
    else this.#sync().catch((syncError: Error) => this.destroy(syncError));
  }

  /** Pushes a dump of every kind watched, then { type: 'synced' }, then what arrived meanwhile. */
  async #sync(): Promise<void> {
    do {
      this.#resyncAgain = false;
      this.#held = [];
      const lists = [];
      for (const kind of this.#kinds) lists.push(...(await KINDS[kind].list(this.#nl)));
      const held = this.#held;
      this.#held = null;
      for (const event of [...lists, { type: 'synced' } as const, ...held]) this.#emitEvent(event);
    } while (this.#resyncAgain && !this.destroyed);
  }
}

// Readable's members, NetlinkWatcher's from its first instance on (joinReadable).
export interface NetlinkWatcher extends Readable {}

/** Readable, NetlinkWatcher's base from the first call on. */
function joinReadable(): typeof Readable {
  const { Readable } = stream();
  if (Object.getPrototypeOf(NetlinkWatcher) !== Readable) {
    Object.setPrototypeOf(NetlinkWatcher.prototype, Readable.prototype);
    Object.setPrototypeOf(NetlinkWatcher, Readable);
  }
  return Readable;
}

/** A new NETLINK_ROUTE socket in the namespace of `nl`'s socket, which may outlive its NetNS handle. */
async function openBeside(nl: WatchSource): Promise<number> {
  // A closed handle's descriptor number may belong to something else by now.
  if (nl.handle.closed) throw netnsError(ErrorCodes.CLOSED, 'netlink: watch: the netlink handle has been closed');
  // Made without a switch, as the handle's own was (no privilege needed to listen to one's own namespace).
  if (nl.handle.inCallersNamespace && nativeTransport.openHere) return nativeTransport.openHere(C.NETLINK_ROUTE).fd;
  const nsFd = callNative(() => native().socketNetns(nl.handle.fd));
  try {
    return (await nativeTransport.open(nsFd, C.NETLINK_ROUTE)).fd;
  } finally {
    nativeTransport.close(nsFd);
  }
}
