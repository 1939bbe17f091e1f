// Netlink attributes (TLVs): encoding, nesting and decoding.
//
// Layout (linux/netlink.h): u16 nla_len, u16 nla_type, payload. nla_len counts
// the header and the payload *unpadded* ("t1\0" -> 7); the next attribute starts
// at the 4-byte boundary after it. A nest's nla_len includes the padding of its
// last child, because the children are laid out padded inside it.
import { ErrorCodes, netnsError } from '../core/errors.js';
import { NLA_HDRLEN, NLA_TYPE_MASK } from './constants.js';

/** One attribute to send: a leaf with its payload, or a nest of attributes. */
export type Attribute = { type: number; value: Buffer } | { type: number; nested: Attribute[] };

const align4 = (n: number): number => (n + 3) & ~3;
const MAX_NLA_LEN = 0xffff;

export const attr = {
  bytes: (type: number, value: Buffer | Uint8Array): Attribute => ({ type, value: Buffer.from(value) }),
  u8: (type: number, n: number): Attribute => ({ type, value: Buffer.from([n]) }),
  u16: (type: number, n: number): Attribute => {
    const value = Buffer.alloc(2);
    value.writeUInt16LE(n);
    return { type, value };
  },
  u32: (type: number, n: number): Attribute => {
    const value = Buffer.alloc(4);
    value.writeUInt32LE(n >>> 0);
    return { type, value };
  },
  s32: (type: number, n: number): Attribute => {
    const value = Buffer.alloc(4);
    value.writeInt32LE(n);
    return { type, value };
  },
  /** NUL-terminated, as the kernel's NLA_NUL_STRING and ip send names. */
  string: (type: number, s: string): Attribute => ({ type, value: Buffer.from(`${s}\0`) }),
  /** Without a NUL: IFLA_INFO_KIND is sent this way by ip (the kernel accepts both). */
  rawString: (type: number, s: string): Attribute => ({ type, value: Buffer.from(s) }),
  nest: (type: number, nested: Attribute[]): Attribute => ({ type, nested }),
};

/** Bytes an attribute takes, padding after it included. */
export function attributeSize(a: Attribute): number {
  if ('value' in a) return align4(NLA_HDRLEN + a.value.length);
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
  const length = 'value' in a ? NLA_HDRLEN + a.value.length : NLA_HDRLEN + attributesSize(a.nested);
  if (length > MAX_NLA_LEN) {
    throw netnsError(ErrorCodes.NETLINK_INVALID, `netlink attribute ${a.type} is ${length} bytes, over 65535`);
  }
  out.writeUInt16LE(length, offset);
  out.writeUInt16LE(a.type, offset + 2);
  if ('value' in a) {
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
 */
export class AttributeMap {
  readonly #map = new Map<number, Buffer[]>();

  static parse(buffer: Buffer, offset = 0, end = buffer.length): AttributeMap {
    const map = new AttributeMap();
    while (offset + NLA_HDRLEN <= end) {
      const length = buffer.readUInt16LE(offset);
      if (length < NLA_HDRLEN || offset + length > end) {
        throw netnsError(ErrorCodes.NETLINK_MALFORMED, `netlink: malformed attribute at byte ${offset}`);
      }
      const type = buffer.readUInt16LE(offset + 2) & NLA_TYPE_MASK;
      map.#add(type, buffer.subarray(offset + NLA_HDRLEN, offset + length));
      offset += align4(length);
    }
    return map;
  }

  #add(type: number, value: Buffer): void {
    const list = this.#map.get(type);
    if (list) list.push(value);
    else this.#map.set(type, [value]);
  }

  has(type: number): boolean {
    return this.#map.has(type);
  }

  get(type: number): Buffer | undefined {
    return this.#map.get(type)?.[0];
  }

  all(type: number): Buffer[] {
    return this.#map.get(type) ?? [];
  }

  types(): number[] {
    return [...this.#map.keys()];
  }

  u8(type: number): number | undefined {
    const value = this.get(type);
    return value && value.length >= 1 ? value.readUInt8(0) : undefined;
  }

  u16(type: number): number | undefined {
    const value = this.get(type);
    return value && value.length >= 2 ? value.readUInt16LE(0) : undefined;
  }

  u32(type: number): number | undefined {
    const value = this.get(type);
    return value && value.length >= 4 ? value.readUInt32LE(0) : undefined;
  }

  s32(type: number): number | undefined {
    const value = this.get(type);
    return value && value.length >= 4 ? value.readInt32LE(0) : undefined;
  }

  /** A string with its trailing NULs stripped (the kernel sends "veth\0"). */
  string(type: number): string | undefined {
    const value = this.get(type);
    return value === undefined ? undefined : value.toString('utf8').replace(/\0+$/, '');
  }

  nested(type: number): AttributeMap | undefined {
    const value = this.get(type);
    return value === undefined ? undefined : AttributeMap.parse(value);
  }
}
