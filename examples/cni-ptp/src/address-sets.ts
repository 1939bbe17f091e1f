// One address set per attachment, in the host namespace's nftables table of
// the network, named by the attachment's key (network hash and attachment
// hash: the same key the veth alias and masquerade comments carry). Host
// policy refers to it by name; DEL empties it and destroys it after the
// configured delay, unless the same attachment is added again first. The
// plugin's process ends long before that delay: each ADD and DEL destroys the
// sets whose delay is over (destroyDue), whichever attachment they were.
import type { NetNS } from 'netns';
import { AddressSets } from 'netns/addrset';
import type { AddressSetSettings } from './config.js';

async function withSets<T>(host: NetNS, settings: AddressSetSettings, readOnly: boolean, use: (sets: AddressSets) => Promise<T>): Promise<T> {
  const sets = await AddressSets.open({ netns: host, table: settings.table, deleteDelayMs: settings.deleteDelayMs, readOnly });
  try {
    return await use(sets);
  } finally {
    await sets.close();
  }
}

/** The attachment's set holds exactly `addresses` (bare IPs). */
export async function ensureAddressSet(host: NetNS, settings: AddressSetSettings, owner: string, addresses: string[]): Promise<void> {
  await withSets(host, settings, false, async (sets) => {
    await sets.ensure(owner, addresses);
    await sets.destroyDue();
  });
}

/**
 * Starts the deferred destroy of the attachment's set. Looks first without
 * writing: a DEL of an attachment never added (or already deleted) creates
 * no table and takes no lock.
 */
export async function releaseAddressSet(host: NetNS, settings: AddressSetSettings, owner: string): Promise<void> {
  const state = await withSets(host, settings, true, async (sets) => (await sets.inspect(owner)).state);
  if (state === 'absent') return;
  await withSets(host, settings, false, async (sets) => {
    if (state !== 'pending') await sets.delete(owner);
    await sets.destroyDue();
  });
}

/** The addresses of `wanted` the attachment's set lacks (all of them when it has no live set). */
export async function missingFromSet(host: NetNS, settings: AddressSetSettings, owner: string, wanted: string[]): Promise<string[]> {
  const details = await withSets(host, settings, true, (sets) => sets.inspect(owner));
  if (details.state !== 'live' && details.state !== 'orphan') return wanted;
  const held = new Set([...details.v4.elements, ...details.v6.elements]);
  return wanted.filter((address) => !held.has(address));
}

/**
 * GC: destroys the sets of attachments not in `live` (keys), except those
 * whose deferred destroy is still ahead. Looks first: no table, nothing to do.
 */
export async function collectAddressSets(host: NetNS, settings: AddressSetSettings, live: string[]): Promise<string[]> {
  const rows = await withSets(host, settings, true, (sets) => sets.list());
  if (rows.length === 0) return [];
  const report = await withSets(host, settings, false, (sets) => sets.gc({ live }));
  return report.removed.map((entry) => entry.name);
}
