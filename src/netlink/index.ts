/**
 * rtnetlink inside a namespace, without an `ip` process.
 *
 * {@link openNetlink}(ns) is the shape of vishvananda/netlink's
 * NewHandleAt(ns) and pyroute2's IPRoute(netns=...): a handle whose socket was
 * made inside the namespace, with typed operations grouped by object.
 *
 * Guide: [Netlink](../../docs/netlink.md).
 *
 * @module netns/netlink
 */
import { ErrorCodes, netnsError } from '../core/errors.js';
import type { NsHandle } from '../core/handle.js';
import { Addresses } from './addresses.js';
import { Classes } from './classes.js';
import { NetlinkWatcher, type WatchOptions } from './events.js';
import { NetlinkHandle, type NetlinkHandleOptions } from './handle.js';
import { Filters } from './filters.js';
import { Links } from './links.js';
import { Neighbours } from './neighbours.js';
import { Nsids } from './nsids.js';
import { Qdiscs } from './qdiscs.js';
import { Routes } from './routes.js';

/**
 * rtnetlink on one namespace, grouped by object: links, addresses, routes,
 * neighbours, nsids, traffic control (qdiscs, classes, filters), and watch()
 * for changes. Made by openNetlink().
 * Every request is async and rejects with a NetnsError (the kernel's errno name
 * as code); close() is synchronous and idempotent (`using` works, and so does
 * `await nl.close()`).
 */
export class Netlink implements Disposable {
  /** The raw request/dump layer, for messages the typed parts do not cover. */
  readonly handle: NetlinkHandle;
  /** Network interfaces, as `ip link`. */
  readonly links: Links;
  /** Interface addresses, as `ip address`. */
  readonly addresses: Addresses;
  /** Routes, as `ip route`. */
  readonly routes: Routes;
  /** Neighbour (ARP / NDP) entries, as `ip neigh`. */
  readonly neighbours: Neighbours;
  /** Network namespace ids, as this handle's namespace assigns them. */
  readonly nsids: Nsids;
  /** Queueing disciplines, as `tc qdisc`. */
  readonly qdiscs: Qdiscs;
  /** Traffic classes (htb), as `tc class`. */
  readonly classes: Classes;
  /** Filters (u32, matchall), as `tc filter`. */
  readonly filters: Filters;

  constructor(handle: NetlinkHandle) {
    if (!(handle instanceof NetlinkHandle)) throw netnsError(ErrorCodes.INVALID_ARG, 'new Netlink() takes a NetlinkHandle: open one with openNetlink()');
    this.handle = handle;
    this.links = new Links(handle);
    this.addresses = new Addresses(handle, this.links);
    this.routes = new Routes(handle, this.links);
    this.neighbours = new Neighbours(handle, this.links);
    this.nsids = new Nsids(handle);
    this.qdiscs = new Qdiscs(handle, this.links);
    this.classes = new Classes(handle, this.links);
    this.filters = new Filters(handle, this.links);
  }

  /**
   * Link, address and route changes in this handle's namespace, as a Readable
   * of NetlinkEvent (see events.ts), on a socket of its own. Its dumps
   * (`existing`, and resyncs after an overflow) go through this handle.
   */
  watch(options?: WatchOptions): Promise<NetlinkWatcher> {
    return NetlinkWatcher.open(this, options);
  }

  /**
   * Synchronous and idempotent: lets go of the socket (it removes nothing from
   * the system). Requests made afterwards reject with ERR_NETNS_CLOSED. The
   * namespace handle it was opened with stays open; watchers made by watch()
   * have sockets of their own and stay open too.
   */
  close(): void {
    this.handle.close();
  }

  /** close(), for `using`. */
  [Symbol.dispose](): void {
    this.close();
  }
}

/**
 * A netlink handle inside `target`'s namespace (a NetNS, or a name or path as
 * withNetNS takes), or without one the calling thread's namespace. Async. The
 * NetNS may be closed afterwards: the socket keeps its namespace for life.
 * With no target, or one that is the calling thread's own namespace, the
 * socket is made on the calling thread with no setns, so a user without
 * CAP_SYS_ADMIN can read (and watch) links, addresses and routes; changes
 * still need CAP_NET_ADMIN (EPERM). Another namespace needs CAP_SYS_ADMIN
 * (EPERM from setns otherwise); a missing name is ENOENT.
 */
export async function openNetlink(target?: NsHandle | string, options?: NetlinkHandleOptions): Promise<Netlink> {
  return new Netlink(await NetlinkHandle.open(target, options));
}

export { NetlinkHandle, DUMP_ATTEMPTS } from './handle.js';
export type { NetlinkHandleOptions, Settled } from './handle.js';
export type { NetlinkTransport } from './transport.js';
export type { NetlinkMessage, NetlinkRequest } from './message.js';
export { attr, AttributeMap } from './attributes.js';
export type { Attribute } from './attributes.js';
export type { Link, LinkChanges, LinkRef, LinkSpec, Links } from './links.js';
export type { Address, AddressFilter, AddressFlag, AddressSpec, Addresses, Family, ScopeName } from './addresses.js';
export type { Neighbour, NeighbourFilter, NeighbourFlag, NeighbourSpec, NeighbourState, Neighbours } from './neighbours.js';
export type { NextHop, Route, RouteFilter, RouteProtocol, RouteSpec, RouteType, Routes } from './routes.js';
export type { NamedNamespace, NsidEntry, NsidFilter, NsidTarget, Nsids } from './nsids.js';
export type {
  ClsactQdiscSpec,
  HtbOptions,
  HtbQdiscSpec,
  IngressQdiscSpec,
  NetemOptions,
  NetemQdiscSpec,
  PfifoOptions,
  PfifoQdiscSpec,
  Qdisc,
  QdiscFilter,
  QdiscParent,
  QdiscSelector,
  QdiscSpec,
  Qdiscs,
  TbfOptions,
  TbfQdiscSpec,
} from './qdiscs.js';
export type { ClassFilter, ClassSelector, ClassSpec, Classes, HtbClassOptions, TcClass } from './classes.js';
export type { Filter, FilterParent, FilterProtocol, FilterQuery, FilterSelector, FilterSpec, Filters, MatchallFilterSpec, U32FilterSpec, U32Match } from './filters.js';
export type { TcHandle } from './tc-message.js';
export { NetlinkWatcher } from './events.js';
export type { EventAction, NetlinkEvent, WatchOptions } from './events.js';
export { ErrorCodes, NetnsError } from '../core/errors.js';
