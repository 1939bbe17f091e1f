// Classes: RTM_NEWTCLASS / DELTCLASS / GETTCLASS, as `tc class` (iproute2 6.1)
// sends them (captured with strace; test/unit/netlink-tc-classes.test.ts), for
// htb: tcmsg{AF_UNSPEC, ifindex, handle = classid, parent}, TCA_KIND "htb\0",
// TCA_OPTIONS { [TCA_HTB_RATE64], [TCA_HTB_CEIL64], TCA_HTB_PARMS tc_htb_opt,
// TCA_HTB_RTAB, TCA_HTB_CTAB }. As tc/q_htb.c: the rate tables for an MTU of
// 1600, ceil = rate and bursts of rate / HZ + 1600 bytes unless given. add =
// CREATE|EXCL; replace = CREATE alone (tc's: create, or change the class there);
// change = no flags.
import { attr, AttributeMap, type Attribute } from './attributes.js';
import { checkUint, invalid } from './checks.js';
import { NLM_F_CREATE, NLM_F_EXCL } from './constants.js';
import type { NetlinkHandle } from './handle.js';
import { checkKeys, SPEC_KEYS } from './keys.js';
import { checkLinkRef, describeLink, type LinkRef, type Links } from './links.js';
import type { NetlinkMessage, NetlinkRequest } from './message.js';
import * as T from './tc-constants.js';
import { clockHz, rateTable, transmitSize } from './tc-core.js';
import { formatFilterParent, formatHandle, parseHandle, parseTcmsg, sendTc, tcmsg, type TcHandle } from './tc-message.js';
import { burstTicks, checkRate, u64 } from './tc-qdisc-options.js';
import { own } from './validate.js';

/** What classes.add() / replace() / change() take: an htb class `classid` under `parent`, with its rates. */
export interface ClassSpec {
  /** The link, by name or index. */
  link: LinkRef;
  /** The htb qdisc ("1:") or a parent class ("1:1"). */
  parent: TcHandle;
  /** "M:N": M the htb qdisc's major, N this class's minor (hex, as tc writes it). */
  classid: TcHandle;
  /** Only htb classes are made here. */
  kind: 'htb';
  /** Guaranteed bytes per second. */
  rate: number;
  /** Bytes per second at most, borrowing from the parent; rate when absent. */
  ceil?: number;
  /** Bytes sent at once at rate; rate / HZ + 1600 when absent, as tc. */
  burst?: number;
  /** Bytes sent at once at ceil; ceil / HZ + 1600 when absent, as tc. */
  cburst?: number;
}

/** An htb class's rates as list() reads them, in the units of ClassSpec. */
export interface HtbClassOptions {
  /** Bytes per second. */
  rate: number;
  /** Bytes per second. */
  ceil: number;
  /** Bytes, as tc prints it back. */
  burst: number;
  /** Bytes, as tc prints it back. */
  cburst: number;
}

/** A class as the kernel reports it: what `tc class show` prints. */
export interface TcClass {
  /** The interface index. */
  link: number;
  /** htb, ... */
  kind: string;
  /** "1:10". */
  classid: string;
  /** The parent class ("1:1"), or root for a class right under the qdisc. */
  parent: string;
  /** The qdisc under a leaf class, when it has one of its own ("20:"). */
  leaf?: string;
  /** An htb class's rates. */
  options?: HtbClassOptions;
}

/** Which class classes.delete() removes. */
export interface ClassSelector {
  /** The link, by name or index. */
  link: LinkRef;
  /** "M:N". */
  classid: TcHandle;
}

/** Which classes classes.list() returns: one link's (the kernel lists classes per link). */
export interface ClassFilter {
  /** The link, by name or index. */
  link: LinkRef;
}

/** The MTU tc's htb rate tables are made for. */
const HTB_MTU = 1600;

function htbClassOptions(spec: ClassSpec): Attribute[] {
  const rate = checkRate(spec.rate, 'htb class rate');
  const ceil = spec.ceil === undefined ? rate : checkRate(spec.ceil, 'htb class ceil');
  const burst = spec.burst === undefined ? Math.floor(rate / clockHz()) + HTB_MTU : checkUint(spec.burst, 'htb class burst (bytes)', 0xffffffff, 1);
  const cburst = spec.cburst === undefined ? Math.floor(ceil / clockHz()) + HTB_MTU : checkUint(spec.cburst, 'htb class cburst (bytes)', 0xffffffff, 1);
  const rtab = rateTable(rate, HTB_MTU);
  const ctab = rateTable(ceil, HTB_MTU);
  const opt = Buffer.alloc(T.TC_HTB_OPT_SIZE); // quantum, level, prio 0: the kernel computes the quantum
  rtab.spec.copy(opt, 0);
  ctab.spec.copy(opt, 12);
  opt.writeUInt32LE(burstTicks(rate, burst, 'htb class burst'), 24);
  opt.writeUInt32LE(burstTicks(ceil, cburst, 'htb class cburst'), 28);
  const nested: Attribute[] = [];
  if (rate >= 2 ** 32) nested.push(u64(T.TCA_HTB_RATE64, rate));
  if (ceil >= 2 ** 32) nested.push(u64(T.TCA_HTB_CEIL64, ceil));
  nested.push(attr.bytes(T.TCA_HTB_PARMS, opt), attr.bytes(T.TCA_HTB_RTAB, rtab.table), attr.bytes(T.TCA_HTB_CTAB, ctab.table));
  return [attr.nest(T.TCA_OPTIONS, nested)];
}

/** The NEWTCLASS message for `spec` (validated; the link's index is written in when sent). */
export function classRequest(spec: ClassSpec, flags: number): NetlinkRequest {
  if (typeof spec !== 'object' || spec === null) throw invalid('a class needs { link, parent, classid, kind, rate }');
  checkLinkRef(spec.link);
  if (spec.kind !== 'htb') throw invalid(`class kind must be htb, got ${JSON.stringify(spec.kind)}`);
  const parent = parseHandle(spec.parent, 'class parent', 'any');
  const classid = parseHandle(spec.classid, 'classid', 'required');
  if (classid >>> 16 !== parent >>> 16) throw invalid(`classid ${spec.classid} must have the major of its parent ${spec.parent}`);
  const attributes = [attr.string(T.TCA_KIND, 'htb'), ...htbClassOptions(spec)];
  const verb = flags === 0 ? 'change' : flags & NLM_F_EXCL ? 'add' : 'replace';
  const what = `tc class ${verb} dev ${describeLink(spec.link)} parent ${spec.parent} classid ${spec.classid} htb`;
  return { type: T.RTM_NEWTCLASS, flags, header: tcmsg(classid, parent), attributes, what };
}

/** The DELTCLASS message, as `tc class del dev L classid M:N` sends it (parent 0). */
export function deleteClassRequest(selector: ClassSelector): NetlinkRequest {
  if (typeof selector !== 'object' || selector === null) throw invalid('classes.delete needs { link, classid }');
  checkLinkRef(selector.link);
  const classid = parseHandle(selector.classid, 'classid', 'required');
  return { type: T.RTM_DELTCLASS, flags: 0, header: tcmsg(classid, 0), what: `tc class del dev ${describeLink(selector.link)} classid ${selector.classid}` };
}

function parseHtbClass(raw: Buffer): HtbClassOptions | undefined {
  const a = AttributeMap.parse(raw);
  const opt = a.get(T.TCA_HTB_PARMS);
  if (opt === undefined || opt.length < T.TC_HTB_OPT_SIZE) return undefined;
  const wide = (type: number, fallback: number): number => {
    const value = a.get(type);
    return value !== undefined && value.length >= 8 ? Number(value.readBigUInt64LE(0)) : fallback;
  };
  const rate = wide(T.TCA_HTB_RATE64, opt.readUInt32LE(8));
  const ceil = wide(T.TCA_HTB_CEIL64, opt.readUInt32LE(20));
  return { rate, ceil, burst: transmitSize(rate, opt.readUInt32LE(24)), cburst: transmitSize(ceil, opt.readUInt32LE(28)) };
}

export function parseClass(message: NetlinkMessage): TcClass {
  const m = parseTcmsg(message);
  const out: TcClass = { link: m.index, kind: m.kind, classid: formatHandle(m.handle), parent: formatFilterParent(m.parent) };
  if (m.info !== 0) out.leaf = formatHandle(m.info);
  const raw = m.attributes.get(T.TCA_OPTIONS);
  const options = raw !== undefined && m.kind === 'htb' ? parseHtbClass(raw) : undefined;
  if (options) out.options = options;
  return out;
}

/**
 * Traffic classes of the Netlink handle's namespace (`nl.classes`), as
 * `tc class`, for htb. Every method is async; kernel refusals are NetnsErrors
 * with the errno name as code (EEXIST, ENOENT, EBUSY for a class in use).
 */
export class Classes {
  readonly #nl: NetlinkHandle;
  readonly #links: Links;

  constructor(handle: NetlinkHandle, links: Links) {
    this.#nl = handle;
    this.#links = links;
  }

  /** One link's classes (`tc class show dev L`). */
  async list(filter: ClassFilter): Promise<TcClass[]> {
    filter = own(filter);
    if (typeof filter !== 'object' || filter === null) throw invalid('classes.list needs { link }');
    checkKeys(filter, SPEC_KEYS['classes.list'], 'classes.list');
    const index = await this.#links.index(checkLinkRef(filter.link));
    const messages = await this.#nl.dump(T.RTM_GETTCLASS, tcmsg(0, 0, 0, index), [], `tc class show dev ${describeLink(filter.link)}`);
    return messages.filter((m) => m.type === T.RTM_NEWTCLASS).map(parseClass).filter((c) => c.link === index);
  }

  /** Adds a class (`tc class add`); EEXIST if that classid is taken. */
  async add(spec: ClassSpec): Promise<void> {
    await this.#send(spec, NLM_F_CREATE | NLM_F_EXCL, 'classes.add');
  }

  /** Adds the class, or changes the one with that classid (`tc class replace`). */
  async replace(spec: ClassSpec): Promise<void> {
    await this.#send(spec, NLM_F_CREATE, 'classes.replace');
  }

  /** Changes the class with that classid (`tc class change`); ENOENT if there is none. */
  async change(spec: ClassSpec): Promise<void> {
    await this.#send(spec, 0, 'classes.change');
  }

  /** Deletes a class (`tc class del`); EBUSY while a filter or a child class points at it. */
  async delete(selector: ClassSelector): Promise<void> {
    selector = own(selector);
    checkKeys(selector, SPEC_KEYS['classes.delete'], 'classes.delete');
    await sendTc(this.#nl, this.#links, deleteClassRequest(selector), selector.link);
  }

  async #send(spec: ClassSpec, flags: number, method: string): Promise<void> {
    spec = own(spec);
    checkKeys(spec, SPEC_KEYS.class, method);
    await sendTc(this.#nl, this.#links, classRequest(spec, flags), spec.link);
  }
}
