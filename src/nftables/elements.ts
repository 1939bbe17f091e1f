// Set elements on the wire, as nft 1.0.6 sends and the kernel dumps them.
//
// An interval set holds ranges as pairs of elements: a start, and an END
// element (flag NFT_SET_ELEM_INTERVAL_END) at the first address *after* the
// range. A range that runs to the last address (all ones) has no address
// after it: nft sends its start alone, marked INTERVAL_OPEN in the element's
// userdata. Into a set known to be empty, nft first sends an END at 0 (when
// the first range does not start there), which closes whatever lies below
// the first range; the kernel does not need it, so it is sent only where nft
// would know the set empty.
//
// One message's ELEMENTS nest is at most 65535 bytes (nla_len is a u16; an
// over-long nest is silently cut by the kernel). Like nft (mnl.c
// mnl_nft_setelem_batch), elements go into a message until the next one
// would not fit; element nests are numbered 1, 2... across the messages, and
// the number of the element that did not fit is used up, as nft does. The
// number is a u16 nla_type: past 65535 it wraps as nft's does (the kernel
// ignores these numbers).
import { attr, AttributeMap, type Attribute } from '../netlink/attributes.js';
import { NLA_F_NESTED, NLA_TYPE_MASK, NLM_F_CREATE } from '../netlink/constants.js';
import type { NetlinkRequest } from '../netlink/message.js';
import { ErrorCodes, netnsError } from '../core/errors.js';
import {
  NFT_MSG_DELSETELEM,
  NFT_MSG_NEWSETELEM,
  NFT_SET_ELEM_INTERVAL_END,
  NFTA_DATA_VALUE,
  NFTA_LIST_ELEM,
  NFTA_SET_ELEM_FLAGS,
  NFTA_SET_ELEM_KEY,
  NFTA_SET_ELEM_LIST_ELEMENTS,
  NFTA_SET_ELEM_LIST_SET,
  NFTA_SET_ELEM_LIST_SET_ID,
  NFTA_SET_ELEM_LIST_TABLE,
  NFTA_SET_ELEM_USERDATA,
  nftType,
  SET_ELEM_F_INTERVAL_OPEN,
  UDATA_SET_ELEM_COMMENT,
  UDATA_SET_ELEM_FLAGS,
} from './constants.js';
import { be32, nfgenmsg, type TableName } from './messages.js';
import { encodeUserdata, parseUserdata, tlv, userdataString, type Tlv } from './userdata.js';

/** One element as sent or dumped: its key bytes, and what marks it. */
export interface WireElement {
  key: Buffer;
  /** An interval's END (exclusive) element. */
  end?: boolean;
  /** A range's start that runs to all-ones (no END follows). */
  open?: boolean;
  comment?: string;
}

/**
 * A key as an unsigned integer: a number for keys of 4 bytes (IPv4; exact,
 * and far cheaper than a bigint in a 100,000-element batch), a bigint for longer ones.
 * @inline
 */
export type KeyValue = number | bigint;

/** A range of addresses [first, last] of `bytes`-wide keys, with an optional element comment. */
export interface Range {
  first: KeyValue;
  last: KeyValue;
  comment?: string;
}

const plusOne = (value: KeyValue): KeyValue => (typeof value === 'number' ? value + 1 : value + 1n);
const minusOne = (value: KeyValue): KeyValue => (typeof value === 'number' ? value - 1 : value - 1n);
const allOnes = (bytes: number): KeyValue => (bytes === 4 ? 0xffff_ffff : (1n << BigInt(bytes * 8)) - 1n);

const MAX_NEST = 0xffff;
const align4 = (n: number): number => (n + 3) & ~3;

const START = 0;
const END = 1;
const OPEN = 2;

/**
 * Elements packed: keys back to back in one buffer, a kind byte each, and
 * the comments of the few that have one. A 100,000-address set is 200,000
 * elements (a start and an END each): as objects with a Buffer each they cost
 * more in allocation and garbage collection than the kernel's commit or dump.
 */
export class ElementList {
  /** 0 until the first element sets it (a dump's key length is whatever the set's is). */
  #keyLength: number;
  #keys: Buffer;
  #kinds: Uint8Array;
  readonly #comments = new Map<number, string>();
  #count = 0;

  constructor(keyLength = 0, capacity = 16) {
    this.#keyLength = keyLength;
    this.#keys = Buffer.alloc(capacity * Math.max(keyLength, 4));
    this.#kinds = new Uint8Array(capacity);
  }

  static of(elements: readonly WireElement[]): ElementList {
    const list = new ElementList(elements[0]?.key.length ?? 0, elements.length);
    for (const e of elements) list.push(e.key, 0, e.key.length, e.end ? END : e.open ? OPEN : START, e.comment);
    return list;
  }

  get length(): number {
    return this.#count;
  }

  get keyLength(): number {
    return this.#keyLength;
  }

  /** Appends the element whose key is source[start, end). */
  push(source: Buffer, start: number, end: number, kind: number, comment?: string): void {
    const at = this.#slot(end - start);
    for (let o = 0; o < end - start; o += 4) this.#keys.writeUInt32LE(source.readUInt32LE(start + o), at * this.#keyLength + o);
    this.#finish(at, kind, comment);
  }

  /** Appends the element whose key is `value`, big-endian. */
  pushValue(value: KeyValue, kind: number, comment?: string): void {
    const at = this.#slot(this.#keyLength);
    if (typeof value === 'number') {
      this.#keys.writeUInt32BE(value, at * this.#keyLength);
      this.#finish(at, kind, comment);
      return;
    }
    for (let offset = (at + 1) * this.#keyLength - 4; offset >= at * this.#keyLength; offset -= 4) {
      this.#keys.writeUInt32BE(Number(BigInt.asUintN(32, value)), offset);
      value >>= 32n;
    }
    this.#finish(at, kind, comment);
  }

  isEnd(i: number): boolean {
    return this.#kinds[i] === END;
  }

  isOpen(i: number): boolean {
    return this.#kinds[i] === OPEN;
  }

  comment(i: number): string | undefined {
    return this.#comments.get(i);
  }

  /** A view of the key (valid until the next push). */
  key(i: number): Buffer {
    return this.#keys.subarray(i * this.#keyLength, (i + 1) * this.#keyLength);
  }

  // By 32-bit words (keys are multiples of 4): Buffer.copy is a native call each time, dearer for 4 bytes.
  copyKey(i: number, target: Buffer, offset: number): void {
    const start = i * this.#keyLength;
    for (let o = 0; o < this.#keyLength; o += 4) target.writeUInt32LE(this.#keys.readUInt32LE(start + o), offset + o);
  }

  /** The key as an unsigned integer (address keys are 4 or 16 bytes: 32 bits at a time). */
  value(i: number): KeyValue {
    const start = i * this.#keyLength;
    if (this.#keyLength === 4) return this.#keys.readUInt32BE(start);
    let value = 0n;
    for (let o = start; o < start + this.#keyLength; o += 4) value = (value << 32n) | BigInt(this.#keys.readUInt32BE(o));
    return value;
  }

  /** Orders two elements by key, an END before a start of the same key (an END closes the range below). */
  compare(a: number, b: number): number {
    for (let o = 0; o < this.#keyLength; o += 4) {
      const d = this.#keys.readUInt32BE(a * this.#keyLength + o) - this.#keys.readUInt32BE(b * this.#keyLength + o);
      if (d !== 0) return d;
    }
    return this.isEnd(a) === this.isEnd(b) ? 0 : this.isEnd(a) ? -1 : 1;
  }

  #slot(keyLength: number): number {
    if (this.#keyLength === 0) {
      this.#keyLength = keyLength;
      this.#keys = Buffer.alloc(this.#kinds.length * keyLength);
    }
    // Address keys are read 32 bits at a time; string keys (ifname, 16) are multiples of 4 too.
    if (keyLength !== this.#keyLength || keyLength % 4 !== 0) throw netnsError(ErrorCodes.NETLINK_MALFORMED, `nftables: a set element key of ${keyLength} bytes (expected ${this.#keyLength}, a multiple of 4)`);
    if (this.#count === this.#kinds.length) {
      const capacity = Math.max(16, this.#count * 2);
      const kinds = new Uint8Array(capacity);
      kinds.set(this.#kinds);
      this.#kinds = kinds;
      const keys = Buffer.alloc(capacity * this.#keyLength);
      this.#keys.copy(keys);
      this.#keys = keys;
    }
    return this.#count++;
  }

  #finish(at: number, kind: number, comment: string | undefined): void {
    this.#kinds[at] = kind;
    if (comment !== undefined) this.#comments.set(at, comment);
  }
}

/**
 * The elements of ranges in an interval set, in ascending order as nft sends
 * them; `intoEmptySet`: lead with END 0 as nft does for a set it knows empty.
 * The ranges must not overlap (the caller checks; the kernel refuses with EEXIST).
 */
export function intervalElements(ranges: readonly Range[], bytes: number, intoEmptySet: boolean): ElementList {
  // Callers mostly pass sorted lists: checking costs one pass, sorting a copy n log n bigint comparisons.
  const sorted = ranges.every((range, i) => i === 0 || ranges[i - 1]!.first <= range.first) ? ranges : [...ranges].sort((a, b) => (a.first < b.first ? -1 : a.first > b.first ? 1 : 0));
  const top = allOnes(bytes);
  const zero = bytes === 4 ? 0 : 0n;
  const out = new ElementList(bytes, sorted.length * 2 + 1);
  if (intoEmptySet && sorted.length > 0 && sorted[0]!.first !== zero) out.pushValue(zero, END);
  for (const range of sorted) {
    if (range.last === top) {
      out.pushValue(range.first, OPEN, range.comment);
      continue;
    }
    out.pushValue(range.first, START, range.comment);
    out.pushValue(plusOne(range.last), END);
  }
  return out;
}

/** A string key (type ifname) as nft pads it: the text, then NULs to the key length. */
export function stringKey(text: string, bytes: number): Buffer {
  const value = Buffer.from(text);
  // Room for the NUL nft keeps: a 16-byte ifname holds 15 characters.
  if (value.length >= bytes) throw netnsError(ErrorCodes.INVALID_ARG, `nftables: the key ${JSON.stringify(text)} is longer than ${bytes - 1} bytes`);
  const out = Buffer.alloc(bytes);
  value.copy(out);
  return out;
}

// Element nests are written straight into their message's ELEMENTS payload
// (no Attribute objects: five per element cost more than the kernel's
// commit). In nft's order: END: FLAGS, KEY{DATA_VALUE}; start: KEY{DATA_VALUE}, USERDATA.
const KEY_NEST = NFTA_SET_ELEM_KEY | NLA_F_NESTED;

/** The element's userdata (comment, INTERVAL_OPEN), or undefined when it has none. */
function elementUserdata(list: ElementList, i: number): Buffer | undefined {
  if (list.isEnd(i)) return undefined;
  const comment = list.comment(i);
  if (comment === undefined && !list.isOpen(i)) return undefined;
  const userdata: Tlv[] = [];
  if (comment !== undefined) userdata.push(tlv.string(UDATA_SET_ELEM_COMMENT, comment));
  if (list.isOpen(i)) userdata.push(tlv.u32(UDATA_SET_ELEM_FLAGS, SET_ELEM_F_INTERVAL_OPEN));
  return encodeUserdata(userdata);
}

/** Writes element i's nest at `at` of a zeroed buffer (padding stays zero); returns where it ends. */
function writeElement(out: Buffer, at: number, type: number, list: ElementList, i: number, userdata: Buffer | undefined): number {
  out.writeUInt16LE(type, at + 2);
  let o = at + 4;
  if (list.isEnd(i)) {
    out.writeUInt16LE(8, o);
    out.writeUInt16LE(NFTA_SET_ELEM_FLAGS, o + 2);
    out.writeUInt32BE(NFT_SET_ELEM_INTERVAL_END, o + 4);
    o += 8;
  }
  out.writeUInt16LE(8 + align4(list.keyLength), o);
  out.writeUInt16LE(KEY_NEST, o + 2);
  out.writeUInt16LE(4 + list.keyLength, o + 4);
  out.writeUInt16LE(NFTA_DATA_VALUE, o + 6);
  list.copyKey(i, out, o + 8);
  o += 8 + align4(list.keyLength);
  if (userdata) {
    out.writeUInt16LE(4 + userdata.length, o);
    out.writeUInt16LE(NFTA_SET_ELEM_USERDATA, o + 2);
    out.set(userdata, o + 4);
    o += align4(4 + userdata.length);
  }
  out.writeUInt16LE(o - at, at); // the nest's length, its last child's padding included
  return o;
}

export interface ElementTarget extends TableName {
  set: string;
  /** The set's NFTA_SET_ID when it was made in this batch (nft sends it then). */
  setId?: number;
}

/**
 * NEWSETELEM or DELSETELEM messages for the elements, split so that no
 * ELEMENTS nest passes 65535 bytes. `what` names the operation in errors.
 */
export function elementMessages(kind: 'add' | 'delete', target: ElementTarget, elements: ElementList | readonly WireElement[], what: string): NetlinkRequest[] {
  const list = elements instanceof ElementList ? elements : ElementList.of(elements);
  const head: Attribute[] = [attr.string(NFTA_SET_ELEM_LIST_TABLE, target.table), attr.string(NFTA_SET_ELEM_LIST_SET, target.set)];
  if (kind === 'add' && target.setId !== undefined) head.push(be32(NFTA_SET_ELEM_LIST_SET_ID, target.setId));
  const messages: NetlinkRequest[] = [];
  const send = (payload: Buffer) =>
    messages.push({
      type: nftType(kind === 'add' ? NFT_MSG_NEWSETELEM : NFT_MSG_DELSETELEM),
      flags: kind === 'add' ? NLM_F_CREATE : 0,
      header: nfgenmsg(target.family),
      attributes: [...head, attr.bytes(NFTA_SET_ELEM_LIST_ELEMENTS | NLA_F_NESTED, payload)],
      what,
    });
  const keySize = 4 + 8 + align4(list.keyLength);
  // Userdata (comments, INTERVAL_OPEN) is rare: kept by index, made once.
  const userdata = new Map<number, Buffer>();
  const sizeOf = (i: number): number => {
    let bytes = userdata.get(i);
    if (bytes === undefined) {
      bytes = elementUserdata(list, i);
      if (bytes) userdata.set(i, bytes);
    }
    return keySize + (list.isEnd(i) ? 8 : 0) + (bytes ? align4(4 + bytes.length) : 0);
  };
  let index = 0;
  for (let first = 0; first < list.length; ) {
    // As many elements as fit after the ELEMENTS nest's own 4-byte header (one always does: a nest is under 600 bytes).
    let size = 4;
    let last = first;
    for (let next = 0; last < list.length && size + (next = sizeOf(last)) <= MAX_NEST; last++) size += next;
    const payload = Buffer.alloc(size - 4); // zeroed: the padding
    let offset = 0;
    for (let i = first; i < last; i++) offset = writeElement(payload, offset, (++index & 0xffff) | NLA_F_NESTED, list, i, userdata.get(i));
    send(payload);
    // nft numbers the element that did not fit before starting the next message, and uses that number up.
    if (last < list.length) index++;
    first = last;
  }
  return messages;
}

/** `flush set`: DELSETELEM with the set and table only (in nft's order) empties the set. */
export function flushSet(target: TableName & { set: string }): NetlinkRequest {
  return {
    type: nftType(NFT_MSG_DELSETELEM),
    flags: 0,
    header: nfgenmsg(target.family),
    attributes: [attr.string(NFTA_SET_ELEM_LIST_SET, target.set), attr.string(NFTA_SET_ELEM_LIST_TABLE, target.table)],
    what: `flush set inet ${target.table} ${target.set}`,
  };
}

/**
 * Calls `visit` with each attribute of buffer[start, end): its type
 * (NLA_F_NESTED and byte-order bits masked off) and payload bounds. Element
 * nests are walked with this, not AttributeMap (two Maps and four views per
 * element): a 100,000-address set dumps 200,000 of them.
 */
function eachAttribute(buffer: Buffer, start: number, end: number, visit: (type: number, from: number, to: number) => void): void {
  for (let offset = start; offset + 4 <= end; ) {
    const length = buffer.readUInt16LE(offset);
    if (length < 4 || offset + length > end) throw netnsError(ErrorCodes.NETLINK_MALFORMED, `nftables: malformed set element attribute at byte ${offset}`);
    visit(buffer.readUInt16LE(offset + 2) & NLA_TYPE_MASK, offset + 4, offset + length);
    offset += align4(length);
  }
}

/** Appends the elements of one NEWSETELEM message of a dump to `into` (nests without NLA_F_NESTED; masked anyway). */
export function parseElements(payload: Buffer, headerSize: number, into: ElementList): void {
  const list = AttributeMap.parse(payload, headerSize).get(NFTA_SET_ELEM_LIST_ELEMENTS);
  if (!list) return;
  let keyStart = -1;
  let keyEnd = -1;
  let end = false;
  let userdata: Buffer | undefined;
  const keyField = (inner: number, from: number, to: number) => {
    if (inner === NFTA_DATA_VALUE) [keyStart, keyEnd] = [from, to];
  };
  const field = (type: number, from: number, to: number) => {
    if (type === NFTA_SET_ELEM_KEY) eachAttribute(list, from, to, keyField);
    else if (type === NFTA_SET_ELEM_FLAGS) end = to - from >= 4 && (list.readUInt32BE(from) & NFT_SET_ELEM_INTERVAL_END) !== 0;
    else if (type === NFTA_SET_ELEM_USERDATA) userdata = list.subarray(from, to);
  };
  // The kernel numbers every element nest NFTA_LIST_ELEM (1).
  eachAttribute(list, 0, list.length, (type, from, to) => {
    if (type !== NFTA_LIST_ELEM) return;
    keyStart = -1;
    end = false;
    userdata = undefined;
    eachAttribute(list, from, to, field);
    if (keyStart < 0) return;
    let open = false;
    let comment: string | undefined;
    if (userdata) {
      const tlvs = parseUserdata(userdata);
      comment = userdataString(tlvs.get(UDATA_SET_ELEM_COMMENT));
      const flags = tlvs.get(UDATA_SET_ELEM_FLAGS);
      open = flags !== undefined && flags.length >= 4 && (flags.readUInt32LE(0) & SET_ELEM_F_INTERVAL_OPEN) !== 0;
    }
    into.push(list, keyStart, keyEnd, end ? END : open ? OPEN : START, comment);
  });
}

/**
 * Ranges back from an interval set's elements (any order; dumps give them
 * descending): each start runs to just before the next END above it, to
 * all-ones when open; a start with no END after it is a single key.
 */
export function rangesOf(list: ElementList): Range[] {
  const n = list.length;
  // Dumps come in descending order: then the walk goes backwards, and only another order is sorted.
  let ascending = true;
  let descending = true;
  for (let i = 1; i < n && (ascending || descending); i++) {
    const order = list.compare(i - 1, i);
    if (order > 0) ascending = false;
    if (order < 0) descending = false;
  }
  const at: (position: number) => number = ascending ? (p) => p : descending ? (p) => n - 1 - p : sortedIndex(list);
  const top = allOnes(list.keyLength);
  const ranges: Range[] = [];
  for (let p = 0; p < n; p++) {
    const i = at(p);
    if (list.isEnd(i)) continue;
    const first = list.value(i);
    const next = p + 1 < n ? at(p + 1) : -1;
    const last = list.isOpen(i) ? top : next >= 0 && list.isEnd(next) ? minusOne(list.value(next)) : first;
    const range: Range = { first, last };
    const comment = list.comment(i);
    if (comment !== undefined) range.comment = comment;
    ranges.push(range);
  }
  return ranges;
}

function sortedIndex(list: ElementList): (position: number) => number {
  const order = Array.from({ length: list.length }, (_, i) => i).sort((a, b) => list.compare(a, b));
  return (p) => order[p]!;
}
