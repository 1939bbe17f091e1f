// One address set per attachment, in the host namespace's nftables table of
// the network, named by the attachment's key (network hash and attachment
// hash: the same key the veth alias and masquerade comments carry). Host
// policy refers to it by name; DEL empties it and destroys it after the
// configured delay, unless the same attachment is added again first. The
// plugin's process ends long before that delay: each ADD and DEL destroys the
// sets whose delay is over (destroyDue), whichever attachment they were. DEL
// and GC then remove the table once nothing is left in it (no set, nobody's
// chain): a network whose attachments are all gone leaves nothing behind.
// The resident daemon does not wait for a later call: SharedAddressSets
// opens the table again at its earliest deadline and does the same then.
//
// Every access holds the table's writer lock (reads included): a writer reads
// as the table's sole writer, so other plugins writing in the namespace at
// the same moment cannot make its reads fail. DEL, CHECK and GC open the
// table only if it exists, so they create nothing. The calls of a moment
// share one writer (SharedAddressSets): in the resident daemon a pod storm
// takes the lock and reads the table once, and its calls' set changes share
// transactions; a plugin process is one call, which opens and closes it.
import type { NetNS } from 'netns';
import { SharedAddressSets, type AddressSets } from 'netns/addrset';
import { networkTagPrefix } from 'netns/cni/plumbing';
import type { AddressSetSettings } from './config.js';

const shared = new SharedAddressSets();

const options = (host: NetNS, settings: AddressSetSettings) => ({ netns: host, table: settings.table, deleteDelayMs: settings.deleteDelayMs });

/** The daemon stopping: no table is opened again for its deadlines (the next writer's calls destroy what is due). */
export function stopDeferredDeletes(): void {
  shared.close();
}

/** The attachment's set holds exactly `addresses` (bare IPs). */
export async function ensureAddressSet(host: NetNS, settings: AddressSetSettings, owner: string, addresses: string[]): Promise<void> {
  await shared.use(options(host, settings), async (sets) => {
    await sets.ensure(owner, addresses);
    await sets.destroyDue();
  });
}

/**
 * Starts the deferred destroy of the attachment's set (nothing if it has none, or its destroy is already
 * pending: a repeated DEL, one never added); the table goes with its last set, once the last call sharing it is done.
 */
export async function releaseAddressSet(host: NetNS, settings: AddressSetSettings, owner: string): Promise<void> {
  await shared.use(
    options(host, settings),
    async (sets: AddressSets) => {
      // delete() acts on a live or orphaned set only, as the writer's model (read with the table) has it: no read of the kernel here, which would split the transactions calls at once share.
      await sets.delete(owner);
      await sets.destroyDue();
    },
    { onlyExisting: true, deleteTableIfEmpty: true },
  );
}

/** The addresses of `wanted` the attachment's set lacks (all of them when it has no live set). */
export async function missingFromSet(host: NetNS, settings: AddressSetSettings, owner: string, wanted: string[]): Promise<string[]> {
  const details = await shared.use(options(host, settings), (sets) => sets.inspect(owner), { onlyExisting: true });
  if (details?.state !== 'live' && details?.state !== 'orphan') return wanted;
  const held = new Set([...details.v4.elements, ...details.v6.elements]);
  return wanted.filter((address) => !held.has(address));
}

/**
 * GC: destroys the sets of this network's attachments not in `live` (keys),
 * except those whose deferred destroy is still ahead; the table goes with its last set. A table may be shared
 * by several networks (`addressSets.table`): another network's owners are
 * counted live, so this network's GC never judges them. Owners live in calls
 * sharing the writer (an ADD in flight) are never collected either.
 */
export async function collectAddressSets(host: NetNS, settings: AddressSetSettings, network: string, live: string[]): Promise<string[]> {
  const removed = await shared.use(
    options(host, settings),
    async (sets) => {
      const ours = networkTagPrefix(network);
      const others = (await sets.list()).map((row) => row.owner).filter((owner): owner is string => owner !== null && !owner.startsWith(ours));
      const { removed } = await sets.gc({ live: [...live, ...others] });
      return removed.map((entry) => entry.name);
    },
    { onlyExisting: true, deleteTableIfEmpty: true },
  );
  return removed ?? [];
}
