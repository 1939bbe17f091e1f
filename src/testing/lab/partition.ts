// A partition, as Jepsen's nemesis makes one: every node of one side drops
// whatever comes from or goes to the other side's addresses (input and
// output: a router on one side still forwards between others, since only the
// nodes named are cut off from each other), in an nftables table of its own per partition,
// so that healing one partition is deleting that table, in one transaction
// per node, and leaves any other partition standing.
import { commit } from '../../nftables/batch.js';
import { newChain } from '../../nftables/chains.js';
import { NFPROTO_INET } from '../../nftables/constants.js';
import { dropVerdict, matchAddress, matchFamily } from '../../nftables/expressions.js';
import { deleteTable, newTable, type TableName } from '../../nftables/messages.js';
import { newRule } from '../../nftables/rules.js';
import type { NetnsError } from '../../core/errors.js';
import { parsePrefix } from '../../netlink/validate.js';
import type { Attribute } from '../../netlink/attributes.js';
import type { NetlinkRequest } from '../../netlink/message.js';
import { inNode, type LabNode } from './build.js';
import { nftablesOf } from './impair.js';

/** A partition in force: its id (for heal) and its two sides. */
export interface LabPartition {
  /** Its number in this lab, from 1 (heal(id) takes it). */
  readonly id: number;
  /** The two sets of nodes cut off from each other. */
  readonly sides: readonly [readonly string[], readonly string[]];
}

/** The table of one partition in each node it touches. */
export const partitionTable = (id: number): TableName => ({ family: NFPROTO_INET, table: `netns_lab_partition_${id}` });

const HOOKS = ['input', 'output'] as const;

/** The rules dropping traffic from and to each address: saddr on input, daddr on output. */
function dropRules(table: TableName, addresses: string[]): NetlinkRequest[] {
  const rules: NetlinkRequest[] = [];
  for (const address of addresses) {
    const prefix = parsePrefix(address);
    const family = prefix.family === 2 ? 4 : 6;
    const match = (field: 'saddr' | 'daddr'): Attribute[] => [...matchFamily(family), ...matchAddress(family, field, 'eq', prefix), dropVerdict()];
    rules.push(newRule({ ...table, chain: 'input' }, match('saddr')), newRule({ ...table, chain: 'output' }, match('daddr')));
  }
  return rules;
}

/** Cuts `node` off from `addresses` (the other side's) for partition `id`: one transaction. */
export async function cutOff(node: LabNode, id: number, addresses: string[]): Promise<void> {
  const table = partitionTable(id);
  const chains = HOOKS.map((hook) => newChain(table, hook, { type: 'filter', hook, priority: 0 }));
  const nft = await nftablesOf(node);
  await inNode(node, async () => commit(nft, [newTable(table), ...chains, ...dropRules(table, addresses)]));
}

/** Undoes cutOff; a node without that table (never cut, or healed) is fine. */
export async function reconnect(node: LabNode, id: number): Promise<void> {
  const nft = await nftablesOf(node);
  try {
    await inNode(node, async () => commit(nft, [deleteTable(partitionTable(id))]));
  } catch (error) {
    if ((error as NetnsError).code !== 'ENOENT') throw error;
  }
}
