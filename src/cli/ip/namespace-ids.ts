// The ids this process's namespace has for named namespaces, as `ip netns
// list` and `list-id` show them. Asked over one netlink socket made in this
// process's namespace; a namespace that cannot be asked about has no id shown,
// as with ip.
import { openNetlink, type Netlink } from '../../netlink/index.js';
import type { NamespaceEntry } from '../../lifecycle.js';

export async function withNetlink<T>(use: (nl: Netlink) => Promise<T>): Promise<T> {
  const nl = await openNetlink();
  try {
    return await use(nl);
  } finally {
    nl.close();
  }
}

/** Each entry's id, where it has one. */
export async function idsOf(entries: readonly NamespaceEntry[]): Promise<Map<string, number>> {
  const ids = new Map<string, number>();
  if (!entries.some((entry) => entry.alive)) return ids;
  await withNetlink(async (nl) => {
    for (const entry of entries) {
      if (!entry.alive) continue;
      const id = await nl.nsids.get(entry.path).catch(() => undefined);
      if (id !== undefined) ids.set(entry.name, id);
    }
  });
  return ids;
}
