// The host end of an attachment's veth pair: the veth in the host namespace
// whose alias (setupVeth's hostAlias) carries the attachment's key, or, left
// by an ADD killed before it wrote the alias, the one without an alias under
// one of the names setupVeth derives from the key (see leftover.ts). DEL goes
// by it and never by the container end's name: an interface of that name in
// the container may be another attachment's (an ADD that failed because the
// name was taken must not, on its DEL, take the live attachment's pair).
import type { NetnsError } from '../core/errors.js';
import { openNetlink, type Link, type Netlink } from '../netlink/index.js';
import type { NetNS } from '../netns.js';
import { attachmentKey, hostEndNames, keyOfTag } from './identity.js';
import { isUnaliasedHostEnd } from './leftover.js';
import type { Attachment } from './types.js';
import { listWithAliases } from './veth.js';
import { checkNetlink, checkNs, checkObject, checkString } from './arg-checks.js';

/** The host end (in `nl`'s namespace) whose alias carries `key` (attachmentKey's) of `network`, if there is one. Async. */
export async function findHostEnd(
  nl: Netlink,
  network: string,
  key: string,
): Promise<
  | (Link & {
      /** The alias that carries the attachment's key. */
      alias?: string;
    })
  | undefined
> {
  checkNetlink('findHostEnd', nl);
  checkString('findHostEnd', 'network', network);
  checkString('findHostEnd', 'key', key);
  return (await listWithAliases(nl)).find((link) => link.kind === 'veth' && keyOfTag(network, link.alias) === key);
}

/**
 * Deletes the attachment's pair by its host end (the container end goes with
 * it, and the host end's addresses and routes with that): the one whose alias
 * carries the attachment's key, and one an ADD killed before writing the alias
 * left under a name derived from that key. Resolves false when the host
 * namespace has no such end: a repeated DEL, an attachment never added, or
 * one whose namespace took the pair with it. Async, over netlink; it never
 * goes by the container end's name, which may be another attachment's.
 */
export async function deleteHostEnd(hostNs: NetNS, network: string, attachment: Attachment): Promise<boolean> {
  checkNs('deleteHostEnd', 'hostNs', hostNs);
  checkObject('deleteHostEnd', 'attachment', attachment);
  using nl = await openNetlink(hostNs);
  const key = attachmentKey(network, attachment);
  const names = new Set(hostEndNames(key));
  const ends = (await listWithAliases(nl)).filter((link) => (link.kind === 'veth' && keyOfTag(network, link.alias) === key) || (names.has(link.name) && isUnaliasedHostEnd(link)));
  let deleted = false;
  for (const end of ends) deleted = (await deleteLink(nl, end)) || deleted;
  return deleted;
}

/** False when the link went meanwhile, with its namespace. */
function deleteLink(nl: Netlink, link: Link): Promise<boolean> {
  return nl.links.delete(link.index).then(
    () => true,
    (error: NetnsError) => {
      if (error.code === 'ENODEV') return false;
      throw error;
    },
  );
}
