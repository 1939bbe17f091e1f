// A NETLINK_NETFILTER socket inside a namespace: the netlink core's handle
// (socket made by the addon's thread inside the namespace, seqs, dumps read
// to DONE and retried when interrupted) opened for nfnetlink.
import type { NsHandle } from '../core/handle.js';
import { NetlinkHandle, type NetlinkHandleOptions } from '../netlink/handle.js';
import { NETLINK_NETFILTER, NFNL_SUBSYS_NFTABLES, NFT_MSG_GETSET, NFT_MSG_GETSETELEM, NFT_MSG_GETTABLE } from './constants.js';

// nf_tables' GETs that have a dump (GETGEN has none): the handle dumps only these.
const DUMPABLE = new Set([NFT_MSG_GETTABLE, NFT_MSG_GETSET, NFT_MSG_GETSETELEM]);

export function isNftablesGet(type: number): boolean {
  return type >> 8 === NFNL_SUBSYS_NFTABLES && DUMPABLE.has(type & 0xff);
}

/** An nfnetlink handle inside `target`'s namespace (a NetNS, a name or a path). */
export function openNftables(target: NsHandle | string, options: Pick<NetlinkHandleOptions, 'transport'> = {}): Promise<NetlinkHandle> {
  return NetlinkHandle.open(target, { ...options, protocol: NETLINK_NETFILTER, isGet: isNftablesGet });
}
