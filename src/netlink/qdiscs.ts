// Qdiscs: RTM_NEWQDISC / DELQDISC / GETQDISC, as `tc qdisc` (iproute2 6.1)
// sends them (captured with strace; test/unit/netlink-tc-qdiscs.test.ts):
//   tcmsg{AF_UNSPEC, ifindex, handle, parent, info 0}, TCA_KIND "tbf\0", TCA_OPTIONS.
// add = CREATE|EXCL, replace = CREATE|REPLACE, change = no flags, as tc. ingress
// and clsact take parent TC_H_INGRESS and handle ffff:, which tc fills in
// itself (and sends their kind on delete too). A kind this kernel has no
// module for is ERR_NETNS_UNSUPPORTED naming it (sch_netem).
import { attr, AttributeMap, type Attribute } from './attributes.js';
import { invalid } from './checks.js';
import type { NetlinkHandle } from './handle.js';
import { checkKeys, qdiscSpecKeys, SPEC_KEYS } from './keys.js';
import { checkLinkRef, describeLink, type LinkRef, type Links } from './links.js';
import type { NetlinkMessage, NetlinkRequest } from './message.js';
import * as T from './tc-constants.js';
import { formatHandle, formatParent, parseHandle, parseTcmsg, sendTc, tcmsg, type TcHandle } from './tc-message.js';
import {
  htbOptions,
  netemOptions,
  parseHtb,
  parseNetem,
  parsePfifo,
  parseTbf,
  pfifoOptions,
  tbfOptions,
  type HtbOptions,
  type NetemOptions,
  type PfifoOptions,
  type TbfOptions,
} from './tc-qdisc-options.js';
import { own } from './validate.js';
import { NLM_F_CREATE, NLM_F_EXCL, NLM_F_REPLACE } from './constants.js';

export type { HtbOptions, NetemOptions, PfifoOptions, TbfOptions };

/** Where a qdisc hangs: the link's root, its ingress or clsact hook, or under class "M:N". */
export type QdiscParent = 'root' | 'ingress' | 'clsact' | TcHandle;

/** What every qdisc spec has: the link, where the qdisc hangs and its handle. */
interface QdiscBase {
  /** The link, by name or index. */
  link: LinkRef;
  /** root (the default), "M:N" (a class), or ingress / clsact (the default, and the only parent, of those kinds). */
  parent?: QdiscParent;
  /** "M:" (hex, as tc writes it); the kernel picks one when absent (ffff: for ingress and clsact). */
  handle?: TcHandle;
}

/** A token bucket: `tc qdisc add dev L root tbf rate R burst B (limit L | latency T)`. */
export interface TbfQdiscSpec extends QdiscBase {
  /** Token bucket filter. */
  kind: 'tbf';
  /** Bytes per second (the kernel's tc_ratespec): tc's 1mbit is 125000. */
  rate: number;
  /** The bucket's size, bytes. */
  burst: number;
  /** Bytes queued at most; or give latency instead. */
  limit?: number;
  /** Microseconds a packet may wait, instead of limit: the limit is then rate × latency + burst, as tc computes it. */
  latency?: number;
}

/** Hierarchical token bucket: classes (nl.classes) hold the rates. */
export interface HtbQdiscSpec extends QdiscBase {
  /** Hierarchical token bucket. */
  kind: 'htb';
  /** The minor of the class unclassified traffic goes to, as a number: class 1:10 is minor 0x10 (tc's `default 10` is hex). Default 0: sent directly. */
  defaultClass?: number;
}

/** Network emulation: delay, jitter, loss, duplication, corruption, reordering, rate. */
export interface NetemQdiscSpec extends QdiscBase {
  /** Network emulator (module sch_netem). */
  kind: 'netem';
  /** Microseconds added to every packet. */
  delay?: number;
  /** Microseconds of random variation around delay. */
  jitter?: number;
  /** Percent of packets dropped, 0-100 (fractions allowed). */
  loss?: number;
  /** Percent of packets duplicated. */
  duplicate?: number;
  /** Percent of packets with a bit flipped. */
  corrupt?: number;
  /** Percent of packets sent at once, the rest after delay (so they overtake): needs a delay. */
  reorder?: number;
  /** Packets queued at most; 1000 when absent, as tc. */
  limit?: number;
  /** Bytes per second. */
  rate?: number;
}

/** A packet FIFO. */
export interface PfifoQdiscSpec extends QdiscBase {
  /** First in, first out, counted in packets. */
  kind: 'pfifo';
  /** Packets queued at most; the link's txqueuelen when absent. */
  limit?: number;
}

/** The clsact hooks (ingress and egress filters without queueing). */
export interface ClsactQdiscSpec extends QdiscBase {
  /** clsact: filters attach to its ingress and egress hooks. */
  kind: 'clsact';
}

/** The ingress qdisc (filters on received packets). */
export interface IngressQdiscSpec extends QdiscBase {
  /** ingress: filters attach to parent ffff:. */
  kind: 'ingress';
}

/** What qdiscs.add() / replace() / change() take: the link, where, and a kind with its options. */
export type QdiscSpec = TbfQdiscSpec | HtbQdiscSpec | NetemQdiscSpec | PfifoQdiscSpec | ClsactQdiscSpec | IngressQdiscSpec;

/** A qdisc as the kernel reports it: what `tc qdisc show` prints. */
export interface Qdisc {
  /** The interface index. */
  link: number;
  /** tbf, htb, netem, pfifo, clsact, ingress, noqueue, ... */
  kind: string;
  /** "1:", or "0:" for the kernel's default qdiscs. */
  handle: string;
  /** root, ingress, clsact, or "M:N". */
  parent: string;
  /** The options of tbf, htb, netem and pfifo, in the units of their specs. */
  options?: TbfOptions | HtbOptions | NetemOptions | PfifoOptions;
}

/** Which qdiscs qdiscs.list() returns. */
export interface QdiscFilter {
  /** Only this link's (by name or index). */
  link?: LinkRef;
}

/** Which qdisc qdiscs.delete() removes: the one at `parent` (root by default), or the one with `handle`. */
export interface QdiscSelector {
  /** The link, by name or index. */
  link: LinkRef;
  /** root (default), ingress, clsact, or "M:N". */
  parent?: QdiscParent;
  /** "M:". */
  handle?: TcHandle;
}

const ENCODERS: Record<QdiscSpec['kind'], (spec: never) => Attribute[]> = {
  tbf: tbfOptions,
  htb: htbOptions,
  netem: netemOptions,
  pfifo: pfifoOptions,
  clsact: () => [],
  ingress: () => [],
};

/** parent (as tc's word or "M:N") -> the number sent; ingress and clsact are TC_H_INGRESS. */
function parentNumber(parent: unknown): number {
  if (parent === undefined || parent === 'root') return T.TC_H_ROOT;
  if (parent === 'ingress' || parent === 'clsact') return T.TC_H_INGRESS;
  return parseHandle(parent, 'qdisc parent', 'any');
}

/** ingress and clsact sit at their own hook, with handle ffff:; other kinds never there. */
function placement(kind: string, parent: unknown, handle: unknown): { parent: number; handle: number; parentText: string } {
  const hook = kind === 'ingress' || kind === 'clsact';
  if (hook) {
    if (parent !== undefined && parent !== kind) throw invalid(`a ${kind} qdisc's parent is ${kind}, got ${JSON.stringify(parent)}`);
    if (handle !== undefined && parseHandle(handle, 'qdisc handle', 'none') !== T.INGRESS_HANDLE) throw invalid(`a ${kind} qdisc's handle is ffff:, got ${JSON.stringify(handle)}`);
    return { parent: T.TC_H_INGRESS, handle: T.INGRESS_HANDLE, parentText: kind };
  }
  if (parent === 'ingress' || parent === 'clsact') throw invalid(`only an ${String(parent)} qdisc goes at parent ${String(parent)}, not ${kind}`);
  return {
    parent: parentNumber(parent),
    handle: handle === undefined ? 0 : parseHandle(handle, 'qdisc handle', 'none'),
    parentText: parent === undefined || parent === 'root' ? 'root' : `parent ${String(parent)}`,
  };
}

/** "tc qdisc add dev t0 root handle 1: tbf"; ingress and clsact as tc takes them, by their kind alone. */
function describe(verb: string, link: LinkRef, parentText: string, handle: unknown, kind: string): string {
  const words = [`tc qdisc ${verb} dev ${describeLink(link)}`, parentText];
  if (handle !== undefined && parentText !== kind) words.push(`handle ${String(handle)}`);
  if (kind !== '' && kind !== parentText) words.push(kind);
  return words.join(' ');
}

/** The NEWQDISC message for `spec` (validated; the link's index is written in when sent). */
export function qdiscRequest(spec: QdiscSpec, flags: number): NetlinkRequest {
  if (typeof spec !== 'object' || spec === null) throw invalid('a qdisc needs { link, kind, ... }');
  checkLinkRef(spec.link);
  const { kind } = spec;
  if (typeof kind !== 'string' || !Object.hasOwn(ENCODERS, kind)) throw invalid(`qdisc kind must be one of ${Object.keys(ENCODERS).join(', ')}, got ${JSON.stringify(kind)}`);
  const where = placement(kind, spec.parent, spec.handle);
  const attributes = [attr.string(T.TCA_KIND, kind), ...ENCODERS[kind](spec as never)];
  const verb = flags === 0 ? 'change' : flags & NLM_F_EXCL ? 'add' : 'replace';
  return { type: T.RTM_NEWQDISC, flags, header: tcmsg(where.handle, where.parent), attributes, what: describe(verb, spec.link, where.parentText, spec.handle, kind) };
}

/** The DELQDISC message, as `tc qdisc del` sends it: ingress and clsact by their kind and handle ffff:. */
export function deleteQdiscRequest(selector: QdiscSelector): NetlinkRequest {
  if (typeof selector !== 'object' || selector === null) throw invalid('qdiscs.delete needs { link, parent?, handle? }');
  checkLinkRef(selector.link);
  const { parent, handle } = selector;
  if (parent === 'ingress' || parent === 'clsact') {
    const where = placement(parent, parent, handle);
    return { type: T.RTM_DELQDISC, flags: 0, header: tcmsg(where.handle, where.parent), attributes: [attr.string(T.TCA_KIND, parent)], what: describe('del', selector.link, parent, handle, parent) };
  }
  const header = tcmsg(handle === undefined ? 0 : parseHandle(handle, 'qdisc handle', 'none'), parentNumber(parent));
  const parentText = parent === undefined || parent === 'root' ? 'root' : `parent ${String(parent)}`;
  return { type: T.RTM_DELQDISC, flags: 0, header, what: describe('del', selector.link, parentText, handle, '') };
}

const PARSERS: Record<string, (options: Buffer) => Qdisc['options']> = {
  tbf: (options) => parseTbf(AttributeMap.parse(options)),
  htb: (options) => parseHtb(AttributeMap.parse(options)),
  netem: parseNetem,
  pfifo: parsePfifo,
};

export function parseQdisc(message: NetlinkMessage): Qdisc {
  const m = parseTcmsg(message);
  const out: Qdisc = { link: m.index, kind: m.kind, handle: formatHandle(m.handle), parent: formatParent(m.parent, m.kind) };
  const raw = m.attributes.get(T.TCA_OPTIONS);
  const options = raw !== undefined && Object.hasOwn(PARSERS, m.kind) ? PARSERS[m.kind]!(raw) : undefined;
  if (options) out.options = options;
  return out;
}

/**
 * Queueing disciplines of the Netlink handle's namespace (`nl.qdiscs`), as
 * `tc qdisc`. Every method is async; kernel refusals are NetnsErrors with the
 * errno name as code (EEXIST, ENOENT, EINVAL), a kind this kernel lacks
 * ERR_NETNS_UNSUPPORTED naming its module.
 */
export class Qdiscs {
  readonly #nl: NetlinkHandle;
  readonly #links: Links;

  constructor(handle: NetlinkHandle, links: Links) {
    this.#nl = handle;
    this.#links = links;
  }

  /** Every qdisc, or one link's (`tc qdisc show [dev L]`), the kernel's defaults (noqueue, ...) included. */
  async list(filter: QdiscFilter = {}): Promise<Qdisc[]> {
    filter = own(filter);
    if (typeof filter !== 'object' || filter === null) throw invalid('a qdisc filter must be an object ({ link })');
    checkKeys(filter, SPEC_KEYS['qdiscs.list'], 'qdiscs.list');
    const index = filter.link === undefined ? 0 : await this.#links.index(checkLinkRef(filter.link));
    const messages = await this.#nl.dump(T.RTM_GETQDISC, tcmsg(0, 0, 0, index), [], 'tc qdisc show');
    return messages.filter((m) => m.type === T.RTM_NEWQDISC).map(parseQdisc).filter((q) => index === 0 || q.link === index);
  }

  /** Adds a qdisc (`tc qdisc add`); EEXIST if one is there (the kernel's default qdiscs are replaced without a word, as by tc). */
  async add(spec: QdiscSpec): Promise<void> {
    await this.#send(spec, NLM_F_CREATE | NLM_F_EXCL, 'qdiscs.add');
  }

  /** Adds or replaces the qdisc at that parent (`tc qdisc replace`). */
  async replace(spec: QdiscSpec): Promise<void> {
    await this.#send(spec, NLM_F_CREATE | NLM_F_REPLACE, 'qdiscs.replace');
  }

  /** Changes the options of the qdisc there, of the same kind (`tc qdisc change`); ENOENT if there is none. */
  async change(spec: QdiscSpec): Promise<void> {
    await this.#send(spec, 0, 'qdiscs.change');
  }

  /** Deletes the qdisc at `parent` (root by default; ingress, clsact) or with `handle` (`tc qdisc del`). */
  async delete(selector: QdiscSelector): Promise<void> {
    selector = own(selector);
    checkKeys(selector, SPEC_KEYS['qdiscs.delete'], 'qdiscs.delete');
    const request = deleteQdiscRequest(selector);
    await sendTc(this.#nl, this.#links, request, selector.link);
  }

  async #send(spec: QdiscSpec, flags: number, method: string): Promise<void> {
    spec = own(spec);
    const keys = qdiscSpecKeys(spec?.kind);
    if (keys) checkKeys(spec, keys, method);
    const request = qdiscRequest(spec, flags);
    await sendTc(this.#nl, this.#links, request, spec.link, { qdisc: spec.kind });
  }
}
