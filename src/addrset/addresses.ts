// IP addresses and CIDR prefixes as the address sets hold them: validated and
// put in canonical text (the form nft lists them in) before anything is sent.
import { ErrorCodes, netnsError } from '../core/errors.js';
import { isIPv6 } from '../core/ip.js';
import type { KeyValue } from '../nftables/elements.js';
import { formatAddress, parseAddress } from '../netlink/validate.js';

/** An address family by IP version: 4 or 6. */
export type Family = 4 | 6;

/**
 * One element of an address set as a backend gets and gives it: an address,
 * prefix or range, checked and in the canonical text nft lists.
 */
export interface Entry {
  /** IPv4 or IPv6. */
  family: Family;
  /** Canonical text: an address, or network/len for a prefix shorter than the full length. */
  text: string;
  /** First address covered, as an integer: a number for IPv4, a bigint for IPv6. */
  first: KeyValue;
  /** Last address covered, likewise (equal to `first` for a single address). */
  last: KeyValue;
}

const BITS: Record<Family, number> = { 4: 32, 6: 128 };

// netlink's parser, which reads IPv6 as ip and nft do (an IPv4 tail only as a
// plain dotted quad, never "::10.0.0.1" taken for "::ffff:10.0.0.1").
// Its value and its canonical text, made once.
function v6Address(address: string): { value: bigint; text: string } {
  const { bytes, text } = parseAddress(address);
  return { value: (bytes.readBigUInt64BE(0) << 64n) | bytes.readBigUInt64BE(8), text };
}

function v4ToText(value: bigint): string {
  return v4NumberText(Number(value));
}

// Numbers, not bigints: a read turns 100,000 keys into text.
function v4NumberText(n: number): string {
  return `${n >>> 24}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`;
}

// As nft prints it (inet_ntop): RFC 5952 text, with an IPv4-mapped or
// IPv4-compatible address's tail as a dotted quad ("::ffff:10.0.0.1").
function v6ToText(value: bigint): string {
  const bytes = Buffer.alloc(16);
  bytes.writeBigUInt64BE(value >> 64n, 0);
  bytes.writeBigUInt64BE(value & 0xffff_ffff_ffff_ffffn, 8);
  return formatAddress(bytes);
}

const DOT = 46;
const ZERO = 48;

/**
 * A plain dotted quad's value, or -1: four decimal parts of 0-255 without
 * leading zeros (what nft prints; octal or hex forms are refused). Pod IPs
 * are mostly such addresses and a set holds up to 100,000 of them: read by
 * character codes, a tenth of the cost of a regular expression or ipaddr.js.
 */
function plainV4Value(input: string): number {
  let value = 0;
  let part = 0;
  let digits = 0;
  let parts = 0;
  for (let i = 0; i <= input.length; i++) {
    const code = i < input.length ? input.charCodeAt(i) : DOT;
    if (code === DOT) {
      if (digits === 0 || parts === 4) return -1;
      value = value * 256 + part;
      parts++;
      part = 0;
      digits = 0;
      continue;
    }
    const digit = code - ZERO;
    if (digit < 0 || digit > 9 || (digits > 0 && part === 0)) return -1;
    part = part * 10 + digit;
    if (part > 255) return -1;
    digits++;
  }
  return parts === 4 ? value : -1;
}

function plainV4(input: string): Entry | undefined {
  const value = plainV4Value(input);
  return value < 0 ? undefined : { family: 4, text: input, first: value, last: value };
}

/** Parses one address or CIDR prefix; returns a reason string when it is not valid. */
export function parseEntry(input: unknown): Entry | string {
  if (typeof input !== 'string') return 'not a string';
  const fast = plainV4(input);
  // Stryker disable next-line ConditionalExpression: a shortcut for the common case; the path below gives the same entry
  if (fast) return fast;
  const [address, lengthText, extra] = input.trim().split('/') as [string, string?, string?];
  if (extra !== undefined) return 'more than one "/"';
  // The same reader as the shortcut's: a plain dotted quad is the only IPv4 form nft lists.
  const v4 = plainV4Value(address);
  const family: Family | 0 = v4 >= 0 ? 4 : isIPv6(address) && !address.includes('%') ? 6 : 0;
  if (family === 0) return 'not an IPv4 or IPv6 address';
  const bits = BITS[family];
  let length = bits;
  if (lengthText !== undefined) {
    if (!/^\d{1,3}$/.test(lengthText) || Number(lengthText) > bits) return `prefix length must be 0 to ${bits}`;
    length = Number(lengthText);
  }
  const v6 = family === 6 ? v6Address(address) : undefined;
  const value = v6 ? v6.value : BigInt(v4);
  const hostMask = (1n << BigInt(bits - length)) - 1n;
  if ((value & hostMask) !== 0n) {
    const network = value & ~hostMask;
    return `host bits set (did you mean ${family === 4 ? v4ToText(network) : v6ToText(network)}/${length}?)`;
  }
  const base = v6 ? v6.text : v4ToText(value); // no host bits: the address is the network
  const text = length === bits ? base : `${base}/${length}`;
  const last = value | hostMask;
  return family === 4 ? { family, text, first: Number(value), last: Number(last) } : { family, text, first: value, last };
}

/** Parses a list, rejecting the whole call (naming every bad entry) before anything is sent. */
export function parseEntries(inputs: unknown): Entry[] {
  if (!Array.isArray(inputs)) throw netnsError(ErrorCodes.ADDRSET_INVALID_ADDRESS, 'addresses must be an array of strings');
  const entries: Entry[] = [];
  const bad: string[] = [];
  for (const input of inputs) {
    const parsed = parseEntry(input);
    if (typeof parsed === 'string') bad.push(`${JSON.stringify(input)} (${parsed})`);
    else entries.push(parsed);
  }
  if (bad.length > 0) {
    const shown = bad.slice(0, 10).join(', ') + (bad.length > 10 ? `, and ${bad.length - 10} more` : '');
    throw Object.assign(netnsError(ErrorCodes.ADDRSET_INVALID_ADDRESS, `invalid addresses: ${shown}`), { invalid: bad.length });
  }
  return entries;
}

/** Turns nft's JSON element (string, prefix or range) back into canonical text. */
export function entryFromNft(element: unknown, family: Family): Entry | undefined {
  if (typeof element === 'string') return asEntry(element);
  // An element with a comment, timeout or counter comes wrapped: { elem: { val, comment, ... } }.
  const wrapped = (element as { elem?: { val?: unknown } }).elem;
  if (wrapped) return entryFromNft(wrapped.val, family);
  const prefix = (element as { prefix?: { addr: string; len: number } }).prefix;
  if (prefix) return asEntry(`${prefix.addr}/${prefix.len}`);
  const range = (element as { range?: [string, string] }).range;
  if (range) {
    const [first, last] = range.map((text) => asEntry(text));
    if (first && last) return { family, text: `${first.text}-${last.text}`, first: first.first, last: last.last };
  }
  return undefined;
}

function asEntry(text: string): Entry | undefined {
  const parsed = parseEntry(text);
  return typeof parsed === 'string' ? undefined : parsed;
}

/**
 * The range [first, last] as nft lists it: an address, a prefix when the
 * range is one, else "first-last" (reading a set's intervals back from the kernel).
 */
export function entryFromRange(family: Family, first: KeyValue, last: KeyValue): Entry {
  if (family === 4) return { family, text: v4RangeText(Number(first), Number(last)), first: Number(first), last: Number(last) };
  first = BigInt(first);
  last = BigInt(last);
  const size = last - first + 1n;
  // A prefix: the size a power of two and the first address aligned to it.
  if (first !== last && (size & (size - 1n)) === 0n && (first & (size - 1n)) === 0n) {
    const hostBits = size.toString(2).length - 1;
    return { family, text: `${v6ToText(first)}/${BITS[family] - hostBits}`, first, last };
  }
  return { family, text: first === last ? v6ToText(first) : `${v6ToText(first)}-${v6ToText(last)}`, first, last };
}

/** entryFromRange's text for IPv4, in numbers (exact: addresses are below 2^32). */
function v4RangeText(first: number, last: number): string {
  if (first === last) return v4NumberText(first);
  const size = last - first + 1;
  // A prefix: the size a power of two and the first address aligned to it.
  const hostBits = Math.log2(size);
  if (Number.isInteger(hostBits) && first % size === 0) return `${v4NumberText(first)}/${32 - hostBits}`;
  return `${v4NumberText(first)}-${v4NumberText(last)}`;
}

/** Parses an element as nft lists it: an address, a prefix, or a range "a-b". */
export function parseKernelText(text: string): Entry | undefined {
  const dash = text.indexOf('-');
  if (dash < 0) return asEntry(text);
  const first = asEntry(text.slice(0, dash));
  const last = asEntry(text.slice(dash + 1));
  if (!first || !last || first.family !== last.family) return undefined;
  return { family: first.family, text, first: first.first, last: last.last };
}
