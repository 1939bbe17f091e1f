// nf_tables messages compared byte for byte with nft 1.0.6's own, captured on
// this kernel with `strace -f -e trace=sendmsg -e write=3 nft -f FILE` in a
// scratch namespace (seqs zeroed: nft numbers from 0, a handle from its own
// start, and nft gives the parts of one split command one seq).
import { describe, expect, it } from 'vitest';
import { framed, commit } from '../../dist/nftables/batch.js';
import { deleteSet, newSet, newTable } from '../../dist/nftables/messages.js';
import { ElementList, elementMessages, flushSet, intervalElements, parseElements, rangesOf, stringKey, type Range, type WireElement } from '../../dist/nftables/elements.js';
import { openNftables } from '../../dist/nftables/socket.js';
import { parseKernelText } from '../../dist/addrset/addresses.js';
import { createHash } from 'node:crypto';
import { errorReply, fake, nlmsg, wire, type Sent } from '../helpers/netlink-wire.js';
import { NetlinkBackend } from '../../dist/addrset/netlink-backend.js';
import { NetNS } from '../../dist/index.js';

export const NFT_1_0_6 = {
  begin: '140000001000010000000000000000000000000a',
  newTable: '24000000000a010001000000000000000100000007000100743100000800020000000000',
  newSetReg: '50000000090a01040200000000000000010000000700010074310000080002007265670008000300000000000800040000000029080005000000001008000a00000000010a000d000004010000000000',
  newSetS4: '50000000090a01040300000000000000010000000700010074310000070002007334000008000300000000040800040000000007080005000000000408000a00000000020a000d000004020000000000',
  flushS4: '240000000e0a010005000000000000000100000007000200733400000700010074310000',
  addS4: 'c40000000c0a010406000000000000000100000007000100743100000700020073340000080004000000000298000380100001800c000180080001000a0100001800028008000300000000010c000180080001000a020000100003800c000180080001000a0200011800048008000300000000010c000180080001000a02000a100005800c00018008000100c0a801011800068008000300000000010c00018008000100c0a801021c0007800c00018008000100ffffff000a0006000104010000000000',
  newSetS6: '50000000090a01040700000000000000010000000700010074310000070002007336000008000300000000040800040000000008080005000000001008000a00000000030a000d000004020000000000',
  addS6: 'b00000000c0a01040a0000000000000001000000070001007431000007000200733600000800040000000003840003801c0001801800018014000100fd0000000000000000000000000000012400028008000300000000011800018014000100fd0000000000000000000000000000021c0003801800018014000100fd0000010000000000000000000000002400048008000300000000011800018014000100fd000001000000010000000000000000',
  recordAdd: '4c0000000c0a01040b0000000000000001000000070001007431000008000200726567000800040000000001200003801c000180180001801400010073340000000000000000000000000000',
  recordDelete: '440000000e0a01000c000000000000000100000007000100743100000800020072656700200003801c000180180001801400010073340000000000000000000000000000',
  recordAddComment: '580000000c0a01040d00000000000000010000000700010074310000080002007265670008000400000000012c000380280001801800018014000100733400000000000000000000000000000c00060000066f3d78207900',
  end: '14000000110001000e000000000000000000000a',
  addEmptyE4: '700000000c0a0104010000000000000001000000070001007431000007000200653400000800040000000004440003801800018008000300000000010c0001800800010000000000100002800c000180080001000a0900011800038008000300000000010c000180080001000a090002',
  addS4Comment: '8c0000000c0a010402000000000000000100000007000100743100000700020073340000080004000000000260000380100001800c000180080001000a0300001800028008000300000000010c000180080001000a0301001c0003800c000180080001000a0400010900060000036531000000001800048008000300000000010c000180080001000a040002',
  deleteS4: '780000000e0a01000300000000000000010000000700010074310000070002007334000054000380100001800c000180080001000a0200011800028008000300000000010c000180080001000a02000a100003800c00018008000100c0a801011800048008000300000000010c00018008000100c0a80102',
  flushS6: '240000000e0a010004000000000000000100000007000200733600000700010074310000',
  deleteSetS6: '240000000b0a010005000000000000000100000007000100743100000700020073360000',
  newSetComment: '54000000090a01040100000000000000010000000700010074310000070002006334000008000300000000040800040000000007080005000000000408000a00000000010f000d00000402000000070363340000',
  addOpenComment: '680000000c0a01040100000000000000010000000700010074310000070002007334000008000400000000023c0003801800018008000300000000010c0001800800010000000000200002800c000180080001000ac80000100006000004746f7000010401000000',
};

const t1 = { family: 1, table: 't1' } as const;

const zeroSeq = (h: string): string => `${h.slice(0, 16)}00000000${h.slice(24)}`;
const ranges = (...texts: string[]) => texts.map((text) => parseKernelText(text)!);

describe("nf_tables messages as nft 1.0.6 sends them", () => {
  it('frames a batch: BEGIN (res_id NFNL_SUBSYS_NFTABLES), the messages, END', () => {
    const [begin, table, end] = wire(framed([newTable(t1)]));
    expect([begin, table, end]).toEqual([NFT_1_0_6.begin, NFT_1_0_6.newTable, NFT_1_0_6.end].map(zeroSeq));
  });

  it('encodes sets: ifname and address keys, the interval flag, set userdata (byte order, comment), SET_ID', () => {
    expect(wire([newSet(t1, { name: 'reg', keyType: 'ifname', interval: false, id: 1 })])).toEqual([zeroSeq(NFT_1_0_6.newSetReg)]);
    expect(wire([newSet(t1, { name: 's4', keyType: 'ipv4_addr', interval: true, id: 2 })])).toEqual([zeroSeq(NFT_1_0_6.newSetS4)]);
    expect(wire([newSet(t1, { name: 's6', keyType: 'ipv6_addr', interval: true, id: 3 })])).toEqual([zeroSeq(NFT_1_0_6.newSetS6)]);
    expect(wire([newSet(t1, { name: 'c4', keyType: 'ipv4_addr', interval: true, id: 1, comment: 'c4' })])).toEqual([zeroSeq(NFT_1_0_6.newSetComment)]);
  });

  it('encodes flush set, delete set', () => {
    expect(wire([flushSet({ ...t1, set: 's4' })])).toEqual([zeroSeq(NFT_1_0_6.flushS4)]);
    expect(wire([flushSet({ ...t1, set: 's6' })])).toEqual([zeroSeq(NFT_1_0_6.flushS6)]);
    expect(wire([deleteSet(t1, 's6')])).toEqual([zeroSeq(NFT_1_0_6.deleteSetS6)]);
  });

  it('encodes interval elements: exclusive ENDs, a range to all-ones as INTERVAL_OPEN, comments', () => {
    const s4 = intervalElements(ranges('10.1.0.0/16', '10.2.0.1-10.2.0.9', '192.168.1.1', '255.255.255.0/24'), 4, false);
    expect(wire(elementMessages('add', { ...t1, set: 's4', setId: 2 }, s4, 'add'))).toEqual([zeroSeq(NFT_1_0_6.addS4)]);
    const s6 = intervalElements(ranges('fd00::1', 'fd00:1::/64'), 16, false);
    expect(wire(elementMessages('add', { ...t1, set: 's6', setId: 3 }, s6, 'add'))).toEqual([zeroSeq(NFT_1_0_6.addS6)]);
    const commented = intervalElements([...ranges('10.3.0.0/24'), { ...ranges('10.4.0.1')[0]!, comment: 'e1' }], 4, false);
    expect(wire(elementMessages('add', { ...t1, set: 's4', setId: 2 }, commented, 'add'))).toEqual([zeroSeq(NFT_1_0_6.addS4Comment)]);
    const open = intervalElements([{ ...ranges('10.200.0.0-255.255.255.255')[0]!, comment: 'top' }], 4, true);
    expect(wire(elementMessages('add', { ...t1, set: 's4', setId: 2 }, open, 'add'))).toEqual([zeroSeq(NFT_1_0_6.addOpenComment)]);
  });

  it('leads with END 0 into a set known empty, and deletes without SET_ID', () => {
    const e4 = intervalElements(ranges('10.9.0.1'), 4, true);
    expect(wire(elementMessages('add', { ...t1, set: 'e4', setId: 4 }, e4, 'add'))).toEqual([zeroSeq(NFT_1_0_6.addEmptyE4)]);
    const gone = intervalElements(ranges('10.2.0.1-10.2.0.9', '192.168.1.1'), 4, false);
    expect(wire(elementMessages('delete', { ...t1, set: 's4', setId: 2 }, gone, 'delete'))).toEqual([zeroSeq(NFT_1_0_6.deleteS4)]);
  });

  it('encodes registry records: ifname keys padded to 16 bytes, element comments', () => {
    const key = stringKey('s4', 16);
    const target = { ...t1, set: 'reg', setId: 1 };
    expect(wire([...elementMessages('add', target, [{ key }], 'r'), ...elementMessages('delete', target, [{ key }], 'r'), ...elementMessages('add', target, [{ key, comment: 'o=x y' }], 'r')])).toEqual(
      [NFT_1_0_6.recordAdd, NFT_1_0_6.recordDelete, NFT_1_0_6.recordAddComment].map(zeroSeq),
    );
    expect(() => stringKey('a'.repeat(16), 16)).toThrow(expect.objectContaining({ code: 'ERR_NETNS_INVALID_ARG' }));
  });

  it('splits 3,000 addresses into ELEMENTS nests under 65535 bytes where nft does, numbering as nft does', () => {
    // nft 1.0.6, `add set ... big; add element ... { 10.i/256.i%256.1 for i < 3000 }`: the second
    // command's two NEWSETELEM messages (lengths and SHA-256 with seq zeroed; 120 KB of hex otherwise).
    const texts = Array.from({ length: 3000 }, (_, i) => `10.${i >> 8}.${i & 255}.1`);
    const messages = wire(elementMessages('add', { ...t1, set: 'big', setId: 1 }, intervalElements(ranges(...texts), 4, false), 'add'));
    expect(messages.map((m) => [m.length / 2, createHash('sha256').update(Buffer.from(m, 'hex')).digest('hex')])).toEqual([
      [65568, 'df7b7cee6d969317f24296c8f80e1de2b75b5978aea5806fc52a3370b17cb38c'],
      [54528, '073aade848581d463a90ea7e57236c04796811db50ad33266ebbead43ce7eebb'],
    ]);
    // Into the new (empty) set, with END 0 first: nft's first command of that batch.
    const first = wire(elementMessages('add', { ...t1, set: 'big', setId: 1 }, intervalElements(ranges(...texts), 4, true), 'add'));
    expect(first.map((m) => [m.length / 2, createHash('sha256').update(Buffer.from(m, 'hex')).digest('hex')])).toEqual([
      [65568, '17bdd0161b99617939fb675f2ea397bbb048456385a285606de025a5d66d5b1d'],
      [54552, '1dd49027e5e6e48155a291476b59e4bfdaaaf82f52b52202e17dc35f3f230623'],
    ]);
  });

  it('numbers element nests past 65535 as nft does, wrapping the u16 type', () => {
    const texts = Array.from({ length: 40_000 }, (_, i) => `10.${i >> 8}.${i & 255}.1`);
    const messages = elementMessages('add', { ...t1, set: 'big' }, intervalElements(ranges(...texts), 4, false), 'add');
    const types = messages.flatMap((m) => {
      const elements = (m.attributes!.at(-1) as { value: Buffer }).value;
      const out: number[] = [];
      for (let o = 0; o < elements.length; o += (elements.readUInt16LE(o) + 3) & ~3) out.push(elements.readUInt16LE(o + 2));
      return out;
    });
    expect(types).toHaveLength(80_000);
    expect(Math.max(...types)).toBeLessThanOrEqual(0xffff);
    expect(types.at(-1)).toBe(0x8000 | ((80_000 + messages.length - 1) & 0xffff));
  });

  it('reads elements back as ranges (descending dump order, adjacent ranges, open ranges, comments)', () => {
    // Descending, as dumps come: 255.255.255.0 open ("c"), END 10.3.0.0, 10.2.0.0, END 10.2.0.0, 10.1.0.0, END 0.
    const key = (value: number) => Buffer.from(value.toString(16).padStart(8, '0'), 'hex');
    const sent: WireElement[] = [
      { key: key(0xffffff00), open: true, comment: 'c' },
      { key: key(0x0a030000), end: true },
      { key: key(0x0a020000) },
      { key: key(0x0a020000), end: true },
      { key: key(0x0a010000) },
      { key: key(0), end: true },
    ];
    const payload = Buffer.from(wire(elementMessages('add', { ...t1, set: 's4' }, sent, 'add'))[0]!, 'hex').subarray(16);
    // The kernel's dumps number every element nest 1 (NFTA_LIST_ELEM), without NLA_F_NESTED: make ours so.
    const elementsAt = 4 + 8 + 8 + 4; // nfgenmsg, TABLE "t1", SET "s4", the ELEMENTS header
    for (let o = elementsAt; o < payload.length; o += (payload.readUInt16LE(o) + 3) & ~3) payload.writeUInt16LE(1, o + 2);
    const dumped = new ElementList();
    parseElements(payload, 4, dumped);
    const back = rangesOf(dumped);
    expect(back).toEqual([
      // 4-byte keys come back as numbers
      { first: 0x0a010000, last: 0x0a01ffff },
      { first: 0x0a020000, last: 0x0a02ffff },
      { first: 0xffffff00, last: 0xffffffff, comment: 'c' },
    ]);
  });
});

describe('nf_tables elements: reading back in any order', () => {
  it('gives the ranges sent, whether the elements come ascending, descending or shuffled', () => {
    const sent: Range[] = [...ranges('10.1.0.0/16', '10.2.0.1-10.2.0.9', '192.168.1.1'), { ...ranges('255.255.255.0/24')[0]!, comment: 'top' }];
    const expected = sent.map(({ first, last, comment }) => ({ first, last, ...(comment === undefined ? {} : { comment }) }));
    const ascending = intervalElements(sent, 4, true);
    expect(rangesOf(ascending)).toEqual(expected);
    const wireOf = (order: number[]) =>
      order.map((i): WireElement => ({ key: Buffer.from(ascending.key(i)), ...(ascending.isEnd(i) ? { end: true } : {}), ...(ascending.isOpen(i) ? { open: true } : {}), ...(ascending.comment(i) === undefined ? {} : { comment: ascending.comment(i)! }) }));
    const indices = Array.from({ length: ascending.length }, (_, i) => i);
    expect(rangesOf(ElementList.of(wireOf([...indices].reverse())))).toEqual(expected);
    expect(rangesOf(ElementList.of(wireOf([3, 0, 7, 1, 6, 2, 5, 4])))).toEqual(expected);
    expect(ascending.length).toBe(8);
  });
});

describe('nf_tables batches: errors mapped to their message', () => {
  const seqOf = (bytes: Buffer) => bytes.readUInt32LE(8);

  it('sends one sendmsg without NLM_F_ACK and names the message that failed', async () => {
    const { sent, transport } = fake((m) => (m.type === 0x0a0b ? [errorReply(m, 16)] : []));
    const handle = await openNftables('/proc/self/ns/net', { transport });
    const requests = [newTable(t1), deleteSet(t1, 'busy'), newTable(t1)];
    expect(() => commit(handle, requests)).toThrow(expect.objectContaining({ code: 'EBUSY', requestIndex: 1, message: expect.stringContaining('delete set inet t1 busy') }));
    expect(sent).toHaveLength(1);
    expect(sent[0]!.map((m) => [m.type, m.flags & 4])).toEqual([[0x10, 0], [0x0a00, 0], [0x0a0b, 0], [0x0a00, 0], [0x11, 0]]);
    expect(seqOf(sent[0]![1]!.bytes)).toBe(seqOf(sent[0]![0]!.bytes) + 1);
    handle.close();
  });

  it("reports a commit failure that comes on BEGIN's seq", async () => {
    const { transport } = fake((m) => (m.type === 0x10 ? [errorReply(m, 12)] : []));
    const handle = await openNftables('/proc/self/ns/net', { transport });
    let caught: { code?: string; requestIndex?: number } = {};
    try {
      commit(handle, [newTable(t1)]);
    } catch (error) {
      caught = error as typeof caught;
    }
    expect(caught.code).toBe('ENOMEM');
    expect(caught.requestIndex).toBeUndefined();
    handle.close();
  });

  it('sends a batch of more than 128 messages in one sendmsg', async () => {
    const { sent, transport } = fake(() => []);
    const handle = await openNftables('/proc/self/ns/net', { transport });
    commit(handle, Array.from({ length: 300 }, () => newTable(t1)));
    expect(sent.map((batch) => batch.length)).toEqual([302]);
    handle.close();
  });
});

describe('nf_tables reads under a polluted Object.prototype', () => {
  // A namespace whose generation changes between any two questions (another writer committing in a loop),
  // and where our table does not exist: a reader gives up after its attempts; only a sole writer takes the read.
  function churning() {
    let generation = 1;
    return fake((m: Sent) => {
      if (m.type === 0x0a10) {
        const id = Buffer.alloc(8);
        id.writeUInt16LE(8, 0);
        id.writeUInt16LE(1, 2); // NFTA_GEN_ID
        id.writeUInt32BE(generation++, 4);
        return [nlmsg(0x0a0f, 0, m.seq, Buffer.concat([Buffer.alloc(4), id]))];
      }
      return [errorReply(m, 2)]; // GETTABLE: ENOENT
    }).transport;
  }

  it('an inherited soleWriter does not make a reader take a read the generation check refused', async () => {
    (Object.prototype as Record<string, unknown>).soleWriter = true;
    try {
      const backend = await NetlinkBackend.create(NetNS.current(), { family: 'inet', table: 't' }, { transport: churning() });
      await expect(backend.read({ elements: true, registry: 'r' })).rejects.toMatchObject({ code: 'ERR_NETNS_NETLINK_DUMP_INTERRUPTED' });
      expect(await backend.read({ elements: true, registry: 'r', soleWriter: true })).toMatchObject({ tableExists: false });
      backend.close();
    } finally {
      delete (Object.prototype as Record<string, unknown>).soleWriter;
    }
  });
});

