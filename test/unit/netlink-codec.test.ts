// The netlink layer without a kernel: encodings byte for byte against what
// `ip` sends (reference/netlink-craft.md captures), attribute alignment, the
// kernel's answers decoded (ACK, error with extended ACK, interrupted dumps)
// through a fake transport, and bad input refused before anything is sent.
import { describe, expect, it } from 'vitest';
import { attr, AttributeMap, ErrorCodes, openNetlink } from '../../dist/netlink/index.js';
import { encodeAttributes } from '../../dist/netlink/attributes.js';
import { hex, nlmsg, errorReply, done, ack, fake, expectRefusedUnsent, FakeNs } from '../helpers/netlink-wire.js';

function ifinfo(index: number, name: string, extra: Buffer = Buffer.alloc(0)): Buffer {
  const head = Buffer.alloc(16);
  head.writeInt32LE(index, 4);
  head.writeUInt32LE(0x11043, 8); // UP BROADCAST RUNNING MULTICAST LOWER_UP
  return Buffer.concat([head, encodeAttributes([attr.string(3, name), attr.u32(4, 1500)]), extra]);
}

describe('attributes', () => {
  it('pads leaves to 4 bytes but counts only the payload in nla_len; nests count their last child padded', () => {
    expect(encodeAttributes([attr.string(3, 't1')])).toEqual(hex('0700 0300 743100 00'));
    expect(encodeAttributes([attr.nest(18, [attr.string(3, 'abcde')])])).toEqual(hex('1000 1200 0a00 0300 6162636465 00 0000'));
    expect(encodeAttributes([attr.u16(1, 5), attr.u8(2, 1)])).toEqual(hex('0600 0100 0500 0000 0500 0200 01 000000'));
  });

  it('decodes to a map of type -> payloads, NLA_F_NESTED and NET_BYTEORDER masked, NULs stripped', () => {
    const map = AttributeMap.parse(hex('0900 0180 76657468 00 000000 0800 0240 01020304 0800 0240 05060708'));
    expect(map.string(1)).toBe('veth');
    expect(map.all(2).map((b) => b.toString('hex'))).toEqual(['01020304', '05060708']);
    expect(() => AttributeMap.parse(hex('0900 0100 0000'))).toThrow(expect.objectContaining({ code: ErrorCodes.NETLINK_MALFORMED }));
  });

  it('refuses an attribute longer than nla_len can say', () => {
    expect(() => encodeAttributes([attr.bytes(1, Buffer.alloc(70000))])).toThrow(expect.objectContaining({ code: ErrorCodes.NETLINK_INVALID }));
  });
});

// ip's bytes but for NLM_F_ACK (0x4 in the flags): ip asks for an ACK, this
// layer does not; the kernel answers only a failure then (docs/netlink.md).
describe('requests as ip sends them', () => {
  it('a veth with its peer in another namespace (IFLA_NET_NS_FD inside VETH_INFO_PEER)', async () => {
    const { sent, transport } = fake((m) => (m.type === 18 ? [nlmsg(16, 0, m.seq, ifinfo(9, 'vA')), ...ack(m)] : ack(m)));
    const nl = await openNetlink(undefined, { transport });
    const link = await nl.links.add({ kind: 'veth', name: 'vA', peer: { name: 'vB', netns: new FakeNs(4) } });
    const [create, read] = sent[0]!;
    const expected = hex(`5c000000 1000 0106 ${create!.bytes.subarray(8, 12).toString('hex')} 00000000
      00000000000000000000000000000000
      0700 0300 7641 00 00
      3400 1200 0800 0100 76657468 2800 0200 2400 0100
      00000000000000000000000000000000 0800 1c00 04000000 0700 0300 7642 00 00`);
    expect(create!.bytes).toEqual(expected);
    expect(read).toMatchObject({ type: 18, flags: 1 });
    expect(link).toMatchObject({ index: 9, name: 'vA', mtu: 1500, up: true, running: true });
    expect(link.flags).toEqual(['BROADCAST', 'MULTICAST', 'UP', 'LOWER_UP']);
    nl.close();
  });

  it('ip addr add 10.9.0.1/24 dev (index 5)', async () => {
    const { sent, transport } = fake(ack);
    const nl = await openNetlink(undefined, { transport });
    await nl.addresses.add({ link: 5, address: '10.9.0.1/24' });
    const [m] = sent[0]!;
    expect(m!.flags).toBe(0x601);
    expect(m!.type).toBe(20);
    expect(m!.payload).toEqual(hex('02 18 00 00 05000000 0800 0200 0a090001 0800 0100 0a090001'));
    nl.close();
  });

  it('address flags above 0xff go in IFA_FLAGS; lifetimes in IFA_CACHEINFO', async () => {
    const { sent, transport } = fake(ack);
    const nl = await openNetlink(undefined, { transport });
    await nl.addresses.add({ link: 5, address: 'fd00::1/64', flags: ['nodad', 'noprefixroute'], validLifetime: 100, preferredLifetime: 50 });
    const p = sent[0]![0]!.payload;
    expect(p.subarray(0, 8)).toEqual(hex('0a 40 00 00 05000000'));
    const a = AttributeMap.parse(p, 8);
    expect(a.u32(8)).toBe(0x202);
    expect(a.get(6)).toEqual(hex('32000000 64000000 00000000 00000000'));
    nl.close();
  });

  it('ip route add 10.10.0.0/16 via 10.9.0.254 dev (index 2) table 1000 metric 5 proto static', async () => {
    const { sent, transport } = fake(ack);
    const nl = await openNetlink(undefined, { transport });
    await nl.routes.add({ destination: '10.10.0.0/16', gateway: '10.9.0.254', device: 2, table: 1000, metric: 5, protocol: 'static' });
    const [m] = sent[0]!;
    expect(m!.bytes.subarray(0, 8)).toEqual(hex('44000000 1800 0106'));
    expect(m!.payload).toEqual(
      hex(`02 10 00 00 00 04 00 01 00000000
        0800 0100 0a0a0000 0800 0500 0a0900fe 0800 0f00 e8030000 0800 0600 05000000 0800 0400 02000000`),
    );
    nl.close();
  });

  it('ip route add 10.10.0.0/16 via 10.9.0.254 dev (index 3) mtu 1400 advmss 1360: RTA_METRICS after RTA_OIF', async () => {
    const { sent, transport } = fake(ack);
    const nl = await openNetlink(undefined, { transport });
    await nl.routes.add({ destination: '10.10.0.0/16', gateway: '10.9.0.254', device: 3, mtu: 1400, advmss: 1360 });
    const [m] = sent[0]!;
    expect(m!.bytes.subarray(0, 8)).toEqual(hex('48000000 1800 0106'));
    expect(m!.payload).toEqual(
      hex(`02 10 00 00 fe 03 00 01 00000000
        0800 0100 0a0a0000 0800 0500 0a0900fe 0800 0400 03000000
        1400 0800 0800 0200 78050000 0800 0800 50050000`),
    );
    nl.close();
  });

  it('routes: device-only is scope link, default has no RTA_DST, multipath nests rtnexthops', async () => {
    const { sent, transport } = fake(ack);
    const nl = await openNetlink(undefined, { transport });
    await nl.routes.add({ destination: '10.1.2.3/24', device: 3 });
    await nl.routes.add({ destination: 'default', gateway: 'fd00::1', onlink: true });
    await nl.routes.add({ destination: '10.20.0.0/16', multipath: [{ gateway: '10.0.0.1', device: 2, weight: 2 }, { gateway: '10.0.0.2', device: 3 }] });
    expect(sent[0]![0]!.payload.subarray(0, 12)).toEqual(hex('02 18 00 00 fe 03 fd 01 00000000'));
    expect(AttributeMap.parse(sent[0]![0]!.payload, 12).get(1)).toEqual(hex('0a010200')); // host bits cleared
    expect(sent[1]![0]!.payload).toEqual(hex('0a 00 00 00 fe 03 00 01 04000000 1400 0500 fd000000000000000000000000000001'));
    expect(AttributeMap.parse(sent[2]![0]!.payload, 12).get(9)).toEqual(
      hex('1000 00 01 02000000 0800 0500 0a000001 1000 00 00 03000000 0800 0500 0a000002'),
    );
    nl.close();
  });

  it('set up sends the IFF_UP change mask (a zero mask would mean every flag)', async () => {
    const { sent, transport } = fake(ack);
    const nl = await openNetlink(undefined, { transport });
    await nl.links.up('vA');
    await nl.links.set(7, { up: false, mtu: 1400 });
    expect(sent[0]![0]!.payload).toEqual(hex('00000000 00000000 01000000 01000000 0700 0300 7641 00 00'));
    expect(sent[1]![0]!.payload).toEqual(hex('00000000 07000000 00000000 01000000 0800 0400 78050000'));
    nl.close();
  });
});

describe('answers', () => {
  it('an error names the operation and object, with the errno code and the extended-ACK text, also as extack', async () => {
    const { transport } = fake((m) => [errorReply(m, 17, 'ipv4: Address already assigned')]);
    const nl = await openNetlink(undefined, { transport });
    const error = await nl.addresses.add({ link: 5, address: '10.0.0.1/24' }).catch((e: unknown) => e);
    expect(error).toMatchObject({
      name: 'NetnsError',
      code: 'EEXIST',
      errno: -17,
      syscall: 'netlink',
      message: 'netlink: add address 10.0.0.1/24 on #5: EEXIST: ipv4: Address already assigned',
      extack: 'ipv4: Address already assigned',
    });
    nl.close();
  });

  it('without a text, Node’s description; an unknown link by name is ENODEV', async () => {
    const { transport } = fake((m) => [errorReply(m, 19)]);
    const nl = await openNetlink(undefined, { transport });
    const error = await nl.links.get('nope0').catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'ENODEV', message: 'netlink: get link nope0: ENODEV: no such device' });
    expect((error as { extack?: string }).extack).toBeUndefined();
    await expect(nl.addresses.add({ link: 'nope0', address: '10.0.0.1/24' })).rejects.toMatchObject({ code: 'ENODEV' });
    nl.close();
  });

  it('a route dump as the kernel sends it: RTA_METRICS read back as mtu and advmss', async () => {
    // `ip route add 10.10.0.0/16 via 10.9.0.254 dev d0 mtu 1400 advmss 1360 onlink`, as dumped (flags ONLINK|LINKDOWN)
    const route = hex(`02 10 00 00 fe 03 00 01 14000000 0800 0f00 fe000000 0800 0100 0a0a0000
      1400 0800 0800 0200 78050000 0800 0800 50050000 0800 0500 0a0900fe 0800 0400 03000000`);
    const { transport } = fake((m) => [nlmsg(24, 2, m.seq, route), done(m.seq)]);
    const nl = await openNetlink(undefined, { transport });
    expect(await nl.routes.list()).toEqual([
      { family: 4, destination: '10.10.0.0/16', gateway: '10.9.0.254', device: 3, scope: 'global', table: 254, protocol: 'boot', type: 'unicast', onlink: true, mtu: 1400, advmss: 1360 },
    ]);
    nl.close();
  });

  it('a DONE carrying an error is an error too', async () => {
    const { transport } = fake((m) => {
      const payload = Buffer.concat([Buffer.from([0xf0, 0xff, 0xff, 0xff]), encodeAttributes([attr.string(1, 'dump failed')])]);
      return [nlmsg(3, 0x202, m.seq, payload)];
    });
    const nl = await openNetlink(undefined, { transport });
    await expect(nl.links.list()).rejects.toMatchObject({ code: 'EBUSY', message: 'netlink: list links: EBUSY: dump failed' });
    nl.close();
  });

  it('a dump interrupted (DUMP_INTR) is retried whole; five in a row give ERR_NETNS_NETLINK_DUMP_INTERRUPTED', async () => {
    let interruptions = 2;
    const { sent, transport } = fake((m) => {
      const intr = interruptions-- > 0 ? 0x10 : 0;
      return [nlmsg(16, 2 | intr, m.seq, ifinfo(1, 'lo')), nlmsg(16, 2, m.seq, ifinfo(2, 'eth0')), done(m.seq, 2 | intr)];
    });
    const nl = await openNetlink(undefined, { transport });
    expect((await nl.links.list()).map((l) => l.name)).toEqual(['lo', 'eth0']);
    expect(sent).toHaveLength(3);
    expect(sent[0]![0]).toMatchObject({ type: 18, flags: 0x301 });
    interruptions = Infinity;
    await expect(nl.links.list()).rejects.toMatchObject({ code: ErrorCodes.NETLINK_DUMP_INTERRUPTED });
    expect(sent).toHaveLength(3 + 5);
    nl.close();
  });

  it('batched requests go in one transact with consecutive seqs; replies of other seqs are ignored', async () => {
    const { sent, transport } = fake((m) => [done(m.seq + 1000), ...ack(m)]);
    const nl = await openNetlink(undefined, { transport });
    const req = { type: 16, flags: 0, header: Buffer.alloc(16), what: 'x' };
    const settled = await nl.handle.requestSettled([req, req, req]);
    expect(sent).toHaveLength(1);
    expect(settled.every((s) => s.ok)).toBe(true);
    nl.close();
  });

  it('a link created but gone before its read-back: the error says it was created, with the lookup’s code', async () => {
    const { sent, transport } = fake((m) => (m.type === 18 ? [errorReply(m, 19)] : ack(m)));
    const nl = await openNetlink(undefined, { transport });
    const error = await nl.links.add({ kind: 'bridge', name: 'br7' }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'ENODEV', syscall: 'netlink', message: expect.stringMatching(/^netlink: add bridge link br7: created, but it could not be read back/) });
    expect((error as Error).cause).toMatchObject({ code: 'ENODEV', message: 'netlink: get link br7: ENODEV: no such device' });
    expect(sent.map((batch) => batch.map((m) => m.type))).toEqual([[16, 18]]); // one round trip, nothing else sent
    nl.close();
  });

  it('a link the kernel refuses to create is that error, not the read-back’s', async () => {
    const { transport } = fake((m) => (m.type === 16 ? [errorReply(m, 17, 'File exists')] : [errorReply(m, 19)]));
    const nl = await openNetlink(undefined, { transport });
    await expect(nl.links.add({ kind: 'bridge', name: 'br7' })).rejects.toMatchObject({ code: 'EEXIST', message: 'netlink: add bridge link br7: EEXIST: File exists' });
    nl.close();
  });

  it('close is idempotent, closes the socket once, and later use is ERR_NETNS_CLOSED', async () => {
    const { closed, transport } = fake(ack);
    const nl = await openNetlink(undefined, { transport });
    nl.close();
    nl[Symbol.dispose]();
    expect(closed).toEqual([77]);
    await expect(nl.links.up('vA')).rejects.toMatchObject({ code: ErrorCodes.CLOSED });
  });
});

describe('bad input is refused before anything is sent', () => {
  const cases: [string, (nl: Awaited<ReturnType<typeof openNetlink>>) => Promise<unknown>][] = [
    ['a name over 15 bytes', (nl) => nl.links.add({ kind: 'bridge', name: 'a-very-long-name0' })],
    ['a name with /', (nl) => nl.links.add({ kind: 'bridge', name: 'a/b' })],
    ['a name with whitespace', (nl) => nl.links.up('a b')],
    ['a peer name over 15 bytes', (nl) => nl.links.add({ kind: 'veth', name: 'v0', peer: { name: 'x'.repeat(16) } })],
    ['a bad MAC', (nl) => nl.links.set('eth0', { mac: '02:00:00:00:00' })],
    ['a bad MTU', (nl) => nl.links.set('eth0', { mtu: -1 })],
    ['a bad prefix length', (nl) => nl.addresses.add({ link: 'eth0', address: '10.0.0.1/33' })],
    ['a bad address', (nl) => nl.addresses.add({ link: 'eth0', address: '10.0.0/24' })],
    ['an IPv6 zone', (nl) => nl.addresses.add({ link: 'eth0', address: 'fe80::1%eth0/64' })],
    ['a peer of the other family', (nl) => nl.addresses.add({ link: 'eth0', address: '10.0.0.1/24', peer: 'fd00::2' })],
    ['preferred longer than valid', (nl) => nl.addresses.add({ link: 'eth0', address: '10.0.0.1/24', validLifetime: 5, preferredLifetime: 10 })],
    ['an unknown address flag', (nl) => nl.addresses.add({ link: 'eth0', address: '10.0.0.1/24', flags: ['bogus' as 'nodad'] })],
    ['a gateway of the other family', (nl) => nl.routes.add({ destination: '10.0.0.0/8', gateway: 'fd00::1', device: 'eth0' })],
    ['a bad destination', (nl) => nl.routes.add({ destination: '10.0.0.0/99', device: 'eth0' })],
    ['a bad vlan id', (nl) => nl.links.add({ kind: 'vlan', name: 'v', parent: 'eth0', id: 5000 })],
    ['an unknown macvlan mode', (nl) => nl.links.add({ kind: 'macvlan', name: 'm', parent: 'eth0', mode: 'x' as 'bridge' })],
    ['an unknown kind', (nl) => nl.links.add({ kind: 'tun', name: 't' } as never)],
    ['a name the kernel takes as a template (br%d)', (nl) => nl.links.add({ kind: 'bridge', name: 'br%d' })],
    ['a name with a lone surrogate', (nl) => nl.links.add({ kind: 'bridge', name: '\ud800x' })],
    // the kernel takes these, and every log and terminal printing the name would get them raw
    ['a name with a control character', (nl) => nl.links.add({ kind: 'bridge', name: 'b\u0001x' })],
    ['a name with an escape sequence', (nl) => nl.links.add({ kind: 'bridge', name: 'b\u001b[31m' })],
    ['a rename to a name with DEL', (nl) => nl.links.set('eth0', { name: 'eth\u007f' })],
    ['an address label with a control character', (nl) => nl.addresses.add({ link: 'eth0', address: '10.0.0.1/24', label: 'eth0:\u0001' })],
    // an ifindex is a positive int; 0 would silently mean "any"
    ['an index of 0', (nl) => nl.links.add({ kind: 'bridge', name: 'b0', index: 0 })],
    ['an index over 2^31-1', (nl) => nl.links.add({ kind: 'bridge', name: 'b0', index: 2 ** 31 })],
    ['a fractional index', (nl) => nl.links.add({ kind: 'dummy', name: 'd0', index: 2.5 })],
    ['a negative peer index', (nl) => nl.links.add({ kind: 'veth', name: 'v0', index: 6, peer: { name: 'v1', index: -3 } })],
    ['a peer index that is a string', (nl) => nl.links.add({ kind: 'veth', name: 'v0', index: 6, peer: { name: 'v1', index: '7' as never } })],
    // the kernel reads a peer's index only with the link's own, and would pick another without a word
    ['a peer index without the link\'s own', (nl) => nl.links.add({ kind: 'veth', name: 'v0', peer: { name: 'v1', index: 7 } })],
    ['up that is not a boolean', (nl) => nl.links.add({ kind: 'bridge', name: 'b0', up: 'false' as never })],
    ['a route family that is not 4 or 6', (nl) => nl.routes.add({ destination: 'default', family: 5 as never, device: 1 })],
    // the kernel stores 0 as no metric and clamps above 65520 (mtu) and 65495 (advmss): read back, they would differ
    ['a route mtu of 0', (nl) => nl.routes.add({ destination: '10.0.0.0/8', device: 1, mtu: 0 })],
    ['a route mtu over 65520', (nl) => nl.routes.add({ destination: '10.0.0.0/8', device: 1, mtu: 65521 })],
    ['a route mtu that is not an integer', (nl) => nl.routes.add({ destination: '10.0.0.0/8', device: 1, mtu: '1400' as never })],
    ['an advmss over 65495', (nl) => nl.routes.add({ destination: '10.0.0.0/8', device: 1, advmss: 65496 })],
    ['an advmss that is a fraction', (nl) => nl.routes.add({ destination: '10.0.0.0/8', device: 1, advmss: 1360.5 })],
    ['a prefix length with a leading zero (ip reads it as octal)', (nl) => nl.addresses.add({ link: 1, address: '10.0.0.1/024' })],
    ['a raw message type over 16 bits', (nl) => nl.handle.request([{ type: 70000, flags: 0, header: Buffer.alloc(16), what: 'raw' }])],
  ];
  for (const [what, call] of cases) {
    it(what, () => expectRefusedUnsent(call));
  }
});
