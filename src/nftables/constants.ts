// nfnetlink and nf_tables numbers (linux/netfilter/nfnetlink.h, nf_tables.h;
// nftables include/datatype.h for key types), as in the reference sheet's
// section 3. Only what this layer sends or reads.
export { NETLINK_NETFILTER } from '../netlink/constants.js';
export const NFNL_SUBSYS_NFTABLES = 10;
export const NFNL_MSG_BATCH_BEGIN = 0x10;
export const NFNL_MSG_BATCH_END = 0x11;
/** BATCH_BEGIN's attribute: the generation the batch was planned against (the kernel refuses it with ERESTART if the ruleset moved on). */
export const NFNL_BATCH_GENID = 1;
export const NFGENMSG_SIZE = 4;

export const NFPROTO_UNSPEC = 0;
export const NFPROTO_INET = 1;
/** Tables bound to devices: ingress and egress hooks. */
export const NFPROTO_NETDEV = 5;

export const NFT_MSG_NEWTABLE = 0;
export const NFT_MSG_GETTABLE = 1;
export const NFT_MSG_DELTABLE = 2;
export const NFT_MSG_NEWSET = 9;
export const NFT_MSG_GETSET = 10;
export const NFT_MSG_DELSET = 11;
export const NFT_MSG_NEWSETELEM = 12;
export const NFT_MSG_GETSETELEM = 13;
export const NFT_MSG_DELSETELEM = 14;
export const NFT_MSG_NEWGEN = 15;
export const NFT_MSG_GETGEN = 16;

export const NFTA_TABLE_NAME = 1;
export const NFTA_TABLE_FLAGS = 2;
/** How many chains, sets, objects and flowtables the table holds. */
export const NFTA_TABLE_USE = 3;
export const NFTA_TABLE_USERDATA = 6;

export const NFTA_SET_TABLE = 1;
export const NFTA_SET_NAME = 2;
export const NFTA_SET_FLAGS = 3;
export const NFTA_SET_KEY_TYPE = 4;
export const NFTA_SET_KEY_LEN = 5;
export const NFTA_SET_ID = 10;
export const NFTA_SET_USERDATA = 13;
export const NFT_SET_ANONYMOUS = 0x1;
export const NFT_SET_INTERVAL = 0x4;
export const NFT_SET_MAP = 0x8;
export const NFT_SET_OBJECT = 0x40;

export const NFTA_SET_ELEM_LIST_TABLE = 1;
export const NFTA_SET_ELEM_LIST_SET = 2;
export const NFTA_SET_ELEM_LIST_ELEMENTS = 3;
export const NFTA_SET_ELEM_LIST_SET_ID = 4;
/** The type of each element nest in the kernel's dumps (nft numbers its own 1, 2...). */
export const NFTA_LIST_ELEM = 1;
export const NFTA_SET_ELEM_KEY = 1;
export const NFTA_SET_ELEM_FLAGS = 3;
export const NFTA_SET_ELEM_USERDATA = 6;
export const NFTA_DATA_VALUE = 1;
export const NFT_SET_ELEM_INTERVAL_END = 1;

export const NFTA_GEN_ID = 1;

/** nft's key types (datatype.h) and their key lengths in bytes. */
export const TYPE_IPADDR = 7;
export const TYPE_IP6ADDR = 8;
export const TYPE_IFNAME = 41;
export const IFNAMSIZ = 16;

/** Table userdata TLV type (libnftnl NFTNL_UDATA_TABLE_COMMENT). */
export const UDATA_TABLE_COMMENT = 0;
/** Set userdata TLV types (nftables include/rule.h NFTNL_UDATA_SET_*). */
export const UDATA_SET_KEYBYTEORDER = 0;
export const UDATA_SET_COMMENT = 7;
/** Element userdata TLV types (NFTNL_UDATA_SET_ELEM_*). */
export const UDATA_SET_ELEM_COMMENT = 0;
export const UDATA_SET_ELEM_FLAGS = 1;
/** NFTNL_SET_ELEM_F_INTERVAL_OPEN: a range that runs to the last address, sent without an END. */
export const SET_ELEM_F_INTERVAL_OPEN = 1;
/** nftables' enum byteorder: host endian for strings (ifname), big endian for addresses. */
export const BYTEORDER_HOST_ENDIAN = 1;
export const BYTEORDER_BIG_ENDIAN = 2;

/** The nlmsg_type of an nf_tables message. */
export const nftType = (msg: number): number => (NFNL_SUBSYS_NFTABLES << 8) | msg;
