// A host end an ADD left without its alias: killed between making the pair
// and writing IFLA_IFALIAS (the kernel ignores the alias in the message that
// makes a link). Its name (hostEndNames) is then the only record of whose it
// is, so DEL, GC and a retried ADD take a link for one only in the exact
// state setupVeth leaves it in at that moment: a veth with no alias, still
// down (the alias is written before it goes up), its peer in another
// namespace. A user's veth of a matching name in any other state is left alone.
import type { NetnsError } from '../core/errors.js';
import type { Link, Netlink } from '../netlink/index.js';
import type { NetNS } from '../netns.js';

/** Whether `link` is in the state a host end is in before its alias is written. */
export function isUnaliasedHostEnd(link: Link & { alias?: string }): boolean {
  return link.kind === 'veth' && link.alias === undefined && !link.up && link.linkNetnsId !== undefined;
}

/**
 * Whether `hostEnd` (a link of `host`'s namespace) is the peer of the veth
 * named `ifname` in `containerNs` (opened as `inside`): each end names the
 * other's index, and the host end's peer namespace is the container's.
 */
export async function isPeerOf(host: Netlink, hostEnd: Link, inside: Netlink, containerNs: NetNS, ifname: string): Promise<boolean> {
  const end = await inside.links.get(ifname).catch((error: NetnsError) => {
    if (error.code === 'ENODEV') return undefined;
    throw error;
  });
  if (end?.kind !== 'veth' || end.linkIndex !== hostEnd.index || hostEnd.linkIndex !== end.index) return false;
  return hostEnd.linkNetnsId === (await host.nsids.get(containerNs));
}
