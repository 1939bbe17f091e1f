// One address set per attachment, in the host namespace's nftables table of
// the network, named by the attachment's key (network hash and attachment
// hash: the same key the veth alias and masquerade comments carry). Host
// policy refers to it by name; DEL empties it and destroys it after the
// configured delay, unless the same attachment is added again first. The
// plugin's process ends long before that delay: each ADD and DEL destroys the
// sets whose delay is over (destroyDue), whichever attachment they were. DEL
// and GC then remove the table once nothing is left in it (no set, nobody's
// chain): a network whose attachments are all gone leaves nothing behind.
//
// Every access takes the table's writer lock (reads included): a writer reads
// as the table's sole writer, so other plugins writing in the namespace at
// the same moment cannot make its reads fail. DEL, CHECK and GC open the
// table only if it exists, so they create nothing.
import type { NetNS } from 'netns';
import { AddressSets } from 'netns/addrset';
import { networkTagPrefix } from 'netns/cni/plumbing';
import type { AddressSetSettings } from './config.js';

const options = (host: NetNS, settings: AddressSetSettings) => ({ netns: host, table: settings.table, deleteDelayMs: settings.deleteDelayMs });

async function withSets<T>(sets: AddressSets, use: (sets: AddressSets) => Promise<T>): Promise<T> {
  try {
    return await use(sets);
  } finally {
    await sets.close();
  }
}

/** `use` on the table if it exists; undefined (nothing created) if it does not. */
async function withExisting<T>(host: NetNS, settings: AddressSetSettings, use: (sets: AddressSets) => Promise<T>): Promise<T | undefined> {
  const sets = await AddressSets.openExisting(options(host, settings));
  return sets ? withSets(sets, use) : undefined;
}

/** The attachment's set holds exactly `addresses` (bare IPs). */
export async function ensureAddressSet(host: NetNS, settings: AddressSetSettings, owner: string, addresses: string[]): Promise<void> {
  await withSets(await AddressSets.open(options(host, settings)), async (sets) => {
    await sets.ensure(owner, addresses);
    await sets.destroyDue();
  });
}

/** Starts the deferred destroy of the attachment's set (nothing if it has none: a repeated DEL, one never added); the table goes with its last set. */
export async function releaseAddressSet(host: NetNS, settings: AddressSetSettings, owner: string): Promise<void> {
  await withExisting(host, settings, async (sets) => {
    const { state } = await sets.inspect(owner);
    if (state === 'live' || state === 'orphan') await sets.delete(owner);
    await sets.destroyDue();
    await sets.deleteTableIfEmpty();
  });
}

/** The addresses of `wanted` the attachment's set lacks (all of them when it has no live set). */
export async function missingFromSet(host: NetNS, settings: AddressSetSettings, owner: string, wanted: string[]): Promise<string[]> {
  const details = await withExisting(host, settings, (sets) => sets.inspect(owner));
  if (details?.state !== 'live' && details?.state !== 'orphan') return wanted;
  const held = new Set([...details.v4.elements, ...details.v6.elements]);
  return wanted.filter((address) => !held.has(address));
}

/**
 * GC: destroys the sets of this network's attachments not in `live` (keys),
 * except those whose deferred destroy is still ahead; the table goes with its last set. A table may be shared
 * by several networks (`addressSets.table`): another network's owners are
 * counted live, so this network's GC never judges them.
 */
export async function collectAddressSets(host: NetNS, settings: AddressSetSettings, network: string, live: string[]): Promise<string[]> {
  const removed = await withExisting(host, settings, async (sets) => {
    const ours = networkTagPrefix(network);
    const others = (await sets.list()).map((row) => row.owner).filter((owner): owner is string => owner !== null && !owner.startsWith(ours));
    const { removed } = await sets.gc({ live: [...live, ...others] });
    await sets.deleteTableIfEmpty();
    return removed.map((entry) => entry.name);
  });
  return removed ?? [];
}
