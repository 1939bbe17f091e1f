// Network namespace ids (NSIDs): the number one namespace has for another,
// which `ip netns list` prints as "(id: N)" and `ip link` as link-netnsid.
// RTM_NEWNSID / GETNSID, encoded as `ip netns set / list / list-id` send them
// (iproute2 6.1, captured with strace): rtgenmsg{u8 family AF_UNSPEC} padded
// to 4, the peer as NETNSA_FD (u32: a descriptor of this process, which the
// kernel reads during sendmsg) or NETNSA_PID (u32), NETNSA_NSID (s32, -1:
// "pick one"), NETNSA_TARGET_NSID (s32). An id is the assigning namespace's
// (the socket's, so this handle's) and lives as long as both namespaces:
// nothing takes one back. The kernel assigns one itself when a message must
// name a peer (a veth whose other end is there), so "none" can become an id
// without set() being called.
import { ErrorCodes, netnsError, type NetnsError } from '../core/errors.js';
import { isNsHandle, type NsHandle } from '../core/handle.js';
import { attr, AttributeMap, type Attribute } from './attributes.js';
import * as C from './constants.js';
import { MAX_BATCH, type NetlinkHandle } from './handle.js';
import type { NetlinkMessage, NetlinkRequest } from './message.js';
import { leaseNamespaceFd, type NamespaceFd } from './namespace-fd.js';
import { checkKeys, SPEC_KEYS } from './keys.js';
import { own } from './validate.js';

/** A namespace: a NetNS, a name or path as NetNS.open takes, or a process's (by its pid). */
export type NsidTarget =
  | NsHandle
  | string
  | {
      /** A process whose network namespace is meant. */
      pid: number;
    };

/** One entry of nsids.list(): the id a namespace has for a peer namespace, as `ip netns list-id` prints it. */
export interface NsidEntry {
  /**
   * The id the listing namespace (nl's, or targetNsid's) has for the peer.
   * Absent only from a `nsid` lookup through a targetNsid that has none for it.
   */
  nsid?: number;
  /** With targetNsid: the id nl's namespace has for the same peer, when it has one. */
  currentNsid?: number;
}

/** `ip netns list-id`'s filters. */
export interface NsidFilter {
  /** The ids of the namespace nl's namespace calls this, each with its currentNsid. */
  targetNsid?: number;
  /** Only the namespace nl's namespace calls this: a lookup, ENOENT if there is none. */
  nsid?: number;
}

/** A named namespace, as the run directory lists it. */
export interface NamedNamespace {
  /** The name in the run directory. */
  name: string;
  /** RUN_DIR/NAME, opened to ask for its id. */
  path: string;
}

const MAX_NSID = 0x7fffffff;
/** rtgenmsg padded: where the attributes of a reply start. */
const ATTRIBUTES_AT = 4;

/**
 * Network namespace ids (`nl.nsids`), as the handle's namespace assigns them to
 * peers: `ip netns set` / `list-id`. Every method is async; refusals are
 * NetnsErrors with the errno name as code (EEXIST, ENOENT, EPERM).
 */
export class Nsids {
  readonly #nl: NetlinkHandle;

  constructor(handle: NetlinkHandle) {
    this.#nl = handle;
  }

  /** The id nl's namespace has for `target`; undefined when it has none. */
  async get(target: NsidTarget): Promise<number | undefined> {
    using peer = peerOf(target, 'nsids.get');
    const what = `get the nsid of ${peer.name}`;
    const [replies] = await this.#nl.request([nsidRequest(C.RTM_GETNSID, [peer.attribute], what)]);
    return onlyEntry(replies!, what).nsid;
  }

  /**
   * Assigns `id` ('auto': the lowest free one) to `target` in nl's namespace
   * and resolves with the id assigned, as the kernel echoes it (NLM_F_ECHO:
   * part of its answer, where a second request, by pid, could find another
   * namespace). A target that has an id already is EEXIST, as is an id taken;
   * `extack` has the kernel's words for each. Linux before 5.4 does not echo:
   * there an id asked for is returned as asked, and 'auto' is an error that
   * says the id was assigned.
   */
  async set(target: NsidTarget, id: number | 'auto'): Promise<number> {
    const wanted = id === 'auto' ? C.NETNSA_NSID_NOT_ASSIGNED : checkNsid(id, "an nsid (or 'auto')");
    using peer = peerOf(target, 'nsids.set');
    const what = `set nsid ${String(id)} for ${peer.name}`;
    const attributes = [peer.attribute, attr.s32(C.NETNSA_NSID, wanted)];
    const [echo] = await this.#nl.request([nsidRequest(C.RTM_NEWNSID, attributes, what, C.NLM_F_ECHO)]);
    const echoed = echo!.find((m) => m.type === C.RTM_NEWNSID);
    const assigned = echoed ? parseEntry(echoed).nsid : wanted >= 0 ? wanted : undefined;
    if (assigned === undefined) throw netnsError(ErrorCodes.NETLINK_MALFORMED, `netlink: ${what}: assigned, but the kernel did not echo which id: get() reads it`);
    return assigned;
  }

  /**
   * The ids nl's namespace has assigned, in the kernel's order (ascending), as
   * `ip netns list-id [target-nsid T] [nsid N]`: with targetNsid, the ids of
   * the namespace nl's namespace calls T instead, each with currentNsid; with
   * nsid, only the namespace nl's namespace calls N (its id as the listing
   * namespace has it), and ENOENT if there is none.
   */
  async list(filter?: NsidFilter): Promise<NsidEntry[]> {
    const { targetNsid, nsid } = checkFilter(filter);
    const target = targetNsid === undefined ? [] : [attr.s32(C.NETNSA_TARGET_NSID, targetNsid)];
    const seenFrom = targetNsid === undefined ? '' : ` as nsid ${targetNsid} has them`;
    if (nsid !== undefined) {
      const what = `get nsid ${nsid}${seenFrom}`;
      const [replies] = await this.#nl.request([nsidRequest(C.RTM_GETNSID, [attr.s32(C.NETNSA_NSID, nsid), ...target], what)]);
      return [onlyEntry(replies!, what)];
    }
    const messages = await this.#nl.dump(C.RTM_GETNSID, rtgenmsg(), target, `list nsids${seenFrom}`);
    return messages.filter((m) => m.type === C.RTM_NEWNSID).map(parseEntry);
  }

  /**
   * Id -> name for the named namespaces nl's namespace has an id for, as `ip`
   * names the ids it lists. A name whose namespace cannot be opened, or that
   * has no id, is left out; of two names for one namespace, the first given
   * wins. One request per name, MAX_BATCH to a sendmsg (and as many
   * descriptors open at once).
   */
  async names(entries: readonly NamedNamespace[]): Promise<Map<number, string>> {
    const named = checkEntries(entries);
    const ids = new Map<number, string>();
    for (let start = 0; start < named.length; start += MAX_BATCH) await this.#name(named.slice(start, start + MAX_BATCH), ids);
    return ids;
  }

  async #name(named: readonly NamedNamespace[], ids: Map<number, string>): Promise<void> {
    const open: { name: string; ns: NamespaceFd }[] = [];
    try {
      for (const { name, path } of named) {
        const ns = openOrSkip(path);
        if (ns) open.push({ name, ns });
      }
      const requests = open.map(({ name, ns }) => nsidRequest(C.RTM_GETNSID, [attr.u32(C.NETNSA_FD, ns.fd)], `get the nsid of ${name}`));
      const settled = await this.#nl.requestSettled(requests);
      settled.forEach((outcome, i) => {
        const reply = outcome.ok ? outcome.messages.find((m) => m.type === C.RTM_NEWNSID) : undefined;
        const id = reply && parseEntry(reply).nsid;
        if (id !== undefined && !ids.has(id)) ids.set(id, open[i]!.name);
      });
    } finally {
      for (const { ns } of open) ns[Symbol.dispose]();
    }
  }
}

/** struct rtgenmsg: u8 family, AF_UNSPEC. */
function rtgenmsg(): Buffer {
  return Buffer.alloc(C.RTGENMSG_SIZE);
}

function nsidRequest(type: number, attributes: Attribute[], what: string, flags = 0): NetlinkRequest {
  return { type, flags, header: rtgenmsg(), attributes, what };
}

/** An nsid message's ids; NETNSA_NSID_NOT_ASSIGNED (or any negative) reads as none. */
function parseEntry(message: NetlinkMessage): NsidEntry {
  const a = AttributeMap.parse(message.payload, ATTRIBUTES_AT);
  const entry: NsidEntry = {};
  const nsid = a.s32(C.NETNSA_NSID);
  const current = a.s32(C.NETNSA_CURRENT_NSID);
  if (nsid !== undefined && nsid >= 0) entry.nsid = nsid;
  if (current !== undefined && current >= 0) entry.currentNsid = current;
  return entry;
}

function onlyEntry(replies: NetlinkMessage[], what: string): NsidEntry {
  const message = replies.find((m) => m.type === C.RTM_NEWNSID);
  if (!message) throw netnsError(ErrorCodes.NETLINK_MALFORMED, `netlink: ${what}: the kernel answered without an nsid message`);
  return parseEntry(message);
}

/** The peer as a message names it, and what holds its descriptor open until disposed. */
interface Peer extends Disposable {
  attribute: Attribute;
  name: string;
}

function peerOf(target: unknown, method: 'nsids.get' | 'nsids.set'): Peer {
  if (typeof target === 'object' && target !== null && !isNsHandle(target)) {
    checkKeys(target, SPEC_KEYS[method], method, keyError);
    const pid = checkPid(own(target as { pid?: unknown }).pid);
    return { attribute: attr.u32(C.NETNSA_PID, pid), name: `pid ${pid}`, [Symbol.dispose]: () => {} };
  }
  const ns = leaseNamespaceFd(target, 'netlink: nsids');
  const name = isNsHandle(target) ? target.path : String(target);
  return { attribute: attr.u32(C.NETNSA_FD, ns.fd), name, [Symbol.dispose]: () => ns[Symbol.dispose]() };
}

/** A namespace that cannot be opened (gone, not a network namespace, unreadable) is no error here. */
function openOrSkip(path: string): NamespaceFd | undefined {
  try {
    return leaseNamespaceFd(path, 'netlink: nsids');
  } catch {
    return undefined;
  }
}

function badArgument(message: string): NetnsError {
  return netnsError(ErrorCodes.INVALID_ARG, `netlink: nsids: ${message}`);
}

/** An unknown key, with the code every other nsids check uses; the message names the method already. */
function keyError(message: string): NetnsError {
  return netnsError(ErrorCodes.INVALID_ARG, `netlink: ${message}`);
}

function checkNsid(value: unknown, what: string): number {
  if (!Number.isSafeInteger(value) || (value as number) < 0 || (value as number) > MAX_NSID) {
    throw badArgument(`${what} must be an integer from 0 to ${MAX_NSID}, got ${String(value)}`);
  }
  return value as number;
}

// pid_t is an int; the kernel would answer 0 or a pid beyond its range with ESRCH only after the send.
function checkPid(value: unknown): number {
  if (!Number.isSafeInteger(value) || (value as number) < 1 || (value as number) > MAX_NSID) {
    throw badArgument(`a process target is { pid }, a pid from 1 to ${MAX_NSID}, got ${String(value)}`);
  }
  return value as number;
}

function checkFilter(filter: unknown): NsidFilter {
  if (filter === undefined) return {};
  if (typeof filter !== 'object' || filter === null || Array.isArray(filter)) throw badArgument('the filter must be an object');
  checkKeys(filter, SPEC_KEYS['nsids.list'], 'nsids.list', keyError);
  const { targetNsid, nsid } = own(filter as NsidFilter);
  return {
    targetNsid: targetNsid === undefined ? undefined : checkNsid(targetNsid, 'targetNsid'),
    nsid: nsid === undefined ? undefined : checkNsid(nsid, 'nsid'),
  };
}

function checkEntries(entries: unknown): NamedNamespace[] {
  if (!Array.isArray(entries)) throw badArgument('names() takes an array of { name, path }');
  return entries.map((entry: unknown) => {
    const { name, path } = own((typeof entry === 'object' && entry !== null ? entry : {}) as Partial<NamedNamespace>);
    if (typeof name !== 'string' || typeof path !== 'string' || path === '') {
      throw badArgument(`names() takes { name, path } with a non-empty path, got ${JSON.stringify(entry)}`);
    }
    return { name, path };
  });
}
