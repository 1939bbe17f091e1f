// A rule that references an address set, made and removed over nf_tables
// netlink: what the demo needs to show a destroy refused with EBUSY, without
// the nft binary. The rule lives in a regular chain (no hook): it matches no
// packet, it only holds the set, as a policy agent's filter rule would.
// (src/nftables encodes tables, sets and elements only; chains and rules are
// the demo's alone, so they stay here.)
import { attr } from '../netlink/attributes.js';
import { NLM_F_APPEND, NLM_F_CREATE } from '../netlink/constants.js';
import type { NetlinkRequest } from '../netlink/message.js';
import type { NetNS } from '../netns.js';
import { commit } from '../nftables/batch.js';
import { NFPROTO_INET, NFTA_LIST_ELEM, nftType } from '../nftables/constants.js';
import { be32, nest, nfgenmsg } from '../nftables/messages.js';
import { openNftables } from '../nftables/socket.js';

// include/uapi/linux/netfilter/nf_tables.h
const NFT_MSG_NEWCHAIN = 3;
const NFT_MSG_NEWRULE = 6;
const NFT_MSG_DELRULE = 8;
const NFTA_CHAIN_TABLE = 1;
const NFTA_CHAIN_NAME = 3;
const NFTA_RULE_TABLE = 1;
const NFTA_RULE_CHAIN = 2;
const NFTA_RULE_EXPRESSIONS = 4;
const NFTA_EXPR_NAME = 1;
const NFTA_EXPR_DATA = 2;
const NFTA_PAYLOAD_DREG = 1;
const NFTA_PAYLOAD_BASE = 2;
const NFTA_PAYLOAD_OFFSET = 3;
const NFTA_PAYLOAD_LEN = 4;
const NFT_PAYLOAD_NETWORK_HEADER = 1;
const NFTA_LOOKUP_SET = 1;
const NFTA_LOOKUP_SREG = 2;
const NFT_REG_1 = 1;
/** The IPv4 source address: 4 bytes at offset 12 of the network header. */
const IPV4_SADDR = { offset: 12, len: 4 };

const message = (type: number, flags: number, attributes: NetlinkRequest['attributes'], what: string): NetlinkRequest => ({
  type: nftType(type),
  flags,
  header: nfgenmsg(NFPROTO_INET),
  attributes,
  what,
});

const expression = (name: string, data: ReturnType<typeof be32>[]) =>
  nest(NFTA_LIST_ELEM, [attr.string(NFTA_EXPR_NAME, name), nest(NFTA_EXPR_DATA, data)]);

async function commitIn(ns: NetNS, requests: NetlinkRequest[]): Promise<void> {
  const handle = await openNftables(ns);
  try {
    commit(handle, requests);
  } finally {
    handle.close();
  }
}

/** `add chain inet TABLE CHAIN; add rule inet TABLE CHAIN ip saddr @SET`, in one transaction. */
export function referenceSet(ns: NetNS, target: { table: string; chain: string; set: string }): Promise<void> {
  const { table, chain, set } = target;
  return commitIn(ns, [
    message(NFT_MSG_NEWCHAIN, NLM_F_CREATE, [attr.string(NFTA_CHAIN_TABLE, table), attr.string(NFTA_CHAIN_NAME, chain)], `add chain inet ${table} ${chain}`),
    message(
      NFT_MSG_NEWRULE,
      NLM_F_CREATE | NLM_F_APPEND,
      [
        attr.string(NFTA_RULE_TABLE, table),
        attr.string(NFTA_RULE_CHAIN, chain),
        nest(NFTA_RULE_EXPRESSIONS, [
          expression('payload', [
            be32(NFTA_PAYLOAD_DREG, NFT_REG_1),
            be32(NFTA_PAYLOAD_BASE, NFT_PAYLOAD_NETWORK_HEADER),
            be32(NFTA_PAYLOAD_OFFSET, IPV4_SADDR.offset),
            be32(NFTA_PAYLOAD_LEN, IPV4_SADDR.len),
          ]),
          expression('lookup', [attr.string(NFTA_LOOKUP_SET, set), be32(NFTA_LOOKUP_SREG, NFT_REG_1)]),
        ]),
      ],
      `add rule inet ${table} ${chain} ip saddr @${set}`,
    ),
  ]);
}

/** `flush chain inet TABLE CHAIN`: its rules go, and with them their references. */
export function flushChain(ns: NetNS, target: { table: string; chain: string }): Promise<void> {
  const { table, chain } = target;
  return commitIn(ns, [message(NFT_MSG_DELRULE, 0, [attr.string(NFTA_RULE_TABLE, table), attr.string(NFTA_RULE_CHAIN, chain)], `flush chain inet ${table} ${chain}`)]);
}
