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
import { attr, attributeSize, AttributeMap, type Attribute } from '../netlink/attributes.js';
import { NLM_F_CREATE } from '../netlink/constants.js';
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
import { be32, nest, nfgenmsg, type TableName } from './messages.js';
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

export function keyBytes(value: bigint, bytes: number): Buffer {
  const out = Buffer.alloc(bytes);
  for (let i = bytes - 1; i >= 0; i--) {
    out[i] = Number(value & 0xffn);
    value >>= 8n;
  }
  return out;
}

export function keyValue(key: Buffer): bigint {
  let value = 0n;
  for (const byte of key) value = (value << 8n) | BigInt(byte);
  return value;
}

/**
 * The elements of ranges in an interval set, in ascending order as nft sends
 * them; `intoEmptySet`: lead with END 0 as nft does for a set it knows empty.
 * The ranges must not overlap (the caller checks; the kernel refuses with EEXIST).
 */
export function intervalElements(ranges: readonly Range[], bytes: number, intoEmptySet: boolean): WireElement[] {
  const sorted = [...ranges].sort((a, b) => (a.first < b.first ? -1 : a.first > b.first ? 1 : 0));
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

function elementAttributes(element: WireElement): Attribute[] {
  const key = nest(NFTA_SET_ELEM_KEY, [attr.bytes(NFTA_DATA_VALUE, element.key)]);
  if (element.end) return [be32(NFTA_SET_ELEM_FLAGS, NFT_SET_ELEM_INTERVAL_END), key];
  const userdata: Tlv[] = [];
  if (element.comment !== undefined) userdata.push(tlv.string(UDATA_SET_ELEM_COMMENT, element.comment));
  if (element.open) userdata.push(tlv.u32(UDATA_SET_ELEM_FLAGS, SET_ELEM_F_INTERVAL_OPEN));
  return userdata.length === 0 ? [key] : [key, attr.bytes(NFTA_SET_ELEM_USERDATA, encodeUserdata(userdata))];
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
  let batch: Attribute[] = [];
  let size = 4; // the ELEMENTS nest's own header
  let index = 0;
  const flush = () => {
    messages.push({
      type: nftType(kind === 'add' ? NFT_MSG_NEWSETELEM : NFT_MSG_DELSETELEM),
      flags: kind === 'add' ? NLM_F_CREATE : 0,
      header: nfgenmsg(target.family),
      attributes: [...head, nest(NFTA_SET_ELEM_LIST_ELEMENTS, batch)],
      what,
    });
    batch = [];
    size = 4;
  };
  for (const element of elements) {
    let encoded = nest(++index & 0xffff, elementAttributes(element));
    let length = attributeSize(encoded);
    if (size + length > MAX_NEST) {
      flush();
      encoded = nest(++index & 0xffff, elementAttributes(element));
      length = attributeSize(encoded);
    }
    batch.push(encoded);
    size += length;
  }
  if (batch.length > 0) flush();
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
