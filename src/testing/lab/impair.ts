// One direction of a link made worse, on the sending end's interface:
// rate by a token bucket (tbf), delay / jitter / duplication by netem (which
// then carries the loss and rate too), and loss without netem by an nftables
// egress hook dropping a random share (`numgen random`), so that loss works
// on kernels without sch_netem. Clearing puts the interface back as made.
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

/** The netdev table holding one interface's loss rule. */
export const lossTable = (iface: string): TableName => ({ family: NFPROTO_NETDEV, table: `netns_lab_loss_${iface}` });

/** The node's nf_tables socket, opened on first use (one opening, however many ask at once). */
export function nftablesOf(node: LabNode): Promise<NetlinkHandle> {
  node.nft ??= openNftables(node.ns!);
  return node.nft;
}

const isAbsent = (error: unknown): boolean => (error as NetnsError | undefined)?.code === 'ENOENT';

/** Takes every impairment off `iface` of `node`: its root qdisc back to the default, its loss table gone. */
export async function clearImpairment(node: LabNode, iface: string): Promise<void> {
  const qdiscs = await inNode(node, (nl) => nl.qdiscs.list({ link: iface }));
  if (qdiscs.some((q) => q.parent === 'root' && q.handle !== '0:')) await inNode(node, (nl) => nl.qdiscs.delete({ link: iface, parent: 'root' }));
  const nft = await nftablesOf(node);
  try {
    await inNode(node, async () => commit(nft, [deleteTable(lossTable(iface))]));
  } catch (error) {
    if (!isAbsent(error)) throw error;
  }
}

async function addQdisc(node: LabNode, iface: string, k: KernelImpairment): Promise<boolean> {
  const netem = k.delayUs !== undefined || k.duplicate !== undefined;
  if (netem) {
    const spec = { link: iface, parent: 'root', handle: '1:', kind: 'netem', delay: k.delayUs, jitter: k.jitterUs, loss: k.loss, duplicate: k.duplicate, rate: k.rateBytes } as const;
    await inNode(node, (nl) => nl.qdiscs.add(withoutUndefined(spec)));
  } else if (k.rateBytes !== undefined) {
    const burst = Math.max(MIN_BURST, Math.ceil(k.rateBytes / 100));
    await inNode(node, (nl) => nl.qdiscs.add({ link: iface, parent: 'root', handle: '1:', kind: 'tbf', rate: k.rateBytes!, burst, latency: TBF_LATENCY_US }));
  }
  return netem;
}

function withoutUndefined<T extends object>(spec: T): T {
  return Object.fromEntries(Object.entries(spec).filter(([, value]) => value !== undefined)) as T;
}

async function addLossRule(node: LabNode, iface: string, loss: number): Promise<void> {
  const table = lossTable(iface);
  const chain = { ...table, chain: 'loss' };
  const limit = Math.round((loss / 100) * LOSS_MODULUS);
  const nft = await nftablesOf(node);
  await inNode(node, async () =>
    commit(nft, [newTable(table), newChain(table, 'loss', { type: 'filter', hook: 'egress', device: iface, priority: 0 }), newRule(chain, [...randomBelow(LOSS_MODULUS, limit), dropVerdict()])]),
  );
}

/**
 * Replaces whatever impaired `iface` of `node` with `impairment` (checked
 * already). A failure (ERR_NETNS_UNSUPPORTED naming sch_netem where delay,
 * jitter or duplication is asked of a kernel without it) leaves the
 * interface unimpaired.
 */
export async function applyImpairment(node: LabNode, iface: string, impairment: Impairment, where: string): Promise<void> {
  const k = toKernelUnits(impairment, where);
  await clearImpairment(node, iface);
  try {
    const netem = await addQdisc(node, iface, k);
    if (!netem && k.loss !== undefined && k.loss > 0) await addLossRule(node, iface, k.loss);
  } catch (error) {
    await clearImpairment(node, iface).catch(() => {});
    throw error;
  }
}
