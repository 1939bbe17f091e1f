// A link's packets are dropped until the kernel's linkwatch has seen its
// carrier come on and attached its qdisc. Linkwatch does that at once for a
// veth whose two ends have different indexes, but up to a second later for
// one whose ends have the same index, as a fresh namespace's first link often
// has on both sides: a test that pings right after createLab lost its first
// second. The lab numbers its ends apart (build.ts), and still hands a lab
// over only once every veth that is up with a carrier is operationally up,
// in case a kernel batches otherwise. A switch's bridge is not waited for:
// it forwards between its ports whatever its own state (linkwatch, which
// sees its carrier only once a port is active, may take its second), and
// only traffic sent over the bridge itself needs it, which no lab sends (a
// switch has no address).
import type { Link, Netlink } from '../../netlink/index.js';
import { allSettledOrThrow } from './all-settled.js';

/** Longer than linkwatch's one-second batching; past it the lab is handed over as it is. */
const WAIT_CAP_MS = 3000;
/**
 * A watch opens a netlink socket besides the node's own; a lab near the open
 * files limit budgets two descriptors a node and a few dozen to spare, so the
 * nodes still waiting are watched a few at a time.
 */
const WATCHES_AT_ONCE = 16;

/**
 * Whether the kernel still has to activate a veth end: up, with a carrier,
 * not yet operationally up (UNKNOWN until linkwatch first sees it).
 */
function awaitingLinkwatch(link: Pick<Link, 'kind' | 'flags' | 'operState'>): boolean {
  return link.kind === 'veth' && link.flags.includes('UP') && link.flags.includes('LOWER_UP') && link.operState !== 'UP';
}

/** Resolves once no link in the namespace of `nl` awaits linkwatch; a dump first, so a node with nothing to wait for opens no socket. */
async function untilLinksOperational(nl: Netlink): Promise<void> {
  if (!(await nl.links.list()).some(awaitingLinkwatch)) return;
  const watcher = await nl.watch({ links: true, existing: true });
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

/** Resolves once no link of any of the namespaces awaits linkwatch, watching at most WATCHES_AT_ONCE of them at a time. */
export async function untilAllLinksOperational(netlinks: Netlink[]): Promise<void> {
  const queue = [...netlinks];
  const drain = async (): Promise<void> => {
    for (let nl = queue.shift(); nl !== undefined; nl = queue.shift()) await untilLinksOperational(nl);
  };
  await allSettledOrThrow(Array.from({ length: Math.min(WATCHES_AT_ONCE, queue.length) }, drain));
}
