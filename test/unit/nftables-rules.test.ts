// nf_tables chain and rule messages compared byte for byte with nft 1.0.6's
// own, captured on this kernel in a scratch namespace with
// `strace -f -e trace=sendmsg -e write=3 nft -f FILE` (seqs zeroed), FILE:
//   add table inet cni_plugins_masquerade
//   add chain inet cni_plugins_masquerade masq_checks { type nat hook postrouting priority srcnat; }
//   add rule inet cni_plugins_masquerade masq_checks ip saddr 10.1.1.2 ip daddr != 10.1.1.0/24 masquerade comment "<COMMENT>"
//   add rule inet cni_plugins_masquerade masq_checks ip6 saddr fd00::2 ip6 daddr != fd00::/64 masquerade comment "c6"
//   add rule inet cni_plugins_masquerade masq_checks ip saddr 10.1.2.2 ip daddr != 10.1.0.0/17 masquerade
// then `delete rule inet cni_plugins_masquerade masq_checks handle 2`.
import { describe, expect, it } from 'vitest';
import { encodeMessages } from '../../dist/netlink/message.js';
import { newChain } from '../../dist/nftables/chains.js';
import { newTable } from '../../dist/nftables/messages.js';
import { deleteRule } from '../../dist/nftables/rules.js';
import { MASQUERADE_CHAIN, masqueradeRules } from '../../dist/cni/masquerade.js';
import { attachmentTag, keyOfTag, networkTagPrefix } from '../../dist/cni/identity.js';

const NFT_1_0_6 = {
  newTable: '38000000000a01000000000000000000010000001b000100636e695f706c7567696e735f6d61737175657261646500000800020000000000',
  newChain: '5c000000030a01040000000000000000010000001b000100636e695f706c7567696e735f6d6173717565726164650000100003006d6173715f636865636b7300080007006e6174001400048008000100000000040800020000000064',
  rule4: 'a8010000060a010c0000000000000000010000001b000100636e695f706c7567696e735f6d6173717565726164650000100002006d6173715f636865636b73002801048024000180090001006d6574610000000014000280080002000000000f08000100000000012c00018008000100636d700020000280080001000000000108000200000000000c0003800500010002000000340001800c0001007061796c6f6164002400028008000100000000010800020000000001080003000000000c08000400000000042c00018008000100636d700020000280080001000000000108000200000000000c000380080001000a010102340001800c0001007061796c6f6164002400028008000100000000010800020000000001080003000000001008000400000000032c00018008000100636d700020000280080001000000000108000200000000010c000380070001000a01010014000180090001006d617371000000000400028040000700003a303132333435363738396162636465662d666564636261393837363534333231302c206e65743a6e312c2069663a657468302c2069643a633100',
  rule6: '84010000060a010c0000000000000000010000001b000100636e695f706c7567696e735f6d6173717565726164650000100002006d6173715f636865636b73003801048024000180090001006d6574610000000014000280080002000000000f08000100000000012c00018008000100636d700020000280080001000000000108000200000000000c000380050001000a000000340001800c0001007061796c6f6164002400028008000100000000010800020000000001080003000000000808000400000000103800018008000100636d70002c000280080001000000000108000200000000001800038014000100fd000000000000000000000000000002340001800c0001007061796c6f6164002400028008000100000000010800020000000001080003000000001808000400000000083000018008000100636d70002400028008000100000000010800020000000001100003800c000100fd0000000000000014000180090001006d6173710000000004000280090007000003633600000000',
  rule17: 'ac010000060a010c0000000000000000010000001b000100636e695f706c7567696e735f6d6173717565726164650000100002006d6173715f636865636b73006c01048024000180090001006d6574610000000014000280080002000000000f08000100000000012c00018008000100636d700020000280080001000000000108000200000000000c0003800500010002000000340001800c0001007061796c6f6164002400028008000100000000010800020000000001080003000000000c08000400000000042c00018008000100636d700020000280080001000000000108000200000000000c000380080001000a010202340001800c0001007061796c6f616400240002800800010000000001080002000000000108000300000000100800040000000004440001800c0001006269747769736500340002800800010000000001080002000000000108000300000000040c00048008000100ffff80000c00058008000100000000002c00018008000100636d700020000280080001000000000108000200000000010c000380080001000a01000014000180090001006d6173710000000004000280',
  deleteRule: '4c000000080a01000000000000000000010000001b000100636e695f706c7567696e735f6d6173717565726164650000100002006d6173715f636865636b73000c0003000000000000000002',
};
const COMMENT = '0123456789abcdef-fedcba9876543210, net:n1, if:eth0, id:c1';

/** Each message's bytes with its seq zeroed. */
function wire(requests: Parameters<typeof encodeMessages>[0]): string[] {
  const out: string[] = [];
  const buffer = encodeMessages(requests, 0, 1);
  for (let o = 0; o < buffer.length; ) {
    const length = buffer.readUInt32LE(o);
    const message = Buffer.from(buffer.subarray(o, o + length));
    message.fill(0, 8, 12);
    out.push(message.toString('hex'));
    o += (length + 3) & ~3;
  }
  return out;
}

describe('nf_tables chains and rules as nft 1.0.6 sends them', () => {
  it('encodes the masquerade table and its nat base chain (hook postrouting, priority srcnat)', () => {
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

describe('attachment tags', () => {
  it('lead with the network hash then the attachment hash, escape names, stay within 128 bytes', () => {
    const tag = attachmentTag('net"1', { containerID: 'c 1;rm', ifname: 'eth0' });
    expect(tag).toMatch(/^[0-9a-f]{16}-[0-9a-f]{16}, net:net%221, if:eth0, id:c%201%3brm$/);
    expect(tag.startsWith(networkTagPrefix('net"1'))).toBe(true);
    expect(attachmentTag('n', { containerID: 'x'.repeat(300), ifname: 'eth0' })).toHaveLength(128);
  });

  it('are read back only for their own network', () => {
    const tag = attachmentTag('a', { containerID: 'c1', ifname: 'eth0' });
    expect(keyOfTag('a', tag)).toBe(tag.slice(0, 33));
    expect(keyOfTag('b', tag)).toBeUndefined();
    expect(keyOfTag('a', undefined)).toBeUndefined();
    expect(keyOfTag('a', `${tag.slice(0, 33)}zz`)).toBeUndefined();
  });
});
