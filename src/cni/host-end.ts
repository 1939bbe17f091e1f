// The host end of an attachment's veth pair: the veth in the host namespace
// whose alias (setupVeth's hostAlias) carries the attachment's key. DEL goes
// by it and never by the container end's name: an interface of that name in
// the container may be another attachment's (an ADD that failed because the
// name was taken must not, on its DEL, take the live attachment's pair).
import type { NetnsError } from '../core/errors.js';
import { openNetlink, type Link, type Netlink } from '../netlink/index.js';
import type { NetNS } from '../netns.js';
import { attachmentKey, keyOfTag } from './identity.js';
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
 * it, and the host end's addresses and routes with that). Resolves false when
 * the host namespace has no such end: a repeated DEL, an attachment never
 * added, or one whose namespace took the pair with it. Async, over netlink;
 * it never goes by the container end's name, which may be another
 * attachment's.
 */
export async function deleteHostEnd(hostNs: NetNS, network: string, attachment: Attachment): Promise<boolean> {
  checkNs('deleteHostEnd', 'hostNs', hostNs);
  checkObject('deleteHostEnd', 'attachment', attachment);
  using nl = await openNetlink(hostNs);
  const end = await findHostEnd(nl, network, attachmentKey(network, attachment));
  if (end === undefined) return false;
  return nl.links.delete(end.index).then(
    () => true,
    (error: NetnsError) => {
      if (error.code === 'ENODEV') return false; // gone meanwhile, with its namespace
      throw error;
    },
  );
}
