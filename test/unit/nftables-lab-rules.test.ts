// The lab's nf_tables messages (impair.ts's loss rule on a netdev ingress
// hook, partition.ts's drop rules) compared byte for byte with nft 1.0.6's,
// captured on this kernel in a scratch namespace with
// `strace -f -e trace=sendmsg -e write=3 nft -f FILE` (seqs zeroed), FILE:
//   add table netdev netns_lab_loss_eth0
//   add chain netdev netns_lab_loss_eth0 loss { type filter hook ingress device "eth0" priority 0; }
//   add rule netdev netns_lab_loss_eth0 loss numgen random mod 1000000 < 12345 drop
//   add table inet netns_lab_partition_1
//   add chain inet netns_lab_partition_1 input { type filter hook input priority 0; }
//   add rule inet netns_lab_partition_1 input ip saddr 10.0.3.2 drop
import { describe, expect, it } from 'vitest';
import { newChain } from '../../dist/nftables/chains.js';
import { dropVerdict, matchAddress, matchFamily, randomBelow } from '../../dist/nftables/expressions.js';
import { newTable } from '../../dist/nftables/messages.js';
import { newRule } from '../../dist/nftables/rules.js';
import { parsePrefix } from '../../dist/netlink/validate.js';
import { lossTable } from '../../dist/testing/lab/impair.js';
import { partitionTable } from '../../dist/testing/lab/partition.js';
import { wire } from '../helpers/netlink-wire.js';

const NFT_1_0_6 = {
  lossTable: '34000000000a0100000000000000000005000000180001006e65746e735f6c61625f6c6f73735f65746830000800020000000000',
  lossChain: '64000000030a0104000000000000000005000000180001006e65746e735f6c61625f6c6f73735f6574683000090003006c6f7373000000000b00070066696c74657200002000048008000100000000000800020000000000090003006574683000000000',
  lossRule: '0c010000060a010c000000000000000005000000180001006e65746e735f6c61625f6c6f73735f6574683000090002006c6f737300000000d4000480340001800b0001006e756d67656e000024000280080001000000000108000200000f424008000300000000010800040000000000400001800e000100627974656f726465720000002c000280080001000000000108000200000000010800030000000001080004000000000408000500000000042c00018008000100636d700020000280080001000000000108000200000000020c0003800800010000003039300001800e000100696d6d6564696174650000001c0002800800010000000000100002800c0002800800010000000000',
  partitionTable: '38000000000a01000000000000000000010000001a0001006e65746e735f6c61625f706172746974696f6e5f310000000800020000000000',
  partitionChain: '5c000000030a01040000000000000000010000001a0001006e65746e735f6c61625f706172746974696f6e5f310000000a000300696e7075740000000b00070066696c74657200001400048008000100000000010800020000000000',
  partitionRule: '20010000060a010c0000000000000000010000001a0001006e65746e735f6c61625f706172746974696f6e5f310000000a000200696e707574000000e400048024000180090001006d6574610000000014000280080002000000000f08000100000000012c00018008000100636d700020000280080001000000000108000200000000000c0003800500010002000000340001800c0001007061796c6f6164002400028008000100000000010800020000000001080003000000000c08000400000000042c00018008000100636d700020000280080001000000000108000200000000000c000380080001000a000302300001800e000100696d6d6564696174650000001c0002800800010000000000100002800c0002800800010000000000',
};

describe("the lab's nf_tables messages as nft 1.0.6 sends them", () => {
  it('a netdev table, its ingress base chain on a device, and numgen random mod N < L drop', () => {
    const table = lossTable('eth0');
    const rule = newRule({ ...table, chain: 'loss' }, [...randomBelow(1_000_000, 12345), dropVerdict()]);
    expect(wire([newTable(table), newChain(table, 'loss', { type: 'filter', hook: 'ingress', device: 'eth0', priority: 0 }), rule])).toEqual([
      NFT_1_0_6.lossTable,
      NFT_1_0_6.lossChain,
      NFT_1_0_6.lossRule,
    ]);
  });

  it("a partition's inet table, its input chain and an ip saddr drop", () => {
    const table = partitionTable(1);
    const rule = newRule({ ...table, chain: 'input' }, [...matchFamily(4), ...matchAddress(4, 'saddr', 'eq', parsePrefix('10.0.3.2')), dropVerdict()]);
    expect(wire([newTable(table), newChain(table, 'input', { type: 'filter', hook: 'input', priority: 0 }), rule])).toEqual([
      NFT_1_0_6.partitionTable,
      NFT_1_0_6.partitionChain,
      NFT_1_0_6.partitionRule,
    ]);
  });
});
