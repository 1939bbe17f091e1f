// One netlink socket bound to one network namespace, and the request/reply
// discipline on it: per-handle sequence numbers, several requests in one
// sendmsg, every reply drained to its terminal message (an undrained dump
// makes the next one fail with EBUSY), interrupted dumps retried.
//
// Why hand-written netlink rather than an npm library: the socket must be
// created inside the target namespace by the addon's own thread and then used
// from the main thread; no maintained npm netlink library adopts a socket made
// elsewhere (the `netlink` package opens its own, in the caller's namespace,
// and is early-stage), and the rtnetlink subset needed here is small.
import { ErrorCodes, NetnsError, netnsError } from '../core/errors.js';
import { isNsHandle, type NsHandle } from '../core/handle.js';
import { resolveNamespacePath } from '../core/names.js';
import { native } from '../core/native.js';
import type { Attribute } from './attributes.js';
import { NETLINK_NETFILTER, NETLINK_ROUTE, NLMSG_ERROR, RTM_BASE, RTM_DELLINK, RTM_NEWLINK, NLM_F_ACK, NLM_F_CREATE, NLM_F_DUMP, NLM_F_DUMP_INTR, NLM_F_REQUEST } from './constants.js';
import { encodeMessages, isTerminal, messageError, splitMessages, type NetlinkMessage, type NetlinkRequest } from './message.js';
import { leaseNamespaceFd } from './namespace-fd.js';
import { nativeTransport, type NetlinkTransport } from './transport.js';
import { own } from './validate.js';

/** As CNI's pkg/netlinksafe: a dump interrupted this many times in a row is given up. */
export const DUMP_ATTEMPTS = 5;

// An ACK takes about a kilobyte of receive buffer; with the default rmem_max
// the socket holds a few hundred.
export const MAX_BATCH = 128;

/** Options of openNetlink() / NetlinkHandle.open(): the transport (for tests), the family and which types are GETs. */
export interface NetlinkHandleOptions {
  /** Replaces the addon (unit tests). */
  transport?: NetlinkTransport;
  /** The netlink family; NETLINK_ROUTE unless said (nftables uses NETLINK_NETFILTER). */
  protocol?: number;
  /** Which message types are GETs, which alone may be dumped; rtnetlink's rule (2 modulo 4) unless said. */
  isGet?: (type: number) => boolean;
}

/** The outcome of one request of a batch. */
export type Settled =
  | {
      /** The kernel accepted the request. */
      ok: true;
      /** Its replies, without the terminal ACK or DONE; none for a request only acknowledged. */
      messages: NetlinkMessage[];
    }
  | {
      /** The kernel refused the request, or its answer was malformed. */
      ok: false;
      /** The kernel's errno name as code (its extended-ACK text in `extack`), or ERR_NETNS_NETLINK_MALFORMED. */
      error: NetnsError;
    };

/**
 * One netlink socket bound to one namespace, and the request/reply discipline on
 * it: the raw layer under Netlink (`nl.handle`), for messages the typed parts do
 * not cover. Requests and dumps are async (a kernel round trip) and reject with
 * NetnsErrors (the kernel's errno name as code, ERR_NETNS_CLOSED after close());
 * close() is synchronous.
 */
export class NetlinkHandle implements Disposable {
  readonly #transport: NetlinkTransport;
  readonly #fd: number;
  readonly #port: number;
  readonly #isGet: (type: number) => boolean;
  readonly #protocol: number;
  #seq: number;
  #closed = false;
  /** Settles (never rejects) once the transaction running off the JS thread is done: until then the socket is its. */
  #offThread: Promise<void> | undefined;
  /** The namespace of the thread that made the socket on itself (openHere), or undefined when a namespace thread made it. */
  readonly #madeHere: { dev: number; ino: number } | undefined;

  private constructor(transport: NetlinkTransport, fd: number, port: number, protocol: number, isGet: (type: number) => boolean, madeHere?: { dev: number; ino: number }) {
    this.#transport = transport;
    this.#madeHere = madeHere;
    this.#protocol = protocol;
    this.#fd = fd;
    this.#port = port;
    this.#isGet = isGet;
    // Like iproute2 (time-based start): replies to an earlier process's socket
    // that happened to get the same port id are then unlikely to match.
    this.#seq = Math.floor(Date.now() / 1000) >>> 0;
  }

  /**
   * A NETLINK_ROUTE socket inside `target`'s namespace (a NetNS, or a name or
   * path as withNetNS takes), or, without one, the namespace of the calling
   * thread (on the main thread: the process's). Async. When the target is the
   * calling thread's own namespace (or there is none) the socket is made right
   * here, with no namespace thread and no setns, so a user without
   * CAP_SYS_ADMIN can read links, addresses and routes; changes still need
   * CAP_NET_ADMIN and are refused by the kernel with EPERM.
   */
  static async open(target?: NsHandle | string, options?: NetlinkHandleOptions): Promise<NetlinkHandle> {
    const { transport, protocol, isGet } = checkOptions(options);
    const here = transport.openHere ? callersNamespaceIf(target) : undefined;
    if (here) {
      const socket = transport.openHere!(protocol);
      return new NetlinkHandle(transport, socket.fd, socket.portId, protocol, isGet, here);
    }
    const socket = await openInside(transport, target, protocol);
    return new NetlinkHandle(transport, socket.fd, socket.portId, protocol, isGet);
  }

  /** The socket's port id (from getsockname; not necessarily the pid). Replies and events caused by this socket carry it. */
  get portId(): number {
    return this.#port;
  }

  /** The socket's descriptor, owned by this handle (a watcher finds the namespace through it). */
  get fd(): number {
    return this.#fd;
  }

  /** Whether close() was called. */
  get closed(): boolean {
    return this.#closed;
  }

  /**
   * @internal Whether the socket is in the calling thread's namespace because
   * it was made on a thread of that namespace without a switch: a watcher then
   * makes its own socket the same way (SIOCGSKNS would need CAP_NET_ADMIN).
   */
  get inCallersNamespace(): boolean {
    if (this.#madeHere === undefined) return false;
    const now = callersIdentity();
    return now !== undefined && now.dev === this.#madeHere.dev && now.ino === this.#madeHere.ino;
  }

  /**
   * Idempotent. An nf_tables socket is closed off the calling thread: its
   * release waits for the kernel to finish destroying what the last commit
   * replaced (nf_tables flushes that work, an RCU grace period of ~7 ms), which
   * would stall the caller, and the event loop of a process serving many
   * calls. The descriptor is freed a moment later, as Node frees its sockets'.
   */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    const free = () => this.#transport.close(this.#fd, this.#protocol === NETLINK_NETFILTER);
    // A transaction off the thread still uses the descriptor: its number must not be reused under it.
    if (this.#offThread) void this.#offThread.then(free);
    else free();
  }

  /** close(), for `using`. */
  [Symbol.dispose](): void {
    this.close();
  }

  /**
   * Sends the requests in one sendmsg (chunks of MAX_BATCH), each with its own
   * seq (NLM_F_ACK only when a dump is among them: see #settled), and settles
   * each by its own answer. rtnetlink is not transactional: a failed request
   * does not undo the others of its batch.
   */
  async requestSettled(requests: readonly NetlinkRequest[]): Promise<Settled[]> {
    return this.#offThread === undefined && !this.#slow(requests) ? this.#settled(requests) : this.#settledInTurn(requests);
  }

  /** As requestSettled, but rejects with the first failure. Returns each request's non-terminal replies. */
  request(requests: readonly NetlinkRequest[]): Promise<NetlinkMessage[][]> {
    if (this.#offThread !== undefined || this.#slow(requests)) return this.#settledInTurn(requests).then(messagesOrThrow);
    // Not async: the answer is there when the call returns (see transport.ts),
    // and an async frame would cost every request another turn of the queue.
    try {
      return Promise.resolve(messagesOrThrow(this.#settled(requests)));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * A link made or deleted: the kernel holds sendmsg for milliseconds (RTNL,
   * RCU grace periods; ~3 ms to make a veth, ~20 ms to delete one), which on
   * the JS thread would stall every other call of the process. Anything
   * else takes microseconds, less than a thread's start and the loop's turn.
   */
  #slow(requests: readonly NetlinkRequest[]): boolean {
    if (this.#protocol !== NETLINK_ROUTE || this.#transport.transactOffThread === undefined) return false;
    return requests.some((request) => request.type === RTM_DELLINK || (request.type === RTM_NEWLINK && (request.flags & NLM_F_CREATE) !== 0));
  }

  /** After any transaction off the thread (requests keep their order on the socket), on the thread or off it. */
  async #settledInTurn(requests: readonly NetlinkRequest[]): Promise<Settled[]> {
    while (this.#offThread !== undefined) await this.#offThread;
    if (!this.#slow(requests)) return this.#settled(requests);
    const running = this.#settledOffThread(requests);
    const done: Promise<void> = running.then(
      () => this.#doneOffThread(done),
      () => this.#doneOffThread(done),
    );
    this.#offThread = done;
    return running;
  }

  #doneOffThread(done: Promise<void>): void {
    if (this.#offThread === done) this.#offThread = undefined;
  }

  async #settledOffThread(requests: readonly NetlinkRequest[]): Promise<Settled[]> {
    this.#assertOpen(requests[0]?.what ?? 'request');
    const quiet = this.#quiet(requests);
    const replies: NetlinkMessage[][] = [];
    for (const batch of this.#batches(requests, quiet ? NLM_F_REQUEST : NLM_F_REQUEST | NLM_F_ACK, quiet)) {
      const { wire, firstSeq, count } = batch;
      replies.push(...this.#grouped(batch, await this.#transport.transactOffThread!(this.#fd, wire, firstSeq, count, quiet)));
    }
    return requests.map((request, i) => settle(replies[i]!, request.what, quiet));
  }

  /**
   * @internal Sends the requests in one sendmsg whatever their number, without
   * NLM_F_ACK, and settles each: a request without an answer succeeded. For
   * a netfilter batch, which is atomic only within one sendmsg (no chunks).
   * Synchronous, as nftables/batch.ts's commit() is written; kept out of the
   * public types, where every netlink request is async.
   */
  requestBatch(requests: readonly NetlinkRequest[]): Settled[] {
    this.#assertOpen(requests[0]?.what ?? 'request');
    if (requests.length === 0) return [];
    const replies = this.#roundTrip(this.#encode(requests, NLM_F_REQUEST, true));
    return requests.map((request, i) => settle(replies[i]!, request.what, true));
  }

  #settled(requests: readonly NetlinkRequest[]): Settled[] {
    const quiet = this.#quiet(requests);
    const replies = this.#transact(requests, quiet ? NLM_F_REQUEST : NLM_F_REQUEST | NLM_F_ACK, quiet);
    return requests.map((request, i) => settle(replies[i]!, request.what, quiet));
  }

  /** No ACK asked for unless a dump is among them: see "quiet" in native/netlink.h. */
  #quiet(requests: readonly NetlinkRequest[]): boolean {
    return !requests.some((request) => this.#isDump(request));
  }

  /**
   * A whole dump: every part, read to NLMSG_DONE. Restarted when a part carries
   * NLM_F_DUMP_INTR (the table changed meanwhile, so the parts may disagree);
   * after DUMP_ATTEMPTS interrupted dumps, rejects with
   * ERR_NETNS_NETLINK_DUMP_INTERRUPTED rather than return an inconsistent view.
   * `acceptInterrupted`: return the first dump however it was marked, for a
   * caller that knows what it reads cannot have changed (the mark is per
   * namespace: any change anywhere in it sets it).
   */
  async dump(type: number, header: Buffer, attributes: readonly Attribute[], what: string, options: { acceptInterrupted?: boolean } = {}): Promise<NetlinkMessage[]> {
    const acceptInterrupted = acceptsInterrupted(options, what);
    // Only a GET (RTM_GET*: 2 modulo 4) is answered as a dump; anything else would be applied, and then wait for a DONE that never comes.
    if (!this.#isDump({ type, flags: NLM_F_DUMP, header, what })) throw netnsError(ErrorCodes.NETLINK_INVALID, `netlink: ${what}: message type ${type} is not a GET request and cannot be dumped`);
    const request: NetlinkRequest = { type, flags: NLM_F_REQUEST | NLM_F_DUMP, header, attributes, what };
    while (this.#offThread !== undefined) await this.#offThread;
    for (let attempt = 1; attempt <= DUMP_ATTEMPTS; attempt++) {
      const [replies] = this.#transact([request], 0, false);
      const settled = settle(replies!, what, false);
      if (!settled.ok) throw settled.error;
      if (acceptInterrupted || !replies!.some((m) => (m.flags & NLM_F_DUMP_INTR) !== 0)) return settled.messages;
    }
    throw netnsError(
      ErrorCodes.NETLINK_DUMP_INTERRUPTED,
      `netlink: ${what}: the dump was interrupted by concurrent changes ${DUMP_ATTEMPTS} times in a row`,
    );
  }

  /**
   * The replies grouped by request, in order. A large batch goes in chunks:
   * the kernel answers a whole sendmsg at once, and replies beyond the
   * socket's receive buffer would be dropped (ENOBUFS) after the changes
   * were made. `flags` are added to every request's own.
   */
  #transact(requests: readonly NetlinkRequest[], flags: number, quiet: boolean): NetlinkMessage[][] {
    this.#assertOpen(requests[0]?.what ?? 'request');
    if (requests.length === 0) return [];
    if (requests.length <= MAX_BATCH) return this.#roundTrip(this.#encode(requests, flags, quiet));
    return this.#batches(requests, flags, quiet).flatMap((chunk) => this.#roundTrip(chunk));
  }

  /**
   * The requests encoded in chunks of MAX_BATCH. Every chunk is encoded, and
   * so checked, before the first is sent: bad input in a later chunk must not
   * come after changes already made.
   */
  #batches(requests: readonly NetlinkRequest[], flags: number, quiet: boolean): EncodedBatch[] {
    const chunks: EncodedBatch[] = [];
    for (let start = 0; start < requests.length; start += MAX_BATCH) chunks.push(this.#encode(requests.slice(start, start + MAX_BATCH), flags, quiet));
    return chunks;
  }

  #encode(requests: readonly NetlinkRequest[], flags: number, quiet: boolean): EncodedBatch {
    const firstSeq = this.#nextSeqs(requests.length);
    // nlmsg_pid 0 in requests, as iproute2 sends them: the kernel knows the sender.
    return { wire: encodeMessages(requests, firstSeq, flags), firstSeq, count: requests.length, quiet };
  }

  /** One sendmsg and its replies, grouped by request. */
  #roundTrip(batch: EncodedBatch): NetlinkMessage[][] {
    const { wire, firstSeq, count, quiet } = batch;
    return this.#grouped(batch, this.#transport.transact(this.#fd, wire, firstSeq, count, quiet));
  }

  /** A batch's replies, grouped by request. */
  #grouped({ firstSeq, count }: EncodedBatch, reply: Buffer | null): NetlinkMessage[][] {
    const groups: NetlinkMessage[][] = [];
    for (let i = 0; i < count; i++) groups.push(reply === null ? [ACKNOWLEDGED] : []);
    if (reply === null) return groups;
    for (const message of splitMessages(reply)) {
      const index = (message.seq - firstSeq) >>> 0;
      if (index < count) groups[index]!.push(message);
    }
    return groups;
  }

  // NLM_F_ROOT / MATCH mean dump only on a GET: on a NEW the same bits are REPLACE / EXCL.
  #isDump(request: NetlinkRequest): boolean {
    return this.#isGet(request.type) && (request.flags & NLM_F_DUMP) !== 0;
  }

  #nextSeqs(count: number): number {
    // Seqs wrap at 2^32; a batch never straddles the wrap so they stay consecutive.
    if (this.#seq + count > 0xffffffff) this.#seq = 1;
    const first = this.#seq;
    this.#seq += count;
    return first;
  }

  #assertOpen(what: string): void {
    if (this.#closed) throw netnsError(ErrorCodes.CLOSED, `netlink: ${what}: the netlink handle has been closed`);
  }
}

interface EncodedBatch {
  wire: Buffer;
  firstSeq: number;
  count: number;
  /** Sent without NLM_F_ACK: a request with no reply succeeded. */
  quiet: boolean;
}

/**
 * rtnetlink's GETs: RTM_GETLINK, GETADDR, GETROUTE, GETNEIGH... are 2 modulo 4.
 * Types below RTM_BASE are netlink's own (NOOP, ERROR...): the kernel answers none of them.
 */
function isRouteGet(type: number): boolean {
  return type >= RTM_BASE && (type & 3) === 2;
}

function messagesOrThrow(settled: Settled[]): NetlinkMessage[][] {
  return settled.map((s) => {
    if (!s.ok) throw s.error;
    return s.messages;
  });
}

/** What a bare ACK reads as, when the transport says that was all (quiet: that nothing failed). */
const ACKNOWLEDGED: NetlinkMessage = Object.freeze({ type: NLMSG_ERROR, flags: 0, seq: 0, port: 0, payload: Buffer.alloc(4) });

/** A request's answer: an error, or its non-terminal messages. Quiet: no answer but a failure's ends in a terminal message. */
function settle(replies: NetlinkMessage[], what: string, quiet: boolean): Settled {
  if (replies.length === 1 && replies[0] === ACKNOWLEDGED) return { ok: true, messages: [] };
  for (const message of replies) {
    const error = messageError(message, what);
    if (error) return { ok: false, error };
  }
  if (!quiet && !replies.some(isTerminal)) {
    const error = netnsError(ErrorCodes.NETLINK_MALFORMED, `netlink: ${what}: the kernel's answer did not end`);
    return { ok: false, error: error as NetnsError };
  }
  return { ok: true, messages: replies.filter((m) => !isTerminal(m)) };
}

/** A socket made by the addon's namespace thread inside `target` (the calling thread's namespace when there is none). */
async function openInside(transport: NetlinkTransport, target: NsHandle | string | undefined, protocol: number): Promise<{ fd: number; portId: number }> {
  // thread-self, not self: inside a withNetNS worker the calling thread's
  // namespace is the switched one, and that is the one meant.
  using ns = leaseNamespaceFd(target === undefined ? '/proc/thread-self/ns/net' : target, 'netlink');
  return await transport.open(ns.fd, protocol);
}

/**
 * The calling thread's namespace if `target` is it (no target: it is), else
 * undefined. Anything that cannot be told (a closed handle, a bad path) goes
 * the namespace thread's way, which reports it.
 */
function callersNamespaceIf(target: unknown): { dev: number; ino: number } | undefined {
  const own = callersIdentity();
  if (own === undefined || target === undefined) return own;
  try {
    let identity: { dev: number; ino: number };
    if (isNsHandle(target)) {
      if (target.closed) return undefined;
      identity = { dev: target.dev, ino: target.inode };
    } else if (typeof target === 'string') {
      identity = native().openNetnsIdentity(resolveNamespacePath(target));
    } else {
      return undefined;
    }
    return own.dev === identity.dev && own.ino === identity.ino ? own : undefined;
  } catch {
    return undefined;
  }
}

/** The namespace of the calling thread (/proc/thread-self/ns/net), or undefined if it cannot be read. */
function callersIdentity(): { dev: number; ino: number } | undefined {
  try {
    return native().threadNetns();
  } catch {
    return undefined;
  }
}

/** The options with their defaults, each checked (own properties only: a polluted prototype must not supply a transport). */
function checkOptions(options: unknown): Required<NetlinkHandleOptions> {
  if (options === undefined) return { transport: nativeTransport, protocol: NETLINK_ROUTE, isGet: isRouteGet };
  if (typeof options !== 'object' || options === null || Array.isArray(options)) throw badOption('the options must be an object');
  const { transport, protocol, isGet } = own(options as NetlinkHandleOptions);
  const isTransport = (t: unknown): t is NetlinkTransport =>
    typeof t === 'object' && t !== null && ['open', 'transact', 'close'].every((name) => typeof (t as Record<string, unknown>)[name] === 'function');
  if (transport !== undefined && !isTransport(transport)) throw badOption('transport must have open, transact and close functions');
  // MAX_LINKS: netlink families are 0-31.
  if (protocol !== undefined && (!Number.isInteger(protocol) || protocol < 0 || protocol > 31)) throw badOption(`protocol must be a netlink family from 0 to 31, got ${String(protocol)}`);
  if (isGet !== undefined && typeof isGet !== 'function') throw badOption('isGet must be a function');
  return { transport: transport ?? nativeTransport, protocol: protocol ?? NETLINK_ROUTE, isGet: isGet ?? isRouteGet };
}

function badOption(message: string): NetnsError {
  return netnsError(ErrorCodes.INVALID_ARG, `netlink: ${message}`) as NetnsError;
}

/** dump's option, read as an own property: an inherited acceptInterrupted must not loosen every dump. */
function acceptsInterrupted(options: unknown, what: string): boolean {
  const value = typeof options === 'object' && options !== null ? own(options as { acceptInterrupted?: unknown }).acceptInterrupted : options;
  if (value === undefined || typeof value === 'boolean') return value === true;
  throw netnsError(ErrorCodes.INVALID_ARG, `netlink: ${what}: dump options must be an object whose acceptInterrupted is true or false`);
}
