// Chain messages, laid out as nft 1.0.6 sends them (test/unit/nftables-rules.test.ts).
import { attr } from '../netlink/attributes.js';
import { NLM_F_CREATE } from '../netlink/constants.js';
import type { NetlinkRequest } from '../netlink/message.js';
import { nftType } from './constants.js';
import { be32, familyText, nest, nfgenmsg, type TableName } from './messages.js';
import { encodeUserdata, tlv } from './userdata.js';

const NFT_MSG_NEWCHAIN = 3;
const NFTA_CHAIN_TABLE = 1;
const NFTA_CHAIN_NAME = 3;
const NFTA_CHAIN_HOOK = 4;
const NFTA_CHAIN_TYPE = 7;
const NFTA_CHAIN_USERDATA = 12;
/** libnftnl NFTNL_UDATA_CHAIN_COMMENT. */
const UDATA_CHAIN_COMMENT = 0;
const NFTA_HOOK_HOOKNUM = 1;
const NFTA_HOOK_PRIORITY = 2;
const NFTA_HOOK_DEV = 3;
/** linux/netfilter.h enum nf_inet_hooks, and enum nf_dev_hooks for the netdev family's. */
const HOOKS = { prerouting: 0, input: 1, forward: 2, output: 3, postrouting: 4, ingress: 0, egress: 1 } as const;

/**
 * A base chain's hook: `type nat hook postrouting priority srcnat` is { type: 'nat', hook: 'postrouting', priority: 100 };
 * a netdev table's `type filter hook egress device "eth0" priority 0` has the device.
 */
export interface ChainHook {
  type: 'filter' | 'nat' | 'route';
  hook: keyof typeof HOOKS;
  priority: number;
  /** The device of a netdev ingress or egress hook. */
  device?: string;
}

/**
 * `add chain inet T C` (a regular chain), or with `hook` a base chain
 * (`{ type ... hook ... priority ...; }`), with `{ comment "..."; }` if
 * given. NLM_F_CREATE without EXCL: an existing chain of the same kind is
 * kept as it is (its comment too); a regular chain given a hook is EEXIST.
 */
export function newChain(ref: TableName, chain: string, hook?: ChainHook, comment?: string): NetlinkRequest {
  const attributes = [attr.string(NFTA_CHAIN_TABLE, ref.table), attr.string(NFTA_CHAIN_NAME, chain)];
  if (hook) {
    const fields = [be32(NFTA_HOOK_HOOKNUM, HOOKS[hook.hook]), be32(NFTA_HOOK_PRIORITY, hook.priority)];
    if (hook.device !== undefined) fields.push(attr.string(NFTA_HOOK_DEV, hook.device));
    attributes.push(attr.string(NFTA_CHAIN_TYPE, hook.type), nest(NFTA_CHAIN_HOOK, fields));
  }
  if (comment !== undefined) attributes.push(attr.bytes(NFTA_CHAIN_USERDATA, encodeUserdata([tlv.string(UDATA_CHAIN_COMMENT, comment)])));
  const device = hook?.device === undefined ? '' : ` device ${JSON.stringify(hook.device)}`;
  const shape = hook ? ` { type ${hook.type} hook ${hook.hook}${device} priority ${hook.priority}; }` : '';
  return { type: nftType(NFT_MSG_NEWCHAIN), flags: NLM_F_CREATE, header: nfgenmsg(ref.family), attributes, what: `add chain ${familyText(ref.family)} ${ref.table} ${chain}${shape}` };
}
