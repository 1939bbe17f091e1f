// The ids this process's namespace has for named namespaces, as `ip netns
// list` and `list-id` show them. Asked over one netlink socket made in this
// process's namespace; a namespace that cannot be asked about has no id shown,
// as with ip.
import { openNetlink } from '../../netlink/index.js';
import type { NamespaceEntry } from '../../lifecycle.js';

/** Each entry's id, where it has one. */
export async function idsOf(entries: readonly NamespaceEntry[]): Promise<Map<string, number>> {
  const ids = new Map<string, number>();
  if (!entries.some((entry) => entry.alive)) return ids;
  using nl = await openNetlink();
  for (const entry of entries) {
    if (!entry.alive) continue;
    const id = await nl.nsids.get(entry.path).catch(() => undefined);
    if (id !== undefined) ids.set(entry.name, id);
  }
  return ids;
}
