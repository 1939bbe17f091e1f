// One nf_tables transaction: BATCH_BEGIN (res_id NFNL_SUBSYS_NFTABLES), the
// messages, BATCH_END, in one sendmsg, each message with its own seq.
//
// Why without NLM_F_ACK (quiet), as nft 1.0.6 sends batches: the kernel
// (nfnetlink_rcv_batch) processes every message, then commits or aborts the
// whole batch, and only then delivers the errors, all before sendmsg returns.
// An ACK 0 would prove nothing (a message can be ACKed 0 in a batch that a
// sibling's error or a failed commit aborted), while an error always means the
// batch was aborted: so the answer is the errors alone, and none means
// committed. A message's error comes on its own seq; a commit failure (or a
// generation mismatch) comes on BEGIN's seq. BATCH_END is always sent: a
// batch without it is silently aborted.
import type { NetnsError } from '../core/errors.js';
import type { NetlinkHandle } from '../netlink/handle.js';
import type { NetlinkRequest } from '../netlink/message.js';
import { NFNL_BATCH_GENID, NFNL_MSG_BATCH_BEGIN, NFNL_MSG_BATCH_END, NFNL_SUBSYS_NFTABLES, NFPROTO_UNSPEC } from './constants.js';
import { be32, nfgenmsg } from './messages.js';

/** A failed batch: the error of the first message that failed, and which one (by its index in the list given). */
export type BatchError = NetnsError & { requestIndex?: number };

/** With `generation`: the kernel commits the batch only if the ruleset is still at that generation (else ERESTART on BEGIN's seq). */
export function batchBegin(generation?: number): NetlinkRequest {
  const attributes = generation === undefined ? [] : [be32(NFNL_BATCH_GENID, generation)];
  return { type: NFNL_MSG_BATCH_BEGIN, flags: 0, header: nfgenmsg(NFPROTO_UNSPEC, NFNL_SUBSYS_NFTABLES), attributes, what: 'commit the nftables transaction' };
}

export function batchEnd(): NetlinkRequest {
  return { type: NFNL_MSG_BATCH_END, flags: 0, header: nfgenmsg(NFPROTO_UNSPEC, NFNL_SUBSYS_NFTABLES), what: 'end the nftables transaction' };
}

/** The batch as sent: BEGIN, the requests, END. */
export function framed(requests: readonly NetlinkRequest[], generation?: number): NetlinkRequest[] {
  return [batchBegin(generation), ...requests, batchEnd()];
}

/**
 * Applies the requests as one transaction: all or none. Rejects with the
 * first failed message's error (requestIndex = its index in `requests`), or
 * the commit's error (no requestIndex). With `generation` (a read's, see
 * dump.ts), only if no transaction has landed since that read: otherwise it
 * rejects with ERESTART and nothing is applied.
 */
export function commit(handle: NetlinkHandle, requests: readonly NetlinkRequest[], generation?: number): void {
  if (requests.length === 0) return;
  const settled = handle.requestBatch(framed(requests, generation));
  for (let i = 1; i <= requests.length; i++) {
    const outcome = settled[i]!;
    if (!outcome.ok) throw Object.assign(outcome.error, { requestIndex: i - 1 }) as BatchError;
  }
  const begin = settled[0]!;
  if (!begin.ok) throw begin.error;
  const end = settled[settled.length - 1]!;
  if (!end.ok) throw end.error;
}
