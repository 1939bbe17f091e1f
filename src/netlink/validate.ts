// Checks made before anything is sent, so bad input is a coded error naming
// the bad value rather than a bare EINVAL from the kernel (or, worse, a
// silently truncated name). Addresses are parsed and printed with ipaddr.js
// (RFC 5952 text for IPv6).
import ipaddr from 'ipaddr.js';
import { DOTTED_QUAD } from '../core/ip.js';
import { checkUint, invalid } from './checks.js';
import { AF_INET, AF_INET6, AF_UNSPEC } from './constants.js';

export { checkUint, invalid };
export { own } from '../core/own.js';

const IFNAMSIZ = 16;

/** As the kernel's dev_valid_name (1-15 bytes, not . or .., no '/', ':' or whitespace), and no control characters. */
export function checkLinkName(name: unknown, what = 'interface name'): string {
  if (typeof name !== 'string' || name === '') throw invalid(`${what} must be a non-empty string, got ${JSON.stringify(name)}`);
  if (Buffer.byteLength(name) >= IFNAMSIZ) throw invalid(`${what} ${JSON.stringify(name)} is over 15 bytes`);
  // '%' makes the kernel take the name as a template ("br%d" becomes br0): the link could not be found by it.
  // Control characters the kernel takes, but they would reach every log and terminal that prints the name.
  if (name === '.' || name === '..' || /[/:%\s\p{Cc}]/u.test(name) || !name.isWellFormed()) {
    throw invalid(`${what} ${JSON.stringify(name)} is not allowed (no '/', ':', '%', whitespace, control characters, lone surrogates, '.' or '..')`);
  }
  return name;
}

export function checkIndex(index: unknown, what = 'interface index'): number {
  if (!Number.isSafeInteger(index) || (index as number) <= 0 || (index as number) > 0x7fffffff) {
    throw invalid(`${what} must be a positive integer, got ${String(index)}`);
  }
  return index as number;
}

/** "02:00:00:aa:bb:cc" -> 6 bytes: an Ethernet MAC, as every link kind made here has. */
export function parseMac(mac: unknown): Buffer {
  const bytes = parseHardwareAddress(mac, 'MAC address');
  if (bytes.length !== 6) throw invalid(`bad MAC address ${JSON.stringify(mac)} (expected six hex pairs like 02:00:00:00:00:01)`);
  return bytes;
}

/** Hex pairs separated by ':', 1 to 32 bytes (MAX_ADDR_LEN): any link layer's address. */
export function parseHardwareAddress(text: unknown, what: string): Buffer {
  if (typeof text !== 'string' || !/^[0-9a-f]{2}(:[0-9a-f]{2}){0,31}$/i.test(text)) {
    throw invalid(`bad ${what} ${JSON.stringify(text)} (expected hex pairs like 02:00:00:00:00:01)`);
  }
  return Buffer.from(text.replaceAll(':', ''), 'hex');
}

export function formatMac(bytes: Buffer): string {
  return [...bytes].map((b) => b.toString(16).padStart(2, '0')).join(':');
}

export interface ParsedAddress {
  family: typeof AF_INET | typeof AF_INET6;
  bytes: Buffer;
  text: string;
}

export interface ParsedPrefix extends ParsedAddress {
  prefixLength: number;
}

/**
 * An IPv4 (dotted quad only) or IPv6 address, without zone. IPv4 is matched
 * here rather than by ipaddr.js, which takes a microsecond per address on the
 * hot path of every request and accepts forms (octal, hex, "10.1") that are
 * refused anyway; IPv6 goes to ipaddr.js.
 */
export function parseAddress(text: unknown, what = 'address'): ParsedAddress {
  if (typeof text !== 'string') throw invalid(`${what} must be a string, got ${String(text)}`);
  const quad = DOTTED_QUAD.exec(text);
  if (quad) return { family: AF_INET, bytes: quadBytes(quad), text };
  const hex = text.includes(':') && !text.includes('%') ? withoutDottedTail(text) : undefined;
  if (hex === undefined || !ipaddr.IPv6.isValid(hex)) throw invalid(`bad ${what} ${JSON.stringify(text)}`);
  const bytes = Buffer.from(ipaddr.IPv6.parse(hex).toByteArray());
  return { family: AF_INET6, bytes, text: formatAddress(bytes) };
}

/**
 * An IPv6 text with its trailing dotted quad as two hex groups ("::ffff:10.0.0.1"
 * -> "::ffff:a00:1"), undefined if that quad is not one. ipaddr.js would read
 * "::10.0.0.1" as "::ffff:10.0.0.1" and take "::ffff:010.0.0.1", which
 * inet_pton and ip refuse.
 */
function withoutDottedTail(text: string): string | undefined {
  if (!text.includes('.')) return text;
  const colon = text.lastIndexOf(':');
  const quad = DOTTED_QUAD.exec(text.slice(colon + 1));
  if (!quad) return undefined;
  const group = (high: string, low: string): string => ((+high << 8) | +low).toString(16);
  return `${text.slice(0, colon + 1)}${group(quad[1]!, quad[2]!)}:${group(quad[3]!, quad[4]!)}`;
}

/** "10.0.0.1/24"; without "/n", a host prefix (/32, /128) when `hostIfBare`. */
export function parsePrefix(text: unknown, what = 'address', hostIfBare = true): ParsedPrefix {
  if (typeof text !== 'string') throw invalid(`${what} must be a string, got ${String(text)}`);
  const slash = text.indexOf('/');
  const address = parseAddress(slash < 0 ? text : text.slice(0, slash), what);
  const max = address.family === AF_INET ? 32 : 128;
  if (slash < 0) {
    if (!hostIfBare) throw invalid(`${what} ${JSON.stringify(text)} needs a prefix length`);
    return withLength(address, max);
  }
  const length = text.slice(slash + 1);
  // No leading zeros: ip reads "/024" as octal (20).
  if (!/^(0|[1-9]\d{0,2})$/.test(length) || Number(length) > max) {
    throw invalid(`bad prefix length in ${what} ${JSON.stringify(text)} (0-${max})`);
  }
  return withLength(address, Number(length));
}

// allocUnsafe: small buffers then come from Node's pool rather than each
// with an ArrayBuffer of its own, which costs the collector far more.
function quadBytes(quad: RegExpExecArray): Buffer {
  const bytes = Buffer.allocUnsafe(4);
  for (let i = 0; i < 4; i++) bytes[i] = +quad[i + 1]!;
  return bytes;
}

// Not an object spread: V8 spends a microsecond on one here.
function withLength({ family, bytes, text }: ParsedAddress, prefixLength: number): ParsedPrefix {
  return { family, bytes, text, prefixLength };
}

/** A family as callers give it: 4, 6, or undefined for both; anything else refused. */
export function checkFamily(family: unknown): 4 | 6 | undefined {
  if (family === undefined || family === 4 || family === 6) return family;
  throw invalid(`family must be 4 or 6, got ${String(family)}`);
}

/** AF_INET, AF_INET6, or AF_UNSPEC (both) for a dump's header. */
export function addressFamily(family: 4 | 6 | undefined): number {
  return family === 4 ? AF_INET : family === 6 ? AF_INET6 : AF_UNSPEC;
}

export function familyName(family: number): string {
  return family === AF_INET ? 'IPv4' : 'IPv6';
}

export function checkSameFamily(a: ParsedAddress, b: ParsedAddress, what: string): void {
  if (a.family !== b.family) {
    throw invalid(`${what} ${b.text} is ${familyName(b.family)} but ${a.text} is ${familyName(a.family)}`);
  }
}

/** Address bytes received -> text (RFC 5952 for IPv6, an IPv4 tail as inet_ntop prints it). */
export function formatAddress(bytes: Buffer): string {
  if (bytes.length === 4) return `${bytes[0]}.${bytes[1]}.${bytes[2]}.${bytes[3]}`;
  const embedded = embeddedIpv4Prefix(bytes);
  if (embedded !== undefined) return `${embedded}${formatAddress(bytes.subarray(12))}`;
  return ipaddr.fromByteArray([...bytes]).toString();
}

/**
 * "::ffff:" or "::" when an IPv6 address is printed with its IPv4 tail as a
 * dotted quad, as inet_ntop (and so ip) prints it: IPv4-mapped, and
 * IPv4-compatible unless the tail's first half is zero too ("::1" stays).
 */
function embeddedIpv4Prefix(bytes: Buffer): string | undefined {
  if (bytes.length !== 16 || bytes.subarray(0, 10).some((b) => b !== 0)) return undefined;
  const word5 = bytes.readUInt16BE(10);
  if (word5 === 0xffff) return '::ffff:';
  return word5 === 0 && bytes.readUInt16BE(12) !== 0 ? '::' : undefined;
}

/** Prefix bytes with the host part cleared, as the kernel stores route destinations. */
export function networkOf(prefix: ParsedPrefix): Buffer {
  const out = Buffer.from(prefix.bytes);
  for (let bit = prefix.prefixLength; bit < out.length * 8; bit++) out[bit >> 3]! &= ~(0x80 >> (bit & 7));
  return out;
}

/** Whether two prefixes share any address (never across families). */
export function prefixesOverlap(a: ParsedPrefix, b: ParsedPrefix): boolean {
  if (a.family !== b.family) return false;
  const shorter = Math.min(a.prefixLength, b.prefixLength);
  return networkOf({ ...a, prefixLength: shorter }).equals(networkOf({ ...b, prefixLength: shorter }));
}
