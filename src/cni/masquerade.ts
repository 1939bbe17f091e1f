// IP masquerade of a container's addresses, in the official plugins' nftables
// layout (containernetworking/plugins pkg/ip/ipmasq_nftables_linux.go), the
// same objects sent the same way, so that both plugins share one node:
//   table inet cni_plugins_masquerade { comment "..." }
//     chain masq_checks { comment "..." }                       (regular)
//       ip saddr IP ip daddr != SUBNET masquerade comment "C"  (one per address; ip6 likewise)
//     chain postrouting { type nat hook postrouting priority srcnat; }
//       ip daddr 224.0.0.0/4 return; ip6 daddr ff00::/8 return; goto masq_checks
// Every ADD, ours or theirs, adds the table and chains (existing ones are
// kept) and flushes and rewrites postrouting's three rules, in one
// transaction: so whichever comes first, the other's transaction applies, and
// postrouting never doubles. C is identity.ts's masqueradeComment, the
// comment upstream computes: DEL takes the rules whose comment starts with
// the attachment's key (as upstream's teardown), GC those of the network's
// whose key no valid attachment has (upstream compares whole comments; the
// same rules for comments either plugin writes). Everything over nf_tables
// netlink: no `nft` process, and names only ever in the comment's bytes.
import { type NetnsError } from '../core/errors.js';
import { commit, type BatchError } from '../nftables/batch.js';
import { newChain } from '../nftables/chains.js';
import { NFPROTO_INET } from '../nftables/constants.js';
import { gotoChain, matchAddress, matchFamily, masquerade, returnVerdict } from '../nftables/expressions.js';
import { newTable } from '../nftables/messages.js';
import { deleteRule, flushChain, listRules, newRule, openRuleReader, type ChainRef, type DumpedRule } from '../nftables/rules.js';
import { AF_INET } from '../netlink/constants.js';
import type { NetlinkHandle } from '../netlink/handle.js';
import type { NetlinkRequest } from '../netlink/message.js';
import { parsePrefix } from '../netlink/validate.js';
import type { NetNS } from '../netns.js';
import { attachmentKey, keyOfTag, masqueradeComment } from './identity.js';
import type { Attachment } from './types.js';
import { checkArray, checkNs, checkObject, checkString, invalidArg } from './arg-checks.js';

/** The regular chain holding the per-address rules. */
export const MASQUERADE_CHAIN: ChainRef = { family: NFPROTO_INET, table: 'cni_plugins_masquerade', chain: 'masq_checks' };
/** The base chain that sends traffic to MASQUERADE_CHAIN. */
export const POSTROUTING_CHAIN: ChainRef = { ...MASQUERADE_CHAIN, chain: 'postrouting' };
/** `priority srcnat`. */
const SRCNAT = 100;
// Upstream's comments on the table and masq_checks, so that whoever creates them, `nft list` reads the same.
const TABLE_COMMENT = 'Masquerading for plugins from github.com/containernetworking/plugins';
const CHAIN_COMMENT = 'Masquerade traffic from certain IPs to any (non-multicast) IP outside their subnet';
/** Multicast is never masqueraded. */
const MULTICAST = { 4: '224.0.0.0/4', 6: 'ff00::/8' } as const;

/** One attachment of one network. */
export interface AttachmentRef extends Attachment {
  /** The network's name (the configuration's `name`). */
  network: string;
}

/**
 * Masquerades traffic from each of `addresses` (CIDR: the container's address
 * with its subnet's length, as a result's ips[].address) to anywhere outside
 * its subnet. Replaces this attachment's earlier rules, if any, in the same
 * transaction. A /0 subnet gets no rule: nothing is outside it. Async: one
 * nf_tables transaction in `hostNs`, in the official plugins' table
 * `inet cni_plugins_masquerade` (so both kinds of plugin share a node), no
 * `nft` process. A bad address rejects with ERR_NETNS_INVALID_ARG before
 * anything is sent; a refused transaction changes nothing.
 */
export async function addMasquerade(hostNs: NetNS, attachment: AttachmentRef, addresses: readonly string[]): Promise<void> {
  checkNs('addMasquerade', 'hostNs', hostNs);
  checkObject('addMasquerade', 'attachment', attachment);
  const rules = masqueradeRules(masqueradeComment(attachment.network, attachment), addresses);
  const key = attachmentKey(attachment.network, attachment);
  using handle = await openRuleReader(hostNs);
  const layout = masqueradeLayout();
  await replaceRules(handle, attachment.network, key, { before: layout, after: rules }).catch((error: BatchError) => {
    // The goto refused: masq_checks is a base chain, as this package made it before it took upstream's layout.
    if (error.code === 'ENOTSUP' && error.requestIndex === layout.length - 1) error.message += `: ${MASQUERADE_CHAIN.chain} is a base chain (an earlier layout); delete table inet ${MASQUERADE_CHAIN.table} once`;
    throw error;
  });
}

/** The table, both chains and postrouting's rules, as upstream adds them on every ADD (postrouting flushed first). */
export function masqueradeLayout(): NetlinkRequest[] {
  return [
    newTable(MASQUERADE_CHAIN, TABLE_COMMENT),
    newChain(MASQUERADE_CHAIN, MASQUERADE_CHAIN.chain, undefined, CHAIN_COMMENT),
    newChain(POSTROUTING_CHAIN, POSTROUTING_CHAIN.chain, { type: 'nat', hook: 'postrouting', priority: SRCNAT }),
    flushChain(POSTROUTING_CHAIN),
    newRule(POSTROUTING_CHAIN, [...matchFamily(4), ...matchAddress(4, 'daddr', 'eq', parsePrefix(MULTICAST[4])), returnVerdict()]),
    newRule(POSTROUTING_CHAIN, [...matchFamily(6), ...matchAddress(6, 'daddr', 'eq', parsePrefix(MULTICAST[6])), returnVerdict()]),
    newRule(POSTROUTING_CHAIN, [gotoChain(MASQUERADE_CHAIN.chain)]),
  ];
}

/** The NEWRULE messages: `ip saddr IP ip daddr != SUBNET masquerade comment "COMMENT"` per address (ip6 for IPv6). */
export function masqueradeRules(comment: string | undefined, addresses: readonly string[]): NetlinkRequest[] {
  if (comment !== undefined && typeof comment !== 'string') throw invalidArg('masqueradeRules', 'comment must be a string or undefined');
  checkArray('masqueradeRules', 'addresses', addresses);
  return addresses.flatMap((cidr) => {
    const prefix = parsePrefix(cidr, 'masquerade address', false);
    if (prefix.prefixLength === 0) return [];
    const family = prefix.family === AF_INET ? 4 : 6;
    const host = { ...prefix, prefixLength: family === 4 ? 32 : 128 };
    const expressions = [...matchFamily(family), ...matchAddress(family, 'saddr', 'eq', host), ...matchAddress(family, 'daddr', 'neq', prefix), masquerade()];
    return [newRule(MASQUERADE_CHAIN, expressions, comment)];
  });
}

/** Deletes this attachment's masquerade rules in `hostNs` (DEL); none there (or no table) is success. Async; resolves with how many went. */
export async function deleteMasquerade(hostNs: NetNS, attachment: AttachmentRef): Promise<number> {
  checkNs('deleteMasquerade', 'hostNs', hostNs);
  checkObject('deleteMasquerade', 'attachment', attachment);
  const key = attachmentKey(attachment.network, attachment);
  using handle = await openRuleReader(hostNs);
  return await replaceRules(handle, attachment.network, key, { before: [], after: [] });
}

/** @deprecated use deleteMasquerade() (the same function). */
export const removeMasquerade = deleteMasquerade;

/** A masquerade rule of one network, with the attachment key its comment starts with. */
export interface MasqueradeRule extends DumpedRule {
  /** `<network hash>-<attachment hash>`, as attachmentKey gives it: which attachment the rule is for. */
  key: string;
}

/** The masquerade rules of `network` in `hostNs` (by the hash their comments start with); none when the table or chain is missing. Async. */
export async function listMasquerade(hostNs: NetNS, network: string): Promise<MasqueradeRule[]> {
  checkNs('listMasquerade', 'hostNs', hostNs);
  checkString('listMasquerade', 'network', network);
  using handle = await openRuleReader(hostNs);
  return await rulesOf(handle, network);
}

/** Deletes the given rules (as listMasquerade returned them) by handle, in one transaction in `hostNs`. Async. */
export async function deleteMasqueradeRules(hostNs: NetNS, rules: readonly DumpedRule[]): Promise<void> {
  checkNs('deleteMasqueradeRules', 'hostNs', hostNs);
  checkArray('deleteMasqueradeRules', 'rules', rules);
  using handle = await openRuleReader(hostNs);
  commit(handle, rules.map(deleteOne));
}

const deleteOne = (rule: DumpedRule): NetlinkRequest => deleteRule(MASQUERADE_CHAIN, rule.handle);

/** One transaction: `before`, deleting the rules of the attachment `key`, `after`. Returns how many it deleted. */
async function replaceRules(handle: NetlinkHandle, network: string, key: string, around: { before: NetlinkRequest[]; after: NetlinkRequest[] }): Promise<number> {
  const stale = (await rulesOf(handle, network)).filter((rule) => rule.key === key);
  commit(handle, [...around.before, ...stale.map(deleteOne), ...around.after]);
  return stale.length;
}

async function rulesOf(handle: NetlinkHandle, network: string): Promise<MasqueradeRule[]> {
  const rules = await listRules(handle, MASQUERADE_CHAIN).catch((error: NetnsError) => {
    if (error.code === 'ENOENT') return [];
    throw error;
  });
  return rules.flatMap((rule) => {
    const key = keyOfTag(network, rule.comment);
    return key === undefined ? [] : [{ ...rule, key }];
  });
}
