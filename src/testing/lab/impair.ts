// One direction of a link made worse. Rate by a token bucket (tbf), delay /
// jitter / duplication by netem (which then carries the rate too), both on
// the sending end's interface. Loss is dropped where a lossy wire loses a
// packet, out of the sender's sight: in an nftables netdev ingress hook on
// the receiving end's interface, a random share (`numgen random`). A drop at
// the sender's egress would be reported back to it (ENOBUFS): ping sends
// again, TCP takes it as local congestion, and nothing looks lost. It needs
// no sch_netem either. Clearing puts both interfaces back as made.
import type { NetnsError } from '../../core/errors.js';
import type { NetlinkHandle } from '../../netlink/handle.js';
import { commit } from '../../nftables/batch.js';
import { newChain } from '../../nftables/chains.js';
import { NFPROTO_NETDEV } from '../../nftables/constants.js';
import { dropVerdict, randomBelow } from '../../nftables/expressions.js';
import { deleteTable, newTable, type TableName } from '../../nftables/messages.js';
import { newRule } from '../../nftables/rules.js';
import { openNftables } from '../../nftables/socket.js';
import { inNode, type LabNode } from './build.js';
import { toKernelUnits, type Impairment, type KernelImpairment } from './units.js';

// Loss in millionths: 0.0001% steps.
const LOSS_MODULUS = 1_000_000;
// tbf's bucket: at least a few full-size frames, else a frame larger than the bucket never leaves.
const MIN_BURST = 15_000;
// How long a packet may wait in tbf's queue before it is dropped.
const TBF_LATENCY_US = 50_000;

/** One end of a link: the node and its interface there. */
export interface LinkEnd {
  readonly node: LabNode;
  readonly iface: string;
}

/** The netdev table holding the loss rule of what one interface receives. */
export const lossTable = (iface: string): TableName => ({ family: NFPROTO_NETDEV, table: `netns_lab_loss_${iface}` });

/** The node's nf_tables socket, opened on first use (one opening, however many ask at once). */
export function nftablesOf(node: LabNode): Promise<NetlinkHandle> {
  node.nft ??= openNftables(node.ns!);
  return node.nft;
}

const isAbsent = (error: unknown): boolean => (error as NetnsError | undefined)?.code === 'ENOENT';

/**
 * Takes every impairment off what `near` sends to `far`: `near`'s root qdisc
 * back to the default, the loss table at `far` gone.
 */
export async function clearImpairment(near: LinkEnd, far: LinkEnd): Promise<void> {
  const qdiscs = await inNode(near.node, (nl) => nl.qdiscs.list({ link: near.iface }));
  if (qdiscs.some((q) => q.parent === 'root' && q.handle !== '0:')) await inNode(near.node, (nl) => nl.qdiscs.delete({ link: near.iface, parent: 'root' }));
  const nft = await nftablesOf(far.node);
  try {
    await inNode(far.node, async () => commit(nft, [deleteTable(lossTable(far.iface))]));
  } catch (error) {
    if (!isAbsent(error)) throw error;
  }
}

async function addQdisc({ node, iface }: LinkEnd, k: KernelImpairment): Promise<void> {
  if (k.delayUs !== undefined || k.duplicate !== undefined) {
    const spec = { link: iface, parent: 'root', handle: '1:', kind: 'netem', delay: k.delayUs, jitter: k.jitterUs, duplicate: k.duplicate, rate: k.rateBytes } as const;
    await inNode(node, (nl) => nl.qdiscs.add(withoutUndefined(spec)));
  } else if (k.rateBytes !== undefined) {
    const burst = Math.max(MIN_BURST, Math.ceil(k.rateBytes / 100));
    await inNode(node, (nl) => nl.qdiscs.add({ link: iface, parent: 'root', handle: '1:', kind: 'tbf', rate: k.rateBytes!, burst, latency: TBF_LATENCY_US }));
  }
}

function withoutUndefined<T extends object>(spec: T): T {
  return Object.fromEntries(Object.entries(spec).filter(([, value]) => value !== undefined)) as T;
}

/** Drops `loss` percent of what the end receives on its interface, before anything in its node sees it. */
async function addLossRule({ node, iface }: LinkEnd, loss: number): Promise<void> {
  const table = lossTable(iface);
  const chain = { ...table, chain: 'loss' };
  const limit = Math.round((loss / 100) * LOSS_MODULUS);
  const nft = await nftablesOf(node);
  await inNode(node, async () =>
    commit(nft, [newTable(table), newChain(table, 'loss', { type: 'filter', hook: 'ingress', device: iface, priority: 0 }), newRule(chain, [...randomBelow(LOSS_MODULUS, limit), dropVerdict()])]),
  );
}

/**
 * Replaces whatever impaired what `near` sends to `far` with `impairment`
 * (checked already). A failure (ERR_NETNS_UNSUPPORTED naming sch_netem where
 * delay, jitter or duplication is asked of a kernel without it) leaves the
 * direction unimpaired.
 */
export async function applyImpairment(near: LinkEnd, far: LinkEnd, impairment: Impairment, where: string): Promise<void> {
  const k = toKernelUnits(impairment, where);
  await clearImpairment(near, far);
  try {
    await addQdisc(near, k);
    if (k.loss !== undefined && k.loss > 0) await addLossRule(far, k.loss);
  } catch (error) {
    await clearImpairment(near, far).catch(() => {});
    throw error;
  }
}
