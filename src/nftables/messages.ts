// Encoders for the nf_tables messages on tables and sets, laid out as nft
// 1.0.6 sends them (attribute order included, so captures compare byte for
// byte). Names go into attributes as bytes, never into nft syntax. Element
// messages are in elements.ts.
import { attr, type Attribute } from '../netlink/attributes.js';
import { NLA_F_NESTED, NLM_F_CREATE } from '../netlink/constants.js';
import type { NetlinkRequest } from '../netlink/message.js';
import {
  BYTEORDER_BIG_ENDIAN,
  BYTEORDER_HOST_ENDIAN,
  IFNAMSIZ,
  NFGENMSG_SIZE,
  NFPROTO_INET,
  NFPROTO_NETDEV,
  NFT_MSG_DELSET,
  NFT_MSG_DELTABLE,
  NFT_MSG_GETGEN,
  NFT_MSG_GETSET,
  NFT_MSG_GETSETELEM,
  NFT_MSG_GETTABLE,
  NFT_MSG_NEWSET,
  NFT_MSG_NEWTABLE,
  NFT_SET_INTERVAL,
  NFTA_SET_ELEM_LIST_SET,
  NFTA_SET_ELEM_LIST_TABLE,
  NFTA_SET_FLAGS,
  NFTA_SET_ID,
  NFTA_SET_KEY_LEN,
  NFTA_SET_KEY_TYPE,
  NFTA_SET_NAME,
  NFTA_SET_TABLE,
  NFTA_SET_USERDATA,
  NFTA_TABLE_FLAGS,
  NFTA_TABLE_NAME,
  NFTA_TABLE_USERDATA,
  nftType,
  NFPROTO_UNSPEC,
  TYPE_IFNAME,
  TYPE_IP6ADDR,
  TYPE_IPADDR,
  UDATA_SET_COMMENT,
  UDATA_SET_KEYBYTEORDER,
  UDATA_TABLE_COMMENT,
} from './constants.js';
import { encodeUserdata, tlv, type Tlv } from './userdata.js';

/** struct nfgenmsg: u8 family, u8 version (0), be16 res_id. */
export function nfgenmsg(family: number, resId = 0): Buffer {
  const header = Buffer.alloc(NFGENMSG_SIZE);
  header.writeUInt8(family, 0);
  header.writeUInt16BE(resId, 2);
  return header;
}

/** nf_tables integers are big-endian (attr.u32 is host order, as rtnetlink wants). */
export const be32 = (type: number, n: number): Attribute => {
  const value = Buffer.alloc(4);
  value.writeUInt32BE(n >>> 0);
  return attr.bytes(type, value);
};

/** nft marks its nests (the kernel's dumps do not; the parser masks the bit). */
export const nest = (type: number, nested: Attribute[]): Attribute => attr.nest(type | NLA_F_NESTED, nested);

/** The key types this layer makes sets of, as nft names them in `type ...`. */
export type KeyType = 'ipv4_addr' | 'ipv6_addr' | 'ifname';

export const KEY_TYPES: Record<KeyType, { type: number; length: number; byteorder: number }> = {
  ipv4_addr: { type: TYPE_IPADDR, length: 4, byteorder: BYTEORDER_BIG_ENDIAN },
  ipv6_addr: { type: TYPE_IP6ADDR, length: 16, byteorder: BYTEORDER_BIG_ENDIAN },
  ifname: { type: TYPE_IFNAME, length: IFNAMSIZ, byteorder: BYTEORDER_HOST_ENDIAN },
};

/** The family as nft names it, for `what` texts. */
export const familyText = (family: number): string => (family === NFPROTO_NETDEV ? 'netdev' : 'inet');

export interface TableName {
  /** inet (address sets, masquerade, partitions) or netdev (a device's egress hook). */
  family: typeof NFPROTO_INET | typeof NFPROTO_NETDEV;
  /** The table's name. */
  table: string;
}

/**
 * `add table inet t [{ comment "..."; }]`: no NLM_F_CREATE flag beyond what
 * nft sends, so an existing table is fine (and keeps its own comment).
 */
export function newTable({ family, table }: TableName, comment?: string): NetlinkRequest {
  const attributes = [attr.string(NFTA_TABLE_NAME, table), be32(NFTA_TABLE_FLAGS, 0)];
  if (comment !== undefined) attributes.push(attr.bytes(NFTA_TABLE_USERDATA, encodeUserdata([tlv.string(UDATA_TABLE_COMMENT, comment)])));
  return {
    type: nftType(NFT_MSG_NEWTABLE),
    flags: 0,
    header: nfgenmsg(family),
    attributes,
    what: `add table ${familyText(family)} ${table}`,
  };
}

/**
 * `add table`, changing nothing of a table that is there. nft sends flags 0
 * with every `add table`, which wakes a dormant table (its chains start to
 * filter): a table shared with someone else's chains must keep its flags.
 */
export function newTableKeepingFlags(table: TableName): NetlinkRequest {
  return { ...newTable(table), attributes: [attr.string(NFTA_TABLE_NAME, table.table)] };
}

/** `delete table inet t`: the table and everything in it. */
export function deleteTable({ family, table }: TableName): NetlinkRequest {
  return { type: nftType(NFT_MSG_DELTABLE), flags: 0, header: nfgenmsg(family), attributes: [attr.string(NFTA_TABLE_NAME, table)], what: `delete table ${familyText(family)} ${table}` };
}

export interface SetSpec {
  name: string;
  keyType: KeyType;
  interval: boolean;
  comment?: string;
  /** NFTA_SET_ID: the set's number within its batch, by which later messages of the batch may find it. */
  id: number;
}

/** `add set inet t s { type ...; [flags interval;] [comment "..."] }`: NLM_F_CREATE without EXCL, so an existing set is kept. */
export function newSet(ref: TableName, spec: SetSpec): NetlinkRequest {
  const key = KEY_TYPES[spec.keyType];
  const userdata: Tlv[] = [tlv.u32(UDATA_SET_KEYBYTEORDER, key.byteorder)];
  if (spec.comment !== undefined) userdata.push(tlv.string(UDATA_SET_COMMENT, spec.comment));
  return {
    type: nftType(NFT_MSG_NEWSET),
    flags: NLM_F_CREATE,
    header: nfgenmsg(ref.family),
    attributes: [
      attr.string(NFTA_SET_TABLE, ref.table),
      attr.string(NFTA_SET_NAME, spec.name),
      be32(NFTA_SET_FLAGS, spec.interval ? NFT_SET_INTERVAL : 0),
      be32(NFTA_SET_KEY_TYPE, key.type),
      be32(NFTA_SET_KEY_LEN, key.length),
      be32(NFTA_SET_ID, spec.id),
      attr.bytes(NFTA_SET_USERDATA, encodeUserdata(userdata)),
    ],
    what: `add set inet ${ref.table} ${spec.name}`,
  };
}

export function deleteSet(ref: TableName, name: string): NetlinkRequest {
  return {
    type: nftType(NFT_MSG_DELSET),
    flags: 0,
    header: nfgenmsg(ref.family),
    attributes: [attr.string(NFTA_SET_TABLE, ref.table), attr.string(NFTA_SET_NAME, name)],
    what: `delete set inet ${ref.table} ${name}`,
  };
}

/** GETGEN: answered by one NEWGEN with the ruleset's generation id. Family 0, as nft. */
export function getGeneration(): NetlinkRequest {
  return { type: nftType(NFT_MSG_GETGEN), flags: 0, header: nfgenmsg(NFPROTO_UNSPEC), what: 'get the nftables generation' };
}

/** GETTABLE of one table (not a dump): NEWTABLE, or ENOENT. */
export function getTable(ref: TableName): NetlinkRequest {
  return { type: nftType(NFT_MSG_GETTABLE), flags: 0, header: nfgenmsg(ref.family), attributes: [attr.string(NFTA_TABLE_NAME, ref.table)], what: `list table inet ${ref.table}` };
}

/** The header and attributes of a GETSET dump of one table's sets. */
export function getSetsDump(ref: TableName): { type: number; header: Buffer; attributes: Attribute[]; what: string } {
  return { type: nftType(NFT_MSG_GETSET), header: nfgenmsg(ref.family), attributes: [attr.string(NFTA_SET_TABLE, ref.table)], what: `list sets of table inet ${ref.table}` };
}

/** The header and attributes of a GETSETELEM dump of one set (set before table, as nft). */
export function getElementsDump(ref: TableName, set: string): { type: number; header: Buffer; attributes: Attribute[]; what: string } {
  return {
    type: nftType(NFT_MSG_GETSETELEM),
    header: nfgenmsg(ref.family),
    attributes: [attr.string(NFTA_SET_ELEM_LIST_SET, set), attr.string(NFTA_SET_ELEM_LIST_TABLE, ref.table)],
    what: `list set inet ${ref.table} ${set}`,
  };
}
