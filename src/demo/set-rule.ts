// A rule that references an address set, made and removed over nf_tables
// netlink: what the demo needs to show a destroy refused with EBUSY, without
// the nft binary. The rule lives in a regular chain (no hook): it matches no
// packet, it only holds the set, as a policy agent's filter rule would.
// The chain, rule and expression encoders are src/nftables' (chains.ts,
// rules.ts, expressions.ts).
import type { NetlinkRequest } from '../netlink/message.js';
import type { NetNS } from '../netns.js';
import { commit } from '../nftables/batch.js';
import { newChain } from '../nftables/chains.js';
import { NFPROTO_INET } from '../nftables/constants.js';
import { lookup, networkPayload } from '../nftables/expressions.js';
import { flushChain as flushChainRequest, newRule } from '../nftables/rules.js';
import { openNftables } from '../nftables/socket.js';

/** The IPv4 source address: 4 bytes at offset 12 of the network header. */
const IPV4_SADDR = { offset: 12, len: 4 };

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
  const ref = { family: NFPROTO_INET, table, chain } as const;
  return commitIn(ns, [newChain(ref, chain), newRule(ref, [networkPayload(IPV4_SADDR.offset, IPV4_SADDR.len), lookup(set)])]);
}

/** `flush chain inet TABLE CHAIN`: its rules go, and with them their references. */
export function flushChain(ns: NetNS, target: { table: string; chain: string }): Promise<void> {
  return commitIn(ns, [flushChainRequest({ family: NFPROTO_INET, ...target })]);
}
