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
import { NLA_F_NESTED, NLM_F_CREATE } from '../netlink/constants.js';
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

/** A range of addresses [first, last] of `bytes`-wide keys, with an optional element comment. */
export interface Range {
  first: bigint;
  last: bigint;
  comment?: string;
}

const MAX_NEST = 0xffff;

// Keys are 4 or 16 bytes (addresses; string keys are made by stringKey): 32
// bits at a time, since every bigint step allocates and a fill converts
// 200,000 keys each way.
export function keyBytes(value: bigint, bytes: number): Buffer {
  // Every byte is written: the pooled, unzeroed allocation is safe and cheap.
  const out = Buffer.allocUnsafe(bytes);
  for (let i = bytes - 4; i >= 0; i -= 4) {
    out.writeUInt32BE(Number(BigInt.asUintN(32, value)), i);
    value >>= 32n;
  }
  return out;
}

export function keyValue(key: Buffer): bigint {
  if (key.length === 4) return BigInt(key.readUInt32BE(0));
  let value = 0n;
  for (let i = 0; i < key.length; i += 4) value = (value << 32n) | BigInt(key.readUInt32BE(i));
  return value;
}

/**
 * The elements of ranges in an interval set, in ascending order as nft sends
 * them; `intoEmptySet`: lead with END 0 as nft does for a set it knows empty.
 * The ranges must not overlap (the caller checks; the kernel refuses with EEXIST).
 */
export function intervalElements(ranges: readonly Range[], bytes: number, intoEmptySet: boolean): WireElement[] {
  // Callers mostly pass sorted lists: checking costs one pass, sorting a copy n log n bigint comparisons.
  const sorted = ranges.every((range, i) => i === 0 || ranges[i - 1]!.first <= range.first) ? ranges : [...ranges].sort((a, b) => (a.first < b.first ? -1 : a.first > b.first ? 1 : 0));
  const allOnes = (1n << BigInt(bytes * 8)) - 1n;
  const out: WireElement[] = [];
  if (intoEmptySet && sorted.length > 0 && sorted[0]!.first !== 0n) out.push({ key: keyBytes(0n, bytes), end: true });
  for (const range of sorted) {
    const start: WireElement = { key: keyBytes(range.first, bytes) };
    if (range.comment !== undefined) start.comment = range.comment;
    if (range.last === allOnes) {
      start.open = true;
      out.push(start);
      continue;
    }
    out.push(start, { key: keyBytes(range.last + 1n, bytes), end: true });
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

// An element nest, written straight into its message's ELEMENTS payload: a
// 100,000-address fill is 200,000 of them, and building Attribute objects
// (five per element) cost more than the kernel's commit. In nft's order:
// END: FLAGS, KEY{DATA_VALUE}; start: KEY{DATA_VALUE}, USERDATA.
const KEY_NEST = NFTA_SET_ELEM_KEY | NLA_F_NESTED;
const align4 = (n: number): number => (n + 3) & ~3;

/** The element's userdata (comment, INTERVAL_OPEN), or undefined when it has none. */
function elementUserdata(element: WireElement): Buffer | undefined {
  if (element.end || (element.comment === undefined && !element.open)) return undefined;
  const userdata: Tlv[] = [];
  if (element.comment !== undefined) userdata.push(tlv.string(UDATA_SET_ELEM_COMMENT, element.comment));
  if (element.open) userdata.push(tlv.u32(UDATA_SET_ELEM_FLAGS, SET_ELEM_F_INTERVAL_OPEN));
  return encodeUserdata(userdata);
}

/** Bytes the element nest takes, its header and padding included. */
function elementSize(element: WireElement, userdata: Buffer | undefined): number {
  return 4 + (element.end ? 8 : 0) + 8 + align4(element.key.length) + (userdata ? align4(4 + userdata.length) : 0);
}

/** Writes the nest at `at` of a zeroed buffer (padding stays zero); returns where it ends. */
function writeElement(out: Buffer, at: number, type: number, element: WireElement, userdata: Buffer | undefined, size: number): number {
  out.writeUInt16LE(size, at);
  out.writeUInt16LE(type, at + 2);
  let o = at + 4;
  if (element.end) {
    out.writeUInt16LE(8, o);
    out.writeUInt16LE(NFTA_SET_ELEM_FLAGS, o + 2);
    out.writeUInt32BE(NFT_SET_ELEM_INTERVAL_END, o + 4);
    o += 8;
  }
  const keyLength = element.key.length;
  out.writeUInt16LE(8 + align4(keyLength), o);
  out.writeUInt16LE(KEY_NEST, o + 2);
  out.writeUInt16LE(4 + keyLength, o + 4);
  out.writeUInt16LE(NFTA_DATA_VALUE, o + 6);
  out.set(element.key, o + 8);
  o += 8 + align4(keyLength);
  if (userdata) {
    out.writeUInt16LE(4 + userdata.length, o);
    out.writeUInt16LE(NFTA_SET_ELEM_USERDATA, o + 2);
    out.set(userdata, o + 4);
    o += align4(4 + userdata.length);
  }
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
export function elementMessages(kind: 'add' | 'delete', target: ElementTarget, elements: readonly WireElement[], what: string): NetlinkRequest[] {
  const head: Attribute[] = [attr.string(NFTA_SET_ELEM_LIST_TABLE, target.table), attr.string(NFTA_SET_ELEM_LIST_SET, target.set)];
  if (kind === 'add' && target.setId !== undefined) head.push(be32(NFTA_SET_ELEM_LIST_SET_ID, target.setId));
  const messages: NetlinkRequest[] = [];
  const userdata = elements.map(elementUserdata);
  const sizes = elements.map((element, i) => elementSize(element, userdata[i]));
  let index = 0;
  for (let first = 0; first < elements.length; ) {
    // As many elements as fit after the ELEMENTS nest's own 4-byte header (one always does: a nest is under 600 bytes).
    let size = 4;
    let last = first;
    while (last < elements.length && size + sizes[last]! <= MAX_NEST) size += sizes[last++]!;
    const payload = Buffer.alloc(size - 4);
    let offset = 0;
    for (let i = first; i < last; i++) offset = writeElement(payload, offset, (++index & 0xffff) | NLA_F_NESTED, elements[i]!, userdata[i], sizes[i]!);
    messages.push({
      type: nftType(kind === 'add' ? NFT_MSG_NEWSETELEM : NFT_MSG_DELSETELEM),
      flags: kind === 'add' ? NLM_F_CREATE : 0,
      header: nfgenmsg(target.family),
      attributes: [...head, attr.bytes(NFTA_SET_ELEM_LIST_ELEMENTS | NLA_F_NESTED, payload)],
      what,
    });
    // nft numbers the element that did not fit before starting the next message, and uses that number up.
    if (last < elements.length) index++;
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

/** The elements of one NEWSETELEM message of a dump (nests without NLA_F_NESTED; the parser masks it anyway). */
export function parseElements(payload: Buffer, headerSize: number): WireElement[] {
  const list = AttributeMap.parse(payload, headerSize).nested(NFTA_SET_ELEM_LIST_ELEMENTS);
  if (!list) return [];
  const out: WireElement[] = [];
  // The kernel numbers every element nest NFTA_LIST_ELEM (1).
  for (const nested of list.all(NFTA_LIST_ELEM)) {
    const raw = AttributeMap.parse(nested);
    const key = raw.nested(NFTA_SET_ELEM_KEY)?.get(NFTA_DATA_VALUE);
    if (!key) continue;
    const element: WireElement = { key };
    const flags = raw.get(NFTA_SET_ELEM_FLAGS);
    if (flags && flags.length >= 4 && (flags.readUInt32BE(0) & NFT_SET_ELEM_INTERVAL_END) !== 0) element.end = true;
    const userdata = parseUserdata(raw.get(NFTA_SET_ELEM_USERDATA));
    const comment = userdataString(userdata.get(UDATA_SET_ELEM_COMMENT));
    if (comment !== undefined) element.comment = comment;
    const udFlags = userdata.get(UDATA_SET_ELEM_FLAGS);
    if (udFlags && udFlags.length >= 4 && (udFlags.readUInt32LE(0) & SET_ELEM_F_INTERVAL_OPEN) !== 0) element.open = true;
    out.push(element);
  }
  return out;
}

/**
 * Ranges back from an interval set's elements (any order, as dumps give them
 * descending): each start runs to just before the next END above it, to
 * all-ones when open; a start with no END after it is a single key.
 */
export function rangesOf(elements: readonly WireElement[], bytes: number): Range[] {
  const sorted = elements.map((e) => ({ e, value: keyValue(e.key) })).sort((a, b) => (a.value < b.value ? -1 : a.value > b.value ? 1 : a.e.end ? -1 : b.e.end ? 1 : 0));
  const allOnes = (1n << BigInt(bytes * 8)) - 1n;
  const ranges: Range[] = [];
  for (let i = 0; i < sorted.length; i++) {
    const { e, value } = sorted[i]!;
    if (e.end) continue;
    const next = sorted[i + 1];
    const last = e.open ? allOnes : next?.e.end ? next.value - 1n : value;
    const range: Range = { first: value, last };
    if (e.comment !== undefined) range.comment = e.comment;
    ranges.push(range);
  }
  return ranges;
}
