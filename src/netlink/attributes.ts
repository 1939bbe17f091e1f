// Netlink attributes (TLVs): encoding, nesting and decoding.
//
// Layout (linux/netlink.h): u16 nla_len, u16 nla_type, payload. nla_len counts
// the header and the payload *unpadded* ("t1\0" -> 7); the next attribute starts
// at the 4-byte boundary after it. A nest's nla_len includes the padding of its
// last child, because the children are laid out padded inside it.
import { ErrorCodes, netnsError } from '../core/errors.js';
import { NLA_HDRLEN, NLA_TYPE_MASK } from './constants.js';

/** One attribute to send: a leaf with its payload, or a nest of attributes. */
export type Attribute =
  | {
      /** The attribute type (e.g. IFLA_IFNAME). */
      type: number;
      /** The payload, without header or padding (both are added when sent). */
      value: Buffer;
    }
  | {
      /** The attribute type, with NLA_F_NESTED or'd in where the kernel wants it. */
      type: number;
      /** The attributes inside the nest. */
      nested: Attribute[];
    };

const align4 = (n: number): number => (n + 3) & ~3;
const MAX_NLA_LEN = 0xffff;

/** Builders of netlink attributes (TLVs) for NetlinkHandle requests the typed parts do not cover: bytes, integers, strings, nested. */
export const attr = {
  /** A Buffer is taken as it is (not copied): it is read when the request is sent. */
  bytes: (type: number, value: Buffer | Uint8Array): Attribute => ({ type, value: Buffer.isBuffer(value) ? value : Buffer.from(value) }),
  /** One byte. */
  u8: (type: number, n: number): Attribute => ({ type, value: Buffer.from([n]) }),
  /** Little-endian: netlink integers are in host order, and both targets (x64, arm64) are little-endian. */
  u16: (type: number, n: number): Attribute => {
    const value = Buffer.alloc(2);
    value.writeUInt16LE(n);
    return { type, value };
  },
  /** Unsigned, little-endian as u16; a negative n is taken modulo 2^32. */
  u32: (type: number, n: number): Attribute => {
    const value = Buffer.alloc(4);
    value.writeUInt32LE(n >>> 0);
    return { type, value };
  },
  /** Signed, little-endian as u16 (e.g. an nsid, where -1 means none). */
  s32: (type: number, n: number): Attribute => {
    const value = Buffer.alloc(4);
    value.writeInt32LE(n);
    return { type, value };
  },
  /** NUL-terminated, as the kernel's NLA_NUL_STRING and ip send names. */
  string: (type: number, s: string): Attribute => ({ type, value: Buffer.from(`${s}\0`) }),
  /** Without a NUL: IFLA_INFO_KIND is sent this way by ip (the kernel accepts both). */
  rawString: (type: number, s: string): Attribute => ({ type, value: Buffer.from(s) }),
  /** A nest of attributes; `type` is sent as given, so or NLA_F_NESTED into it where the kernel wants it. */
  nest: (type: number, nested: Attribute[]): Attribute => ({ type, nested }),
};

// Own properties only: `'value' in a` would take a value from a polluted Object.prototype.
function isLeaf(a: Attribute): a is { type: number; value: Buffer } {
  return Object.hasOwn(a, 'value');
}

/** Bytes an attribute takes, padding after it included. */
export function attributeSize(a: Attribute): number {
  if (isLeaf(a)) return align4(NLA_HDRLEN + a.value.length);
  return NLA_HDRLEN + attributesSize(a.nested);
}

export function attributesSize(list: readonly Attribute[]): number {
  return list.reduce((sum, a) => sum + attributeSize(a), 0);
}

/** Writes the attributes into `out` at `offset` (zeroed padding); returns the end offset. */
export function writeAttributes(out: Buffer, offset: number, list: readonly Attribute[]): number {
  for (const a of list) offset = writeAttribute(out, offset, a);
  return offset;
}

function writeAttribute(out: Buffer, offset: number, a: Attribute): number {
  // An over-long nla_len wraps silently and the kernel truncates the nest
  // (reference pitfall 3): refuse it here instead.
  const length = isLeaf(a) ? NLA_HDRLEN + a.value.length : NLA_HDRLEN + attributesSize(a.nested);
  if (length > MAX_NLA_LEN) {
    throw netnsError(ErrorCodes.NETLINK_INVALID, `netlink attribute ${a.type} is ${length} bytes, over 65535`);
  }
  out.writeUInt16LE(length, offset);
  out.writeUInt16LE(a.type, offset + 2);
  if (isLeaf(a)) {
    a.value.copy(out, offset + NLA_HDRLEN);
    return offset + align4(length);
  }
  return writeAttributes(out, offset + NLA_HDRLEN, a.nested);
}

export function encodeAttributes(list: readonly Attribute[]): Buffer {
  const out = Buffer.alloc(attributesSize(list));
  writeAttributes(out, 0, list);
  return out;
}

/**
 * Attributes received: type (NLA_F_NESTED and NLA_F_NET_BYTEORDER masked off,
 * as nft sets them and the kernel's own dumps do not) -> payloads in order.
 * Unknown types are kept and simply never asked for (new kernels add some).
 * Only offsets are kept; a payload becomes a Buffer when asked for (a dump of
 * 10,000 routes would otherwise make 70,000 views nobody reads). A Map, not an
 * array indexed by type: a polluted Object.prototype[3] must not read as an
 * attribute, and types run to 0x3fff.
 */
export class AttributeMap {
  readonly #buffer: Buffer;
  /** By type: where the first payload starts; its end is in its own header. */
  readonly #start = new Map<number, number>();
  /** By type: where payloads after the first start (rare). */
  #repeats?: Map<number, number[]>;

  private constructor(buffer: Buffer) {
    this.#buffer = buffer;
  }

  /** The attributes in buffer[offset, end); malformed lengths are ERR_NETNS_NETLINK_MALFORMED. */
  static parse(buffer: Buffer, offset = 0, end = buffer?.length): AttributeMap {
    if (!Buffer.isBuffer(buffer)) throw netnsError(ErrorCodes.INVALID_ARG, 'AttributeMap.parse takes a Buffer');
    if (!Number.isSafeInteger(offset) || !Number.isSafeInteger(end) || offset < 0) throw netnsError(ErrorCodes.INVALID_ARG, 'AttributeMap.parse: offset and end must be integers');
    // The attributes follow a fixed header (ifinfomsg, rtmsg...): a message too short for it is cut.
    if (offset > end) throw netnsError(ErrorCodes.NETLINK_MALFORMED, `netlink: malformed message: ${end} bytes, its header alone takes ${offset}`);
    const map = new AttributeMap(buffer);
    while (offset + NLA_HDRLEN <= end) {
      const length = buffer.readUInt16LE(offset);
      if (length < NLA_HDRLEN || offset + length > end) {
        throw netnsError(ErrorCodes.NETLINK_MALFORMED, `netlink: malformed attribute at byte ${offset}`);
      }
      map.#add(buffer.readUInt16LE(offset + 2) & NLA_TYPE_MASK, offset + NLA_HDRLEN);
      offset += align4(length);
    }
    return map;
  }

  #add(type: number, start: number): void {
    if (!this.#start.has(type)) {
      this.#start.set(type, start);
      return;
    }
    this.#repeats ??= new Map();
    const list = this.#repeats.get(type);
    if (list) list.push(start);
    else this.#repeats.set(type, [start]);
  }

  #end(start: number): number {
    return start - NLA_HDRLEN + this.#buffer.readUInt16LE(start - NLA_HDRLEN);
  }

  #length(type: number): number {
    const start = this.#start.get(type);
    return start === undefined ? -1 : this.#end(start) - start;
  }

  /** Whether an attribute of this type is there. */
  has(type: number): boolean {
    return this.#start.has(type);
  }

  /** The first payload of this type (a view, not a copy), or undefined. */
  get(type: number): Buffer | undefined {
    const start = this.#start.get(type);
    return start === undefined ? undefined : this.#buffer.subarray(start, this.#end(start));
  }

  /** Every payload of this type, in order. */
  all(type: number): Buffer[] {
    const first = this.get(type);
    if (first === undefined) return [];
    return [first, ...(this.#repeats?.get(type) ?? []).map((start) => this.#buffer.subarray(start, this.#end(start)))];
  }

  /** The first payload of this type read as an unsigned 8-bit number. */
  u8(type: number): number | undefined {
    return this.#length(type) >= 1 ? this.#buffer.readUInt8(this.#start.get(type)!) : undefined;
  }

  /** The first payload of this type read as an unsigned 16-bit number (host order). */
  u16(type: number): number | undefined {
    return this.#length(type) >= 2 ? this.#buffer.readUInt16LE(this.#start.get(type)!) : undefined;
  }

  /** The first payload of this type read as an unsigned 32-bit number (host order). */
  u32(type: number): number | undefined {
    return this.#length(type) >= 4 ? this.#buffer.readUInt32LE(this.#start.get(type)!) : undefined;
  }

  /** The first payload of this type read as a signed 32-bit number (host order). */
  s32(type: number): number | undefined {
    return this.#length(type) >= 4 ? this.#buffer.readInt32LE(this.#start.get(type)!) : undefined;
  }

  /** A string with its trailing NULs stripped (the kernel sends "veth\0"). */
  string(type: number): string | undefined {
    const start = this.#start.get(type);
    return start === undefined ? undefined : this.#buffer.toString('utf8', start, this.#end(start)).replace(/\0+$/, '');
  }

  /** The first payload of this type parsed as nested attributes. */
  nested(type: number): AttributeMap | undefined {
    const start = this.#start.get(type);
    return start === undefined ? undefined : AttributeMap.parse(this.#buffer, start, this.#end(start));
  }
}
