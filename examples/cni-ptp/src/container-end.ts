// The container end of the pair, deleted by name inside the container: the
// host end goes with it, and the host end's address and route with that.
import type { NetNS } from 'netns';
import { openNetlink, type NetnsError } from 'netns/netlink';

/** Resolves true if it deleted the link, false if there was none of that name (a repeated DEL). */
export async function deleteContainerEnd(container: NetNS, ifname: string): Promise<boolean> {
  using nl = await openNetlink(container);
  return nl.links.delete(ifname).then(
    () => true,
    (error: NetnsError) => {
      if (error.code === 'ENODEV') return false;
      throw error;
    },
  );
}
