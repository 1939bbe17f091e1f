// Neighbours without a kernel: requests byte for byte against what `ip neigh`
// (iproute2 6.1) sends, captured with
//   strace -f -e trace=sendmsg,sendto -s 4096 -xx ip -n NS neigh ...
// in a throwaway namespace (v0 = index 3); replies decoded; bad input refused
// before anything is sent.
import { describe, expect, it } from 'vitest';
import { attr, openNetlink } from '../../dist/netlink/index.js';
import { encodeAttributes } from '../../dist/netlink/attributes.js';
import { hex, nlmsg, errorReply, done, ack, fake, type Sent , expectRefusedUnsent } from '../helpers/netlink-wire.js';

/**
 * The whole message as ip sent it, with our seq spliced in (ip's pid field is
 * 0 as ours) and without NLM_F_ACK: ip asks for an ACK, this layer does not
 * (the kernel answers only a failure then; docs/netlink.md).
 */
function wire(m: Sent, text: string): Buffer {
  const bytes = hex(text);
  m.bytes.copy(bytes, 8, 8, 12);
  bytes[6]! &= ~0x04;
  return bytes;
}

/** RTM_NEWLINK for index `index`, named `name`, with a 6-byte address: the answer to a GETLINK. */
function ethernetLink(seq: number, index = 3, name = 'v0'): Buffer {
  const head = Buffer.alloc(16);
  head.writeInt32LE(index, 4);
  return nlmsg(16, 0, seq, Buffer.concat([head, encodeAttributes([attr.string(3, name), attr.bytes(1, hex('020000000001'))])]));
}

/** Answers a GETLINK with an Ethernet link (an lladdr is checked against it) and anything else with `other`. */
const linkThen = (other: (m: Sent) => Buffer[]) => (m: Sent) => (m.type === 18 ? [ethernetLink(m.seq), ...ack(m)] : other(m));

describe('neighbour requests as ip neigh sends them', () => {
  const captures: [string, Parameters<Awaited<ReturnType<typeof openNetlink>>['neighbours']['add']>[0], string][] = [
    [
      'add 10.1.0.5 lladdr 02:00:00:00:00:05 dev v0 (nud permanent by default)',
      { link: 3, address: '10.1.0.5', lladdr: '02:00:00:00:00:05' },
      '30000000 1c00 0506 00000000 00000000  02000000 03000000 8000 00 00  0800 0100 0a010005  0a00 0200 020000000005 0000',
    ],
    [
      'add 10.1.0.6 lladdr 02:00:00:00:00:06 dev v0 nud reachable',
      { link: 3, address: '10.1.0.6', lladdr: '02:00:00:00:00:06', state: 'reachable' },
      '30000000 1c00 0506 00000000 00000000  02000000 03000000 0200 00 00  0800 0100 0a010006  0a00 0200 020000000006 0000',
    ],
    [
      'add fd00::7 lladdr 02:00:00:00:00:07 dev v0 router nud stale',
      { link: 3, address: 'fd00::7', lladdr: '02:00:00:00:00:07', state: 'stale', flags: ['router'] },
      `3c000000 1c00 0506 00000000 00000000  0a000000 03000000 0400 80 00
       1400 0100 fd000000000000000000000000000007  0a00 0200 020000000007 0000`,
    ],
    [
      'add 10.1.0.9 lladdr 02:00:00:00:00:09 dev v0 nud noarp',
      { link: 3, address: '10.1.0.9', lladdr: '02:00:00:00:00:09', state: 'noarp' },
      '30000000 1c00 0506 00000000 00000000  02000000 03000000 4000 00 00  0800 0100 0a010009  0a00 0200 020000000009 0000',
    ],
    [
      'add 10.1.0.30 lladdr 02:00:00:00:00:1e dev v0 nud noarp router',
      { link: 3, address: '10.1.0.30', lladdr: '02:00:00:00:00:1e', state: 'noarp', flags: ['router'] },
      '30000000 1c00 0506 00000000 00000000  02000000 03000000 4000 80 00  0800 0100 0a01001e  0a00 0200 02000000001e 0000',
    ],
    [
      'add 10.1.0.20 lladdr 02:00:00:00:00:14 dev v0 nud permanent extern_learn',
      { link: 3, address: '10.1.0.20', lladdr: '02:00:00:00:00:14', state: 'permanent', flags: ['extern_learn'] },
      '30000000 1c00 0506 00000000 00000000  02000000 03000000 8000 10 00  0800 0100 0a010014  0a00 0200 020000000014 0000',
    ],
    [
      'add 10.1.0.10 dev v0 nud failed (no lladdr)',
      { link: 3, address: '10.1.0.10', state: 'failed' },
      '24000000 1c00 0506 00000000 00000000  02000000 03000000 2000 00 00  0800 0100 0a01000a',
    ],
    [
      'add 10.1.0.14 dev v0 nud none',
      { link: 3, address: '10.1.0.14', state: 'none' },
      '24000000 1c00 0506 00000000 00000000  02000000 03000000 0000 00 00  0800 0100 0a01000e',
    ],
    [
      'add proxy 10.1.0.8 dev v0',
      { link: 3, address: '10.1.0.8', proxy: true },
      '24000000 1c00 0506 00000000 00000000  02000000 03000000 8000 08 00  0800 0100 0a010008',
    ],
  ];
  for (const [what, spec, bytes] of captures) {
    it(what, async () => {
      const { sent, transport } = fake(linkThen(ack));
      const nl = await openNetlink(undefined, { transport });
      await nl.neighbours.add(spec);
      // an lladdr is checked against the link's own address length first (a GETLINK)
      expect(sent.map((batch) => batch.map((m) => m.type))).toEqual(spec.lladdr === undefined ? [[28]] : [[18], [28]]);
      const [m] = sent.at(-1)!;
      expect(m!.bytes).toEqual(wire(m!, bytes));
      nl.close();
    });
  }

  it('replace 10.1.0.5 lladdr 02:00:00:00:00:15 dev v0 nud permanent (CREATE|REPLACE)', async () => {
    const { sent, transport } = fake(linkThen(ack));
    const nl = await openNetlink(undefined, { transport });
    await nl.neighbours.replace({ link: 3, address: '10.1.0.5', lladdr: '02:00:00:00:00:15', state: 'permanent' });
    const [m] = sent.at(-1)!;
    expect(m!.bytes).toEqual(wire(m!, '30000000 1c00 0505 00000000 00000000  02000000 03000000 8000 00 00  0800 0100 0a010005  0a00 0200 020000000015 0000'));
    nl.close();
  });

  it('del 10.1.0.6 dev v0 (state PERMANENT as ip sends it), del proxy 10.1.0.8 dev v0', async () => {
    const { sent, transport } = fake(ack);
    const nl = await openNetlink(undefined, { transport });
    await nl.neighbours.delete({ link: 3, address: '10.1.0.6' });
    await nl.neighbours.delete({ link: 3, address: '10.1.0.8', proxy: true });
    expect(sent[0]![0]!.bytes).toEqual(wire(sent[0]![0]!, '24000000 1d00 0500 00000000 00000000  02000000 03000000 8000 00 00  0800 0100 0a010006'));
    expect(sent[1]![0]!.bytes).toEqual(wire(sent[1]![0]!, '24000000 1d00 0500 00000000 00000000  02000000 03000000 8000 08 00  0800 0100 0a010008'));
    nl.close();
  });

  it('dumps: neigh show, -4, -6 dev v0 (NDA_IFINDEX), show proxy (NTF_PROXY)', async () => {
    const { sent, transport } = fake((m) => [done(m.seq)]);
    const nl = await openNetlink(undefined, { transport });
    await nl.neighbours.list();
    await nl.neighbours.list({ family: 4 });
    await nl.neighbours.list({ family: 6, link: 3 });
    await nl.neighbours.list({ proxy: true });
    const bytes = sent.map((s) => s[0]!);
    expect(bytes[0]!.bytes).toEqual(wire(bytes[0]!, '1c000000 1e00 0103 00000000 00000000  000000000000000000000000'));
    expect(bytes[1]!.bytes).toEqual(wire(bytes[1]!, '1c000000 1e00 0103 00000000 00000000  020000000000000000000000'));
    expect(bytes[2]!.bytes).toEqual(wire(bytes[2]!, '24000000 1e00 0103 00000000 00000000  0a0000000000000000000000 0800 0800 03000000'));
    expect(bytes[3]!.bytes).toEqual(wire(bytes[3]!, '1c000000 1e00 0103 00000000 00000000  000000000000000000000800'));
    nl.close();
  });

  it('a link by name is looked up first (GETLINK), then its index goes in the ndmsg', async () => {
    const { sent, transport } = fake((m) => (m.type === 18 ? [ethernetLink(m.seq, 9, 'eth0'), ...ack(m)] : ack(m)));
    const nl = await openNetlink(undefined, { transport });
    await nl.neighbours.add({ link: 'eth0', address: '10.0.0.2', lladdr: '02:00:00:00:00:02' });
    expect(sent.map((s) => s[0]!.type)).toEqual([18, 28]);
    expect(sent[1]![0]!.payload.readInt32LE(4)).toBe(9);
    nl.close();
  });
});

describe('neighbours read', () => {
  it('decodes the kernel’s entries: state, flags, lladdr; filters to the link and family asked for', async () => {
    const entry = (family: number, index: number, state: number, flags: number, dst: Buffer, lladdr?: Buffer): Buffer => {
      const head = Buffer.alloc(12);
      head.writeUInt8(family, 0);
      head.writeInt32LE(index, 4);
      head.writeUInt16LE(state, 8);
      head.writeUInt8(flags, 10);
      head.writeUInt8(1, 11); // RTN_UNICAST, as the kernel fills it
      const attrs = [attr.bytes(1, dst), ...(lladdr ? [attr.bytes(2, lladdr)] : []), attr.u32(4, 0)];
      return Buffer.concat([head, encodeAttributes(attrs)]);
    };
    const { transport } = fake((m) => [
      nlmsg(28, 2, m.seq, entry(2, 3, 0x80, 0, hex('0a010005'), hex('020000000015'))),
      nlmsg(28, 2, m.seq, entry(10, 3, 0x04, 0x80, hex('fd000000000000000000000000000007'), hex('020000000007'))),
      nlmsg(28, 2, m.seq, entry(2, 4, 0x01, 0, hex('0a01000d'))),
      done(m.seq),
    ]);
    const nl = await openNetlink(undefined, { transport });
    const all = await nl.neighbours.list();
    expect(all).toEqual([
      { family: 4, index: 3, address: '10.1.0.5', lladdr: '02:00:00:00:00:15', state: 'permanent', flags: [], proxy: false },
      { family: 6, index: 3, address: 'fd00::7', lladdr: '02:00:00:00:00:07', state: 'stale', flags: ['router'], proxy: false },
      { family: 4, index: 4, address: '10.1.0.13', state: 'incomplete', flags: [], proxy: false },
    ]);
    expect((await nl.neighbours.list({ link: 3, family: 6 })).map((n) => n.address)).toEqual(['fd00::7']);
    nl.close();
  });

  it('kernel errors are coded and name the neighbour', async () => {
    const { transport } = fake(linkThen((m) => [errorReply(m, 17)]));
    const nl = await openNetlink(undefined, { transport });
    await expect(nl.neighbours.add({ link: 3, address: '10.1.0.5', lladdr: '02:00:00:00:00:05' })).rejects.toMatchObject({
      code: 'EEXIST',
      syscall: 'netlink',
      message: 'netlink: add neighbour 10.1.0.5 on #3: EEXIST: file already exists',
    });
    nl.close();
  });
});

describe('bad neighbour input is refused before anything is sent', () => {
  type Nl = Awaited<ReturnType<typeof openNetlink>>;
  const cases: [string, (nl: Nl) => Promise<unknown>][] = [
    ['a bad lladdr (a lone hex digit)', (nl) => nl.neighbours.add({ link: 'eth0', address: '10.0.0.2', lladdr: '02:00:0' })],
    ['a bad lladdr (not hex)', (nl) => nl.neighbours.add({ link: 'eth0', address: '10.0.0.2', lladdr: '02:00:00:00:00:zz' })],
    ['an lladdr over 32 bytes', (nl) => nl.neighbours.add({ link: 'eth0', address: '10.0.0.2', lladdr: Array(33).fill('02').join(':') })],
    ['a bad address', (nl) => nl.neighbours.add({ link: 'eth0', address: '10.0.0' })],
    ['an address with a prefix length', (nl) => nl.neighbours.add({ link: 'eth0', address: '10.0.0.2/24' })],
    ['an IPv6 zone', (nl) => nl.neighbours.add({ link: 'eth0', address: 'fe80::1%eth0' })],
    ['an address of the other family', (nl) => nl.neighbours.add({ link: 'eth0', address: 'fd00::2', family: 4 })],
    ['a bad family', (nl) => nl.neighbours.list({ family: 5 as 4 })],
    ['an unknown state', (nl) => nl.neighbours.add({ link: 'eth0', address: '10.0.0.2', state: 'bogus' as 'stale' })],
    ['an unknown flag', (nl) => nl.neighbours.add({ link: 'eth0', address: '10.0.0.2', flags: ['proxy' as 'router'] })],
    ['a proxy entry with an lladdr', (nl) => nl.neighbours.add({ link: 'eth0', address: '10.0.0.2', proxy: true, lladdr: '02:00:00:00:00:01' })],
    ['a link name over 15 bytes', (nl) => nl.neighbours.add({ link: 'x'.repeat(16), address: '10.0.0.2' })],
    ['a bad link index', (nl) => nl.neighbours.delete({ link: 0, address: '10.0.0.2' })],
    ['a delete of a bad address', (nl) => nl.neighbours.delete({ link: 'eth0', address: '10.0.0.256' })],
    ['a list of a bad link', (nl) => nl.neighbours.list({ link: 'a b' })],
  ];
  for (const [what, call] of cases) {
    it(what, () => expectRefusedUnsent(call));
  }

  // The kernel cuts an lladdr longer than the link's addresses short without a word.
  it('an lladdr is checked against the link first: refused when it does not fit (20 bytes on Ethernet, a MAC on a link with none), sent when it does', async () => {
    const ib = Array.from({ length: 20 }, (_, i) => (i + 1).toString(16).padStart(2, '0')).join(':');
    const linkWithAddress = (bytes: number) =>
      fake((m) => {
        if (m.type !== 18) return ack(m);
        const head = Buffer.alloc(16);
        head.writeInt32LE(3, 4);
        const address = bytes === 0 ? [] : [attr.bytes(1, Buffer.alloc(bytes, 1))]; // a tun link has none
        return [nlmsg(16, 0, m.seq, Buffer.concat([head, encodeAttributes([attr.string(3, 'ib0'), ...address])])), ...ack(m)];
      });
    const ethernet = linkWithAddress(6);
    const nl = await openNetlink(undefined, { transport: ethernet.transport });
    await expect(nl.neighbours.add({ link: 3, address: '10.0.0.2', lladdr: ib })).rejects.toMatchObject({
      code: 'ERR_NETNS_NETLINK_INVALID',
      message: expect.stringContaining('is 20 bytes but #3'),
    });
    expect(ethernet.sent.flat().map((m) => m.type)).toEqual([18]);
    nl.close();
    const tun = linkWithAddress(0);
    const nlTun = await openNetlink(undefined, { transport: tun.transport });
    await expect(nlTun.neighbours.add({ link: 3, address: '10.0.0.2', lladdr: '02:00:00:00:00:09' })).rejects.toMatchObject({
      code: 'ERR_NETNS_NETLINK_INVALID',
      message: expect.stringContaining('is 6 bytes but #3'),
    });
    expect(tun.sent.flat().map((m) => m.type)).toEqual([18]);
    nlTun.close();
    const infiniband = linkWithAddress(20);
    const nl20 = await openNetlink(undefined, { transport: infiniband.transport });
    await nl20.neighbours.replace({ link: 3, address: '10.0.0.2', lladdr: ib });
    const neigh = infiniband.sent[1]![0];
    expect(neigh!.type).toBe(28);
    expect(neigh!.payload.subarray(12 + 8 + 4, 12 + 8 + 4 + 20)).toEqual(Buffer.from(ib.replaceAll(':', ''), 'hex'));
    nl20.close();
  });

  it('an unknown link is ENODEV from the lookup; no NEWNEIGH is sent', async () => {
    const { sent, transport } = fake((m) => [errorReply(m, 19)]);
    const nl = await openNetlink(undefined, { transport });
    await expect(nl.neighbours.add({ link: 'nosuch0', address: '10.0.0.2', lladdr: '02:00:00:00:00:02' })).rejects.toMatchObject({ code: 'ENODEV' });
    expect(sent.flat().map((m) => m.type)).toEqual([18]);
    nl.close();
  });
});
