/**
 * What Go's pkg/ip and pkg/ipam do between IPAM and the result (interfaces,
 * routes, forwarding, masquerade, CHECK, GC), over netlink.
 *
 * A separate entry from `netns/cni` because importing these loads the
 * netlink modules and their address parser, and calling them the addon: a
 * plugin imports them where ADD, CHECK or DEL needs them, and VERSION, GC and
 * STATUS start without them.
 *
 * Guide: [CNI plumbing](../../docs/cni-plumbing.md).
 *
 * @module netns/cni/plumbing
 */
export { configureInterface, DAD_TIMEOUT_MS, ipsFor } from './interface.js';
export { listWithAliases, setAlias, setupVeth } from './veth.js';
export type { Veth, VethOptions } from './veth.js';
export { enableForward, familiesOf } from './forward.js';
export { addMasquerade, deleteMasquerade, deleteMasqueradeRules, listMasquerade, MASQUERADE_CHAIN, masqueradeLayout, masqueradeRules, POSTROUTING_CHAIN, removeMasquerade } from './masquerade.js';
export type { AttachmentRef, MasqueradeRule } from './masquerade.js';
export type { ChainRef, DumpedRule } from '../nftables/rules.js';
export { attachmentKey, attachmentOf, hostAlias, keyOfTag, masqueradeComment, networkTagPrefix } from './identity.js';
export { deleteHostEnd, findHostEnd } from './host-end.js';
export { checkInterface, checkRoutes } from './check.js';
export { collectGarbage } from './gc.js';
export type { GcOptions, GcRemoved, GcReport } from './gc.js';
