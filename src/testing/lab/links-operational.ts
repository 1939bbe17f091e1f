// A link's packets are dropped until the kernel's linkwatch has seen its
// carrier come on and attached its qdisc. Linkwatch does that at once for a
// veth whose two ends have different indexes, but up to a second later for
// one whose ends have the same index, as a fresh namespace's first link often
// has on both sides: a test that pings right after createLab lost its first
// second. So a lab is handed over once every link that is up with a carrier
// is operationally up.
import type { LabNode } from './build.js';

/** Longer than linkwatch's one-second batching; past it the lab is handed over as it is. */
const WAIT_CAP_MS = 3000;

/**
 * Whether the kernel still has to activate one of the lab's links (a veth
 * end or a switch's bridge): up, with a carrier, not yet operationally up
 * (UNKNOWN until linkwatch first sees it, as lo and dummies stay for good).
 */
function awaitingLinkwatch(link: { kind?: string; flags: string[]; operState: string }): boolean {
  const labKind = link.kind === 'veth' || link.kind === 'bridge';
  return labKind && link.flags.includes('UP') && link.flags.includes('LOWER_UP') && link.operState !== 'UP';
}

/** Resolves once no link of the node awaits linkwatch. */
export async function untilLinksOperational(node: LabNode): Promise<void> {
  const watcher = await node.nl!.watch({ links: true, existing: true });
  const cap = setTimeout(() => watcher.close(), WAIT_CAP_MS).unref();
  try {
    const waiting = new Set<number>();
    let synced = false;
    for await (const event of watcher) {
      if (event.type === 'synced') synced = true;
      if (event.type === 'link') {
        if (event.action !== 'delete' && awaitingLinkwatch(event.link)) waiting.add(event.link.index);
        else waiting.delete(event.link.index);
      }
      if (synced && waiting.size === 0) return;
    }
  } finally {
    clearTimeout(cap);
    watcher.close();
  }
}
