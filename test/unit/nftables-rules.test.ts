// nf_tables chain and rule messages compared byte for byte with nft 1.0.6's
// own, captured on this kernel in a scratch namespace with
// `strace -f -e trace=sendmsg -e write=3 nft -f FILE` (seqs zeroed), FILE:
//   add table inet cni_plugins_masquerade
//   add chain inet cni_plugins_masquerade masq_checks { type nat hook postrouting priority srcnat; }
//   add rule inet cni_plugins_masquerade masq_checks ip saddr 10.1.1.2 ip daddr != 10.1.1.0/24 masquerade comment "<COMMENT>"
//   add rule inet cni_plugins_masquerade masq_checks ip6 saddr fd00::2 ip6 daddr != fd00::/64 masquerade comment "c6"
//   add rule inet cni_plugins_masquerade masq_checks ip saddr 10.1.2.2 ip daddr != 10.1.0.0/17 masquerade
// then `delete rule inet cni_plugins_masquerade masq_checks handle 2`. And the
// official plugins' masquerade transaction (pkg/ip/ipmasq_nftables_linux.go),
// as knftables writes it for unit-test/eth0/one at 192.168.1.1/24, the same way:
//   add table inet cni_plugins_masquerade { comment "Masquerading for plugins from github.com/containernetworking/plugins" ; }
//   add chain inet cni_plugins_masquerade masq_checks { comment "Masquerade traffic from certain IPs to any (non-multicast) IP outside their subnet" ; }
//   add chain inet cni_plugins_masquerade postrouting { type nat hook postrouting priority 100 ; }
//   flush chain inet cni_plugins_masquerade postrouting
//   add rule inet cni_plugins_masquerade postrouting ip daddr == 224.0.0.0/4  return
//   add rule inet cni_plugins_masquerade postrouting ip6 daddr == ff00::/8  return
//   add rule inet cni_plugins_masquerade postrouting goto masq_checks
//   add rule inet cni_plugins_masquerade masq_checks ip saddr == 192.168.1.1 ip daddr != 192.168.1.0/24 masquerade comment "6fd94d501e58f0aa-287fc69eff0574a2, net: unit-test, if: eth0, id: one"
import { describe, expect, it } from 'vitest';
import { newChain } from '../../dist/nftables/chains.js';
import { gotoChain, matchAddress, matchFamily, returnVerdict } from '../../dist/nftables/expressions.js';
import { parsePrefix } from '../../dist/netlink/validate.js';
import { newTable } from '../../dist/nftables/messages.js';
import { deleteRule, flushChain, newRule } from '../../dist/nftables/rules.js';
import { MASQUERADE_CHAIN, masqueradeLayout, masqueradeRules, POSTROUTING_CHAIN } from '../../dist/cni/masquerade.js';
import { attachmentKey, hostAlias, keyOfTag, masqueradeComment } from '../../dist/cni/identity.js';
import { wire } from '../helpers/netlink-wire.js';

const NFT_1_0_6 = {
  newTable: '38000000000a01000000000000000000010000001b000100636e695f706c7567696e735f6d61737175657261646500000800020000000000',
  newChain: '5c000000030a01040000000000000000010000001b000100636e695f706c7567696e735f6d6173717565726164650000100003006d6173715f636865636b7300080007006e6174001400048008000100000000040800020000000064',
  rule4: 'a8010000060a010c0000000000000000010000001b000100636e695f706c7567696e735f6d6173717565726164650000100002006d6173715f636865636b73002801048024000180090001006d6574610000000014000280080002000000000f08000100000000012c00018008000100636d700020000280080001000000000108000200000000000c0003800500010002000000340001800c0001007061796c6f6164002400028008000100000000010800020000000001080003000000000c08000400000000042c00018008000100636d700020000280080001000000000108000200000000000c000380080001000a010102340001800c0001007061796c6f6164002400028008000100000000010800020000000001080003000000001008000400000000032c00018008000100636d700020000280080001000000000108000200000000010c000380070001000a01010014000180090001006d617371000000000400028040000700003a303132333435363738396162636465662d666564636261393837363534333231302c206e65743a6e312c2069663a657468302c2069643a633100',
  rule6: '84010000060a010c0000000000000000010000001b000100636e695f706c7567696e735f6d6173717565726164650000100002006d6173715f636865636b73003801048024000180090001006d6574610000000014000280080002000000000f08000100000000012c00018008000100636d700020000280080001000000000108000200000000000c000380050001000a000000340001800c0001007061796c6f6164002400028008000100000000010800020000000001080003000000000808000400000000103800018008000100636d70002c000280080001000000000108000200000000001800038014000100fd000000000000000000000000000002340001800c0001007061796c6f6164002400028008000100000000010800020000000001080003000000001808000400000000083000018008000100636d70002400028008000100000000010800020000000001100003800c000100fd0000000000000014000180090001006d6173710000000004000280090007000003633600000000',
  rule17: 'ac010000060a010c0000000000000000010000001b000100636e695f706c7567696e735f6d6173717565726164650000100002006d6173715f636865636b73006c01048024000180090001006d6574610000000014000280080002000000000f08000100000000012c00018008000100636d700020000280080001000000000108000200000000000c0003800500010002000000340001800c0001007061796c6f6164002400028008000100000000010800020000000001080003000000000c08000400000000042c00018008000100636d700020000280080001000000000108000200000000000c000380080001000a010202340001800c0001007061796c6f616400240002800800010000000001080002000000000108000300000000100800040000000004440001800c0001006269747769736500340002800800010000000001080002000000000108000300000000040c00048008000100ffff80000c00058008000100000000002c00018008000100636d700020000280080001000000000108000200000000010c000380080001000a01000014000180090001006d6173710000000004000280',
  upstreamTable: '84000000000a01000000000000000000010000001b000100636e695f706c7567696e735f6d617371756572616465000008000200000000004b00060000454d6173717565726164696e6720666f7220706c7567696e732066726f6d206769746875622e636f6d2f636f6e7461696e65726e6574776f726b696e672f706c7567696e730000',
  upstreamMasqChecks: '9c000000030a01040000000000000000010000001b000100636e695f706c7567696e735f6d6173717565726164650000100003006d6173715f636865636b730059000c0000534d61737175657261646520747261666669632066726f6d206365727461696e2049507320746f20616e7920286e6f6e2d6d756c74696361737429204950206f757473696465207468656972207375626e657400000000',
  upstreamPostrouting: '5c000000030a01040000000000000000010000001b000100636e695f706c7567696e735f6d617371756572616465000010000300706f7374726f7574696e6700080007006e6174001400048008000100000000040800020000000064',
  flushPostrouting: '40000000080a01000000000000000000010000001b000100636e695f706c7567696e735f6d617371756572616465000010000200706f7374726f7574696e6700',
  returnMulticast4: '68010000060a010c0000000000000000010000001b000100636e695f706c7567696e735f6d617371756572616465000010000200706f7374726f7574696e67002801048024000180090001006d6574610000000014000280080002000000000f08000100000000012c00018008000100636d700020000280080001000000000108000200000000000c0003800500010002000000340001800c0001007061796c6f616400240002800800010000000001080002000000000108000300000000100800040000000004440001800c0001006269747769736500340002800800010000000001080002000000000108000300000000040c00048008000100f00000000c00058008000100000000002c00018008000100636d700020000280080001000000000108000200000000000c00038008000100e0000000300001800e000100696d6d6564696174650000001c0002800800010000000000100002800c00028008000100fffffffb',
  returnMulticast6: '24010000060a010c0000000000000000010000001b000100636e695f706c7567696e735f6d617371756572616465000010000200706f7374726f7574696e6700e400048024000180090001006d6574610000000014000280080002000000000f08000100000000012c00018008000100636d700020000280080001000000000108000200000000000c000380050001000a000000340001800c0001007061796c6f6164002400028008000100000000010800020000000001080003000000001808000400000000012c00018008000100636d700020000280080001000000000108000200000000000c00038005000100ff000000300001800e000100696d6d6564696174650000001c0002800800010000000000100002800c00028008000100fffffffb',
  gotoMasqChecks: '84000000060a010c0000000000000000010000001b000100636e695f706c7567696e735f6d617371756572616465000010000200706f7374726f7574696e670044000480400001800e000100696d6d6564696174650000002c0002800800010000000000200002801c00028008000100fffffffc100002006d6173715f636865636b7300',
  upstreamRule: 'b4010000060a010c0000000000000000010000001b000100636e695f706c7567696e735f6d6173717565726164650000100002006d6173715f636865636b73002801048024000180090001006d6574610000000014000280080002000000000f08000100000000012c00018008000100636d700020000280080001000000000108000200000000000c0003800500010002000000340001800c0001007061796c6f6164002400028008000100000000010800020000000001080003000000000c08000400000000042c00018008000100636d700020000280080001000000000108000200000000000c00038008000100c0a80101340001800c0001007061796c6f6164002400028008000100000000010800020000000001080003000000001008000400000000032c00018008000100636d700020000280080001000000000108000200000000010c00038007000100c0a8010014000180090001006d61737100000000040002804b0007000045366664393464353031653538663061612d323837666336396566663035373461322c206e65743a20756e69742d746573742c2069663a20657468302c2069643a206f6e650000',
  deleteRule: '4c000000080a01000000000000000000010000001b000100636e695f706c7567696e735f6d6173717565726164650000100002006d6173715f636865636b73000c0003000000000000000002',
};
const COMMENT = '0123456789abcdef-fedcba9876543210, net:n1, if:eth0, id:c1';

describe('nf_tables chains and rules as nft 1.0.6 sends them', () => {
  it('encodes a table without comment and a nat base chain (hook postrouting, priority srcnat)', () => {
    expect(wire([newTable(MASQUERADE_CHAIN), newChain(MASQUERADE_CHAIN, 'masq_checks', { type: 'nat', hook: 'postrouting', priority: 100 })])).toEqual([NFT_1_0_6.newTable, NFT_1_0_6.newChain]);
  });

  it('encodes masquerade rules: meta nfproto, saddr, daddr != a byte-aligned prefix (short load) or not (mask), the comment', () => {
    expect(wire(masqueradeRules(COMMENT, ['10.1.1.2/24']))).toEqual([NFT_1_0_6.rule4]);
    expect(wire(masqueradeRules('c6', ['fd00::2/64']))).toEqual([NFT_1_0_6.rule6]);
    expect(wire(masqueradeRules(undefined, ['10.1.2.2/17']))).toEqual([NFT_1_0_6.rule17]);
  });

  it('makes no rule for a /0 subnet (nothing is outside it) and refuses an address without a length', () => {
    expect(masqueradeRules('x', ['10.1.1.2/0'])).toEqual([]);
    expect(() => masqueradeRules('x', ['10.1.1.2'])).toThrow(expect.objectContaining({ code: 'ERR_NETNS_NETLINK_INVALID' }));
  });

  it('encodes delete rule by handle', () => {
    expect(wire([deleteRule(MASQUERADE_CHAIN, 2n)])).toEqual([NFT_1_0_6.deleteRule]);
  });
});

describe("the official plugins' masquerade layout as their knftables transaction sends it (nft 1.0.6)", () => {
  const upstream = () => [NFT_1_0_6.upstreamTable, NFT_1_0_6.upstreamMasqChecks, NFT_1_0_6.upstreamPostrouting, NFT_1_0_6.flushPostrouting, NFT_1_0_6.returnMulticast4, NFT_1_0_6.returnMulticast6, NFT_1_0_6.gotoMasqChecks];

  it('encodes a table and a regular chain with comments (userdata), and flush chain', () => {
    expect(wire([newTable(MASQUERADE_CHAIN, 'Masquerading for plugins from github.com/containernetworking/plugins')])).toEqual([NFT_1_0_6.upstreamTable]);
    expect(wire([newChain(MASQUERADE_CHAIN, 'masq_checks', undefined, 'Masquerade traffic from certain IPs to any (non-multicast) IP outside their subnet')])).toEqual([NFT_1_0_6.upstreamMasqChecks]);
    expect(wire([flushChain(POSTROUTING_CHAIN)])).toEqual([NFT_1_0_6.flushPostrouting]);
  });

  it('encodes the verdicts: `goto masq_checks` alone, `return` after a multicast match (224.0.0.0/4 masked, ff00::/8 one byte)', () => {
    expect(wire([newRule(POSTROUTING_CHAIN, [gotoChain('masq_checks')])])).toEqual([NFT_1_0_6.gotoMasqChecks]);
    const multicastReturn = (family: 4 | 6, prefix: string) => newRule(POSTROUTING_CHAIN, [...matchFamily(family), ...matchAddress(family, 'daddr', 'eq', parsePrefix(prefix)), returnVerdict()]);
    expect(wire([multicastReturn(4, '224.0.0.0/4'), multicastReturn(6, 'ff00::/8')])).toEqual([NFT_1_0_6.returnMulticast4, NFT_1_0_6.returnMulticast6]);
  });

  it('sends the whole transaction upstream sends: table, both chains, postrouting flushed and rewritten, the rule with its comment', () => {
    expect(wire(masqueradeLayout())).toEqual(upstream());
    const comment = masqueradeComment('unit-test', { containerID: 'one', ifname: 'eth0' });
    expect(wire(masqueradeRules(comment, ['192.168.1.1/24']))).toEqual([NFT_1_0_6.upstreamRule]);
  });
});

describe('masquerade comments', () => {
  it("are upstream's, byte for byte (its own unit test's values)", () => {
    const comment = (network: string, ifname: string, containerID: string) => masqueradeComment(network, { containerID, ifname });
    expect(comment('unit-test', 'eth0', 'one')).toBe('6fd94d501e58f0aa-287fc69eff0574a2, net: unit-test, if: eth0, id: one');
    expect(comment('unit-test', 'eth0', 'two')).toBe('6fd94d501e58f0aa-d750b2c8f0f25d5f, net: unit-test, if: eth0, id: two');
    expect(comment('unit-test', 'eth0', 'four')).toBe('6fd94d501e58f0aa-e766de567ef6c543, net: unit-test, if: eth0, id: four');
    expect(comment('alternate', 'net1', 'three')).toBe('82783ef24bdc7036-acb19d111858e348, net: alternate, if: net1, id: three');
  });

  it('drop `"` from names as upstream does, cut at 128 bytes, write bytes outside printable ASCII %XX, and lead with the attachment key', () => {
    const attachment = { containerID: 'c"1 x', ifname: 'eth0' };
    expect(masqueradeComment('net"1', attachment)).toBe(`${attachmentKey('net"1', attachment)}, net: net1, if: eth0, id: c1 x`);
    expect(masqueradeComment('n', { containerID: 'é\n', ifname: 'eth0' })).toMatch(/, id: %c3%a9%0a$/);
    const longer = { containerID: 'f'.repeat(300), ifname: 'eth0' };
    const long = masqueradeComment('n', longer);
    expect(long).toHaveLength(128);
    expect(keyOfTag('n', long)).toBe(attachmentKey('n', longer));
  });
});

describe('attachment tags', () => {
  it('are read back only for their own network', () => {
    const tag = hostAlias('a', { containerID: 'c1', ifname: 'eth0' });
    expect(keyOfTag('a', tag)).toBe(tag.slice(0, 33));
    expect(keyOfTag('b', tag)).toBeUndefined();
    expect(keyOfTag('a', undefined)).toBeUndefined();
    expect(keyOfTag('a', `${tag.slice(0, 33)}zz`)).toBeUndefined();
  });
});
