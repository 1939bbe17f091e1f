// IP masquerade of a container's addresses, as the official plugins'
// nftables backend: table `inet cni_plugins_masquerade`, base chain
// `masq_checks` (type nat hook postrouting priority srcnat), one rule per
// address `ip saddr IP ip daddr != SUBNET masquerade comment "<tag>"`
// (ip6 likewise), the tag as identity.ts makes it (network hash first, so GC
// scopes by network). The same table and chain as the Go plugin, so the two
// see each other's rules of the same network as that network's. Everything
// over nf_tables netlink in one transaction per call: no `nft` process, and
// names only ever in the comment's bytes.
import { type NetnsError } from '../core/errors.js';
import { commit } from '../nftables/batch.js';
import { newChain } from '../nftables/chains.js';
import { NFPROTO_INET } from '../nftables/constants.js';
import { matchAddress, matchFamily, masquerade } from '../nftables/expressions.js';
import { newTable } from '../nftables/messages.js';
import { deleteRule, listRules, newRule, openRuleReader, type ChainRef, type DumpedRule } from '../nftables/rules.js';
import { AF_INET } from '../netlink/constants.js';
import type { NetlinkHandle } from '../netlink/handle.js';
import type { NetlinkRequest } from '../netlink/message.js';
import { parsePrefix } from '../netlink/validate.js';
import type { NetNS } from '../netns.js';
import { attachmentKey, attachmentTag, keyOfTag } from './identity.js';
import type { Attachment } from './types.js';

export const MASQUERADE_CHAIN: ChainRef = { family: NFPROTO_INET, table: 'cni_plugins_masquerade', chain: 'masq_checks' };
/** `priority srcnat`. */
const SRCNAT = 100;

/** One attachment of one network. */
export interface AttachmentRef extends Attachment {
  network: string;
}

/**
 * Masquerades traffic from each of `addresses` (CIDR: the container's address
 * with its subnet's length, as a result's ips[].address) to anywhere outside
 * its subnet. Replaces this attachment's earlier rules, if any, in the same
 * transaction. A /0 subnet gets no rule: nothing is outside it.
 */
export async function addMasquerade(hostNs: NetNS, attachment: AttachmentRef, addresses: readonly string[]): Promise<void> {
  const rules = masqueradeRules(attachmentTag(attachment.network, attachment), addresses);
  using handle = await openRuleReader(hostNs);
  const stale = (await rulesOf(handle, attachment.network)).filter((rule) => rule.key === attachmentKey(attachment.network, attachment));
  commit(handle, [
    newTable(MASQUERADE_CHAIN),
    newChain(MASQUERADE_CHAIN, MASQUERADE_CHAIN.chain, { type: 'nat', hook: 'postrouting', priority: SRCNAT }),
    ...stale.map((rule) => deleteRule(MASQUERADE_CHAIN, rule.handle)),
    ...rules,
  ]);
}

/** The NEWRULE messages: `ip saddr IP ip daddr != SUBNET masquerade comment "COMMENT"` per address (ip6 for IPv6). */
export function masqueradeRules(comment: string | undefined, addresses: readonly string[]): NetlinkRequest[] {
  return addresses.flatMap((cidr) => {
    const prefix = parsePrefix(cidr, 'masquerade address', false);
    if (prefix.prefixLength === 0) return [];
    const family = prefix.family === AF_INET ? 4 : 6;
    const host = { ...prefix, prefixLength: family === 4 ? 32 : 128 };
    const expressions = [...matchFamily(family), ...matchAddress(family, 'saddr', 'eq', host), ...matchAddress(family, 'daddr', 'neq', prefix), masquerade()];
    return [newRule(MASQUERADE_CHAIN, expressions, comment)];
  });
}

/** Removes this attachment's rules; none there (or no table) is success. Returns how many went. */
export async function removeMasquerade(hostNs: NetNS, attachment: AttachmentRef): Promise<number> {
  const key = attachmentKey(attachment.network, attachment);
  using handle = await openRuleReader(hostNs);
  const mine = (await rulesOf(handle, attachment.network)).filter((rule) => rule.key === key);
  commit(handle, mine.map((rule) => deleteRule(MASQUERADE_CHAIN, rule.handle)));
  return mine.length;
}

/** A masquerade rule of one network, with the attachment key its comment starts with. */
export interface MasqueradeRule extends DumpedRule {
  key: string;
}

/** The masquerade rules of `network` (by the hash their comments start with); none when the table or chain is missing. */
export async function listMasquerade(hostNs: NetNS, network: string): Promise<MasqueradeRule[]> {
  using handle = await openRuleReader(hostNs);
  return await rulesOf(handle, network);
}

/** Deletes rules by handle, in one transaction. */
export async function deleteMasqueradeRules(hostNs: NetNS, rules: readonly DumpedRule[]): Promise<void> {
  using handle = await openRuleReader(hostNs);
  commit(handle, rules.map((rule) => deleteRule(MASQUERADE_CHAIN, rule.handle)));
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
