// Rule expressions (nf_tables.h NFTA_EXPR_*), each laid out as nft 1.0.6
// sends it (attribute order included, so captures compare byte for byte:
// test/unit/nftables-rules.test.ts), the address matches nft makes of
// `ip saddr X` and `ip daddr != P/n` in an inet table, and the verdicts
// `return` and `goto CHAIN`.
import type { Attribute } from '../netlink/attributes.js';
import { attr } from '../netlink/attributes.js';
import { networkOf, type ParsedPrefix } from '../netlink/validate.js';
import { NFTA_DATA_VALUE, NFTA_LIST_ELEM } from './constants.js';
import { be32, nest } from './messages.js';

const NFTA_EXPR_NAME = 1;
const NFTA_EXPR_DATA = 2;
const NFTA_META_DREG = 1;
const NFTA_META_KEY = 2;
const NFT_META_NFPROTO = 15;
const NFT_META_OIFNAME = 7;
/** IFNAMSIZ: an interface name as the kernel compares it, NUL-padded. */
const IFNAMSIZ = 16;
const NFTA_CMP_SREG = 1;
const NFTA_CMP_OP = 2;
const NFTA_CMP_DATA = 3;
const NFTA_PAYLOAD_DREG = 1;
const NFTA_PAYLOAD_BASE = 2;
const NFTA_PAYLOAD_OFFSET = 3;
const NFTA_PAYLOAD_LEN = 4;
const NFT_PAYLOAD_NETWORK_HEADER = 1;
const NFTA_BITWISE_SREG = 1;
const NFTA_BITWISE_DREG = 2;
const NFTA_BITWISE_LEN = 3;
const NFTA_BITWISE_MASK = 4;
const NFTA_BITWISE_XOR = 5;
const NFTA_LOOKUP_SET = 1;
const NFTA_LOOKUP_SREG = 2;
const NFTA_IMMEDIATE_DREG = 1;
const NFTA_IMMEDIATE_DATA = 2;
const NFTA_DATA_VERDICT = 2;
const NFTA_VERDICT_CODE = 1;
const NFTA_VERDICT_CHAIN = 2;
/** The verdict register, where `immediate` puts a verdict. */
const NFT_REG_VERDICT = 0;
/** nf_tables.h enum nft_verdicts (negative, sent as their two's complement). */
const NFT_RETURN = -5;
const NFT_GOTO = -4;
/** linux/netfilter.h NF_DROP: verdicts of packets are the non-negative codes. */
const NF_DROP = 0;
const NFTA_NG_DREG = 1;
const NFTA_NG_MODULUS = 2;
const NFTA_NG_TYPE = 3;
const NFTA_NG_OFFSET = 4;
const NFT_NG_RANDOM = 1;
const NFTA_BYTEORDER_SREG = 1;
const NFTA_BYTEORDER_DREG = 2;
const NFTA_BYTEORDER_OP = 3;
const NFTA_BYTEORDER_LEN = 4;
const NFTA_BYTEORDER_SIZE = 5;
const NFT_BYTEORDER_HTON = 1;
/** The 16-byte register nft uses for these matches. */
const NFT_REG_1 = 1;
const CMP_OPS = { eq: 0, neq: 1, lt: 2 } as const;
/** NFPROTO_IPV4 and NFPROTO_IPV6, as `meta nfproto` reads them. */
const NFPROTO = { 4: 2, 6: 10 } as const;
/** Where the addresses are in each family's network header. */
const ADDRESS_FIELDS = { 4: { saddr: 12, daddr: 16, length: 4 }, 6: { saddr: 8, daddr: 24, length: 16 } } as const;

/** One expression of a rule's NFTA_RULE_EXPRESSIONS: { NAME, DATA { ... } }. */
export function expression(name: string, data: Attribute[]): Attribute {
  return nest(NFTA_LIST_ELEM, [attr.string(NFTA_EXPR_NAME, name), nest(NFTA_EXPR_DATA, data)]);
}

const data = (type: number, value: Buffer): Attribute => nest(type, [attr.bytes(NFTA_DATA_VALUE, value)]);

/** `meta load nfproto => reg`. */
export const metaNfproto = (dreg = NFT_REG_1): Attribute => expression('meta', [be32(NFTA_META_KEY, NFT_META_NFPROTO), be32(NFTA_META_DREG, dreg)]);

/** `oifname "NAME"` as nft compiles it: the output device's name loaded, compared with the name NUL-padded to IFNAMSIZ. */
export function matchOutputName(name: string): Attribute[] {
  const padded = Buffer.alloc(IFNAMSIZ);
  padded.write(name, 'utf8');
  return [expression('meta', [be32(NFTA_META_KEY, NFT_META_OIFNAME), be32(NFTA_META_DREG, NFT_REG_1)]), cmp('eq', padded)];
}

/** `cmp OP reg VALUE`. */
export const cmp = (op: keyof typeof CMP_OPS, value: Buffer, sreg = NFT_REG_1): Attribute =>
  expression('cmp', [be32(NFTA_CMP_SREG, sreg), be32(NFTA_CMP_OP, CMP_OPS[op]), data(NFTA_CMP_DATA, value)]);

/** `payload load LEN @ network header + OFFSET => reg`. */
export const networkPayload = (offset: number, length: number, dreg = NFT_REG_1): Attribute =>
  expression('payload', [be32(NFTA_PAYLOAD_DREG, dreg), be32(NFTA_PAYLOAD_BASE, NFT_PAYLOAD_NETWORK_HEADER), be32(NFTA_PAYLOAD_OFFSET, offset), be32(NFTA_PAYLOAD_LEN, length)]);

/** `bitwise reg = (reg & MASK) ^ 0`. */
export const bitwiseMask = (mask: Buffer, reg = NFT_REG_1): Attribute =>
  expression('bitwise', [be32(NFTA_BITWISE_SREG, reg), be32(NFTA_BITWISE_DREG, reg), be32(NFTA_BITWISE_LEN, mask.length), data(NFTA_BITWISE_MASK, mask), data(NFTA_BITWISE_XOR, Buffer.alloc(mask.length))]);

/** `lookup reg @SET`. */
export const lookup = (set: string, sreg = NFT_REG_1): Attribute => expression('lookup', [attr.string(NFTA_LOOKUP_SET, set), be32(NFTA_LOOKUP_SREG, sreg)]);

/** `immediate reg 0 VERDICT [-> CHAIN]`: a verdict statement. */
const verdict = (code: number, chain?: string): Attribute => {
  const fields = [be32(NFTA_VERDICT_CODE, code)];
  if (chain !== undefined) fields.push(attr.string(NFTA_VERDICT_CHAIN, chain));
  return expression('immediate', [be32(NFTA_IMMEDIATE_DREG, NFT_REG_VERDICT), nest(NFTA_IMMEDIATE_DATA, [nest(NFTA_DATA_VERDICT, fields)])]);
};

/** `return`: back to the calling chain, or the base chain's policy. */
export const returnVerdict = (): Attribute => verdict(NFT_RETURN);

/** `goto CHAIN`: on into CHAIN, not coming back here. */
export const gotoChain = (chain: string): Attribute => verdict(NFT_GOTO, chain);

/** `drop`. */
export const dropVerdict = (): Attribute => verdict(NF_DROP);

/**
 * `numgen random mod N < LIMIT`, as nft compiles it: the number is made in
 * host order, turned big-endian (cmp compares bytes), then compared.
 */
export function randomBelow(modulus: number, limit: number): Attribute[] {
  const value = Buffer.alloc(4);
  value.writeUInt32BE(limit >>> 0);
  return [
    expression('numgen', [be32(NFTA_NG_DREG, NFT_REG_1), be32(NFTA_NG_MODULUS, modulus), be32(NFTA_NG_TYPE, NFT_NG_RANDOM), be32(NFTA_NG_OFFSET, 0)]),
    expression('byteorder', [be32(NFTA_BYTEORDER_SREG, NFT_REG_1), be32(NFTA_BYTEORDER_DREG, NFT_REG_1), be32(NFTA_BYTEORDER_OP, NFT_BYTEORDER_HTON), be32(NFTA_BYTEORDER_LEN, 4), be32(NFTA_BYTEORDER_SIZE, 4)]),
    cmp('lt', value),
  ];
}

/** `masquerade` (no options: an empty DATA nest, as nft sends it). */
export const masquerade = (): Attribute => expression('masq', []);

/** The implicit `meta nfproto ipv4|ipv6` nft puts before an `ip`/`ip6` match in an inet table. */
export const matchFamily = (family: 4 | 6): Attribute[] => [metaNfproto(), cmp('eq', Buffer.from([NFPROTO[family]]))];

/**
 * `ip saddr|daddr [!=] P/n` (ip6 likewise) as nft compiles it: a byte-aligned
 * prefix loads only its bytes, any other loads the whole address and masks it.
 */
export function matchAddress(family: 4 | 6, field: 'saddr' | 'daddr', op: keyof typeof CMP_OPS, prefix: ParsedPrefix): Attribute[] {
  const where = ADDRESS_FIELDS[family];
  const network = networkOf(prefix);
  if (prefix.prefixLength % 8 === 0) {
    const length = prefix.prefixLength / 8;
    return [networkPayload(where[field], length), cmp(op, network.subarray(0, length))];
  }
  const mask = Buffer.alloc(where.length);
  for (let bit = 0; bit < prefix.prefixLength; bit++) mask[bit >> 3]! |= 0x80 >> (bit & 7);
  return [networkPayload(where[field], where.length), bitwiseMask(mask), cmp(op, network)];
}
