// nft's userdata: TLVs {u8 type, u8 length, value}, unaligned, that the
// kernel stores and returns untouched (libnftnl udata.c). nft keeps a set's
// key byte order and comment there, and an element's comment and
// INTERVAL_OPEN flag; `nft list` reads them back, so they are written as nft
// writes them. Integers are host-endian (little-endian on the machines this
// package runs on); strings carry their NUL.
import { ErrorCodes, netnsError } from '../core/errors.js';

export type Tlv = { type: number; value: Buffer };

const MAX_VALUE = 0xff;

export const tlv = {
  u32: (type: number, n: number): Tlv => {
    const value = Buffer.alloc(4);
    value.writeUInt32LE(n);
    return { type, value };
  },
  string: (type: number, s: string): Tlv => ({ type, value: Buffer.from(`${s}\0`) }),
};

export function encodeUserdata(list: readonly Tlv[]): Buffer {
  for (const { type, value } of list) {
    // The length is one byte: a longer comment would be cut, and nft refuses it too.
    if (value.length > MAX_VALUE) throw netnsError(ErrorCodes.INVALID_ARG, `nftables: userdata ${type} is ${value.length} bytes, over ${MAX_VALUE}`);
  }
  return Buffer.concat(list.flatMap(({ type, value }) => [Buffer.from([type, value.length]), value]));
}

/** Type -> value; a TLV running past the end ends the parse (what nft does with a cut one). */
export function parseUserdata(buffer: Buffer | undefined): Map<number, Buffer> {
  const out = new Map<number, Buffer>();
  if (!buffer) return out;
  for (let offset = 0; offset + 2 <= buffer.length; ) {
    const type = buffer[offset]!;
    const length = buffer[offset + 1]!;
    if (offset + 2 + length > buffer.length) break;
    out.set(type, buffer.subarray(offset + 2, offset + 2 + length));
    offset += 2 + length;
  }
  return out;
}

/** A string TLV without its NUL. */
export const userdataString = (value: Buffer | undefined): string | undefined => (value === undefined ? undefined : value.toString('utf8').replace(/\0+$/, ''));
