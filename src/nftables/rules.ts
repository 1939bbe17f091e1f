// Rule messages, laid out as nft 1.0.6 sends them
// (test/unit/nftables-rules.test.ts), and reading a chain's rules back
// (handle and comment) so that a rule can be found and deleted by the
// comment it was made with. Comments go in userdata as bytes, never into nft
// syntax.
import type { NsHandle } from '../core/handle.js';
import { AttributeMap, attr, type Attribute } from '../netlink/attributes.js';
import { NLM_F_APPEND, NLM_F_CREATE } from '../netlink/constants.js';
import { NetlinkHandle } from '../netlink/handle.js';
import type { NetlinkMessage, NetlinkRequest } from '../netlink/message.js';
import { NETLINK_NETFILTER, NFGENMSG_SIZE, nftType } from './constants.js';
import { familyText, nest, nfgenmsg, type TableName } from './messages.js';
import { isNftablesGet } from './socket.js';
import { encodeUserdata, parseUserdata, tlv, userdataString } from './userdata.js';

const NFT_MSG_NEWRULE = 6;
const NFT_MSG_GETRULE = 7;
const NFT_MSG_DELRULE = 8;
const NFTA_RULE_TABLE = 1;
const NFTA_RULE_CHAIN = 2;
const NFTA_RULE_HANDLE = 3;
const NFTA_RULE_EXPRESSIONS = 4;
const NFTA_RULE_USERDATA = 7;
/** libnftnl NFTNL_UDATA_RULE_COMMENT. */
const UDATA_RULE_COMMENT = 0;

/** A chain by name: `inet <table> <chain>`, as MASQUERADE_CHAIN and POSTROUTING_CHAIN name theirs. */
export interface ChainRef extends TableName {
  /** The chain's name in the table. */
  chain: string;
}

/** A rule as read back: what finding and deleting it needs. */
export interface DumpedRule {
  /** The rule's handle in its chain (`nft -a list` shows it), by which it is deleted. */
  handle: bigint;
  /** The rule's comment, if it has one. */
  comment?: string;
}

/** `add rule inet T C <expressions> [comment "..."]`, appended. */
export function newRule(ref: ChainRef, expressions: Attribute[], comment?: string): NetlinkRequest {
  const attributes = [attr.string(NFTA_RULE_TABLE, ref.table), attr.string(NFTA_RULE_CHAIN, ref.chain), nest(NFTA_RULE_EXPRESSIONS, expressions)];
  if (comment !== undefined) attributes.push(attr.bytes(NFTA_RULE_USERDATA, encodeUserdata([tlv.string(UDATA_RULE_COMMENT, comment)])));
  return { type: nftType(NFT_MSG_NEWRULE), flags: NLM_F_CREATE | NLM_F_APPEND, header: nfgenmsg(ref.family), attributes, what: `add rule ${familyText(ref.family)} ${ref.table} ${ref.chain}` };
}

/** `delete rule inet T C handle N`. */
export function deleteRule(ref: ChainRef, handle: bigint): NetlinkRequest {
  const value = Buffer.alloc(8);
  value.writeBigUInt64BE(handle);
  const attributes = [attr.string(NFTA_RULE_TABLE, ref.table), attr.string(NFTA_RULE_CHAIN, ref.chain), attr.bytes(NFTA_RULE_HANDLE, value)];
  return { type: nftType(NFT_MSG_DELRULE), flags: 0, header: nfgenmsg(ref.family), attributes, what: `delete rule inet ${ref.table} ${ref.chain} handle ${handle}` };
}

/** `flush chain inet T C`: a DELRULE naming only the chain deletes all its rules. */
export function flushChain(ref: ChainRef): NetlinkRequest {
  return { type: nftType(NFT_MSG_DELRULE), flags: 0, header: nfgenmsg(ref.family), attributes: [attr.string(NFTA_RULE_TABLE, ref.table), attr.string(NFTA_RULE_CHAIN, ref.chain)], what: `flush chain inet ${ref.table} ${ref.chain}` };
}

/** socket.ts's GETs, and GETRULE. */
const isGet = (type: number): boolean => isNftablesGet(type) || type === nftType(NFT_MSG_GETRULE);

/** An nfnetlink handle inside `target`'s namespace, as openNftables, on which rules can be dumped too. */
export function openRuleReader(target: NsHandle | string): Promise<NetlinkHandle> {
  return NetlinkHandle.open(target, { protocol: NETLINK_NETFILTER, isGet });
}

/**
 * The rules of one chain (a GETRULE dump, restarted by the handle if a
 * transaction lands meanwhile). A missing table or chain is ENOENT.
 */
export async function listRules(handle: NetlinkHandle, ref: ChainRef): Promise<DumpedRule[]> {
  const what = `list chain inet ${ref.table} ${ref.chain}`;
  const messages = await handle.dump(nftType(NFT_MSG_GETRULE), nfgenmsg(ref.family), [attr.string(NFTA_RULE_TABLE, ref.table), attr.string(NFTA_RULE_CHAIN, ref.chain)], what);
  return messages.filter((m) => m.type === nftType(NFT_MSG_NEWRULE)).map(parseRule);
}

function parseRule(message: NetlinkMessage): DumpedRule {
  const attributes = AttributeMap.parse(message.payload, NFGENMSG_SIZE);
  const handle = attributes.get(NFTA_RULE_HANDLE);
  const rule: DumpedRule = { handle: handle && handle.length >= 8 ? handle.readBigUInt64BE(0) : 0n };
  const comment = userdataString(parseUserdata(attributes.get(NFTA_RULE_USERDATA)).get(UDATA_RULE_COMMENT));
  if (comment !== undefined) rule.comment = comment;
  return rule;
}
