// The netlink API under load and abuse, in real namespaces: 10,000 operations
// leave descriptors and threads where they began; every bad input the issue
// lists is refused with a coded error and no change sent (a transport wrapping
// the addon's records every message); a failed create leaves nothing half-made;
// a closed handle refuses further use.
import { execFileSync } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { NetNS } from '../../dist/index.js';
import { ErrorCodes, openNetlink, type Netlink, type NetlinkTransport } from '../../dist/netlink/index.js';
import { nativeTransport } from '../../dist/netlink/transport.js';
import { addAddressRequest } from '../../dist/netlink/addresses.js';
import { openFdCount, threadCount } from '../helpers/process-state.js';
import { privileged } from '../helpers/privileges.js';
import { ipJson, nsName, scratchNamespaces } from '../helpers/scratch-namespaces.js';

const scratch = scratchNamespaces('nsrb');
// The calls below that need a second namespace take the test's own, made last.
let current: NetNS;
const namespace = async (): Promise<NetNS> => (current = await scratch.create());



/** The addon's transport, recording the type of every message sent. */
function recording(): { types: number[]; transport: NetlinkTransport } {
  const types: number[] = [];
  const transport: NetlinkTransport = {
    open: (nsFd, protocol) => nativeTransport.open(nsFd, protocol),
    transact(fd, request, firstSeq, count, quiet) {
      for (let o = 0; o < request.length; o += (request.readUInt32LE(o) + 3) & ~3) types.push(request.readUInt16LE(o + 4));
      return nativeTransport.transact(fd, request, firstSeq, count, quiet);
    },
    close: (fd) => nativeTransport.close(fd),
  };
  return { types, transport };
}

const RTM_GETLINK = 18;

describe.skipIf(!privileged)('netlink robustness', () => {
  afterEach(async () => {
    await scratch.removeAll();
  });

  it('10,000 operations leave the fd and thread counts where they began', async () => {
    const a = await namespace();
    // Warm-up: the first open may start the addon's I/O thread, which then stays.
    (await openNetlink(a)).close();
    const fds = openFdCount();
    const threads = threadCount();
    const nl = await openNetlink(a);
    try {
      await nl.links.add({ kind: 'veth', name: 'r0', peer: { name: 'r1' }, up: true });
      const index = await nl.links.index('r0');
      let operations = 0;
      for (let i = 0; i < 2000; i++) {
        const address = `10.${(i >> 8) & 255}.${i & 255}.1/24`;
        await nl.addresses.add({ link: index, address, flags: ['nodad'] });
        await nl.addresses.delete({ link: index, address });
        await nl.neighbours.add({ link: index, address: `10.99.${(i >> 8) & 255}.${i & 255}`, lladdr: '02:00:00:00:00:01' });
        await nl.neighbours.delete({ link: index, address: `10.99.${(i >> 8) & 255}.${i & 255}` });
        expect((await nl.links.get('r0')).index).toBe(index);
        operations += 5;
      }
      expect(operations).toBe(10_000);
      expect(await nl.addresses.list({ link: index, family: 4 })).toEqual([]);
      expect(await nl.neighbours.list({ link: index, family: 4 })).toEqual([]);
    } finally {
      nl.close();
    }
    // An I/O thread started meanwhile holds its home namespace open: 2 at most; a leak would be thousands.
    expect(Math.abs(openFdCount() - fds)).toBeLessThanOrEqual(2);
    expect(threadCount()).toBeLessThanOrEqual(threads);
  });

  describe('bad input is refused with a coded error and no change is sent', () => {
    type Case = [string, (nl: Netlink) => Promise<unknown>];
    const invalid: Case[] = [
      // name over 15 bytes
      ['link name over 15 bytes', (nl) => nl.links.add({ kind: 'bridge', name: 'a-name-of-16-bytes' })],
      ['veth peer name over 15 bytes', (nl) => nl.links.add({ kind: 'veth', name: 'v0', peer: { name: 'x'.repeat(16) } })],
      ['rename to over 15 bytes', (nl) => nl.links.set('lo', { name: 'x'.repeat(16) })],
      ['move renaming to over 15 bytes', (nl) => nl.links.move('lo', current, { name: 'x'.repeat(16) })],
      ['address on a link named over 15 bytes', (nl) => nl.addresses.add({ link: 'x'.repeat(16), address: '10.0.0.1/24' })],
      ['neighbour on a link named over 15 bytes', (nl) => nl.neighbours.add({ link: 'x'.repeat(16), address: '10.0.0.2' })],
      // bad MAC
      ['bad MAC on create', (nl) => nl.links.add({ kind: 'bridge', name: 'b0', mac: '02:00:00:00:00' })],
      ['bad MAC on set', (nl) => nl.links.set('lo', { mac: '02:00:00:00:00:0g' })],
      ['bad MAC on a renaming set', (nl) => nl.links.set('lo', { name: 'lo2', mac: 'nope' })],
      ['bad neighbour lladdr', (nl) => nl.neighbours.add({ link: 'lo', address: '10.0.0.2', lladdr: '02-00-00-00-00-02' })],
      // bad prefix
      ['IPv4 prefix over 32', (nl) => nl.addresses.add({ link: 'lo', address: '10.0.0.1/33' })],
      ['IPv6 prefix over 128', (nl) => nl.addresses.add({ link: 'lo', address: 'fd00::1/129' })],
      ['prefix not a number', (nl) => nl.addresses.delete({ link: 'lo', address: '10.0.0.1/x' })],
      ['route destination prefix', (nl) => nl.routes.add({ destination: '10.0.0.0/40', device: 'lo' })],
      ['neighbour address with a prefix', (nl) => nl.neighbours.add({ link: 'lo', address: '10.0.0.2/32' })],
      // wrong family
      ['address peer of the other family', (nl) => nl.addresses.add({ link: 'lo', address: '10.0.0.1/24', peer: 'fd00::2' })],
      ['IPv6 broadcast', (nl) => nl.addresses.add({ link: 'lo', address: 'fd00::1/64', broadcast: 'fd00::ff' })],
      ['route gateway of the other family', (nl) => nl.routes.add({ destination: '10.0.0.0/8', gateway: 'fd00::1', device: 'lo' })],
      ['route source of the other family', (nl) => nl.routes.add({ destination: 'fd00::/64', source: '10.0.0.1', device: 'lo' })],
      ['route family not its destination’s', (nl) => nl.routes.add({ destination: '10.0.0.0/8', family: 6, device: 'lo' })],
      ['next hop of the other family', (nl) => nl.routes.add({ destination: '10.0.0.0/8', multipath: [{ gateway: 'fd00::1', device: 'lo' }] })],
      ['neighbour of the other family', (nl) => nl.neighbours.add({ link: 'lo', address: 'fd00::2', family: 4 })],
      ['family 5 in a list', (nl) => nl.addresses.list({ family: 5 as 4 })],
      ['family 5 in a flush', (nl) => nl.addresses.flush('lo', 5 as 4)],
    ];
    for (const [what, call] of invalid) {
      it(what, async () => {
        const a = await namespace();
        const { types, transport } = recording();
        const nl = await openNetlink(a, { transport });
        try {
          await expect(call(nl)).rejects.toMatchObject({ code: ErrorCodes.NETLINK_INVALID, message: expect.stringMatching(/^netlink: /) });
          expect(types).toEqual([]);
        } finally {
          nl.close();
        }
      });
    }

    const unknownLink: Case[] = [
      ['a macvlan on an unknown parent', (nl) => nl.links.add({ kind: 'macvlan', name: 'mv0', parent: 'nosuch0' })],
      ['a bridge port of an unknown master', (nl) => nl.links.add({ kind: 'veth', name: 'v0', peer: { name: 'v1' }, master: 'nosuch0' })],
      ['an address on an unknown link', (nl) => nl.addresses.add({ link: 'nosuch0', address: '10.0.0.1/24' })],
      ['a route via an unknown device', (nl) => nl.routes.add({ destination: '10.0.0.0/8', device: 'nosuch0' })],
      ['a neighbour on an unknown link', (nl) => nl.neighbours.add({ link: 'nosuch0', address: '10.0.0.2', lladdr: '02:00:00:00:00:02' })],
      ['a move of an unknown link', (nl) => nl.links.move('nosuch0', current)],
    ];
    for (const [what, call] of unknownLink) {
      it(`${what}: ENODEV from the lookup, nothing else sent, nothing made`, async () => {
        const a = await namespace();
        const before = ipJson(a, 'link', 'show');
        const { types, transport } = recording();
        const nl = await openNetlink(a, { transport });
        try {
          await expect(call(nl)).rejects.toMatchObject({ code: 'ENODEV', syscall: 'netlink', message: expect.stringContaining('nosuch0') });
          expect(types).toEqual([RTM_GETLINK]);
        } finally {
          nl.close();
        }
        expect(ipJson(a, 'link', 'show')).toEqual(before);
        expect(ipJson(a, 'addr', 'show').flatMap((l) => l.addr_info)).toEqual([]);
      });
    }

    it('set and delete of an unknown link: one message naming it (IFLA_IFNAME, no NLM_F_CREATE), which the kernel refuses with ENODEV', async () => {
      const a = await namespace();
      const before = ipJson(a, 'link', 'show');
      const { types, transport } = recording();
      const nl = await openNetlink(a, { transport });
      try {
        await expect(nl.links.set('nosuch0', { mtu: 1400 })).rejects.toMatchObject({ code: 'ENODEV', message: expect.stringContaining('nosuch0') });
        await expect(nl.links.delete('nosuch0')).rejects.toMatchObject({ code: 'ENODEV', message: expect.stringContaining('nosuch0') });
        expect(types).toEqual([16, 17]);
      } finally {
        nl.close();
      }
      expect(ipJson(a, 'link', 'show')).toEqual(before);
    });
  });

  it('nothing half-made: a veth whose peer cannot be placed leaves no end behind (one message, so the kernel makes all or nothing)', async () => {
    // No typed helper sends more than one changing message for one object:
    // links.add is one NEWLINK (the peer placed by IFLA_NET_NS_FD inside it)
    // plus a read-back in the same sendmsg. So a failure cannot leave half a pair.
    const [host, pod] = [await namespace(), await namespace()];
    const inPod = await openNetlink(pod);
    await inPod.links.add({ kind: 'bridge', name: 'eth0' }); // the peer's name is taken there
    inPod.close();
    const { types, transport } = recording();
    const nl = await openNetlink(host, { transport });
    try {
      await expect(nl.links.add({ kind: 'veth', name: 'veth0', peer: { name: 'eth0', netns: pod } })).rejects.toMatchObject({ code: 'EEXIST', syscall: 'netlink' });
      expect(types).toEqual([16, RTM_GETLINK]); // the create and its read-back, in one sendmsg
      await expect(nl.links.get('veth0')).rejects.toMatchObject({ code: 'ENODEV' });
    } finally {
      nl.close();
    }
    expect(ipJson(host, 'link', 'show').map((l) => l.ifname)).toEqual(['lo']);
    expect(ipJson(pod, 'link', 'show').map((l) => l.ifname).sort()).toEqual(['eth0', 'lo']);
    expect(ipJson(pod, '-d', 'link', 'show', 'eth0')[0]!.linkinfo).toMatchObject({ info_kind: 'bridge' });
  });

  it('a closed handle refuses every further use with ERR_NETNS_CLOSED and sends nothing', async () => {
    const a = await namespace();
    const { types, transport } = recording();
    const nl = await openNetlink(a, { transport });
    await nl.links.get('lo');
    nl.close();
    nl.close(); // idempotent
    types.length = 0;
    const calls: (() => Promise<unknown>)[] = [
      () => nl.links.list(),
      () => nl.links.get('lo'),
      () => nl.links.get(1),
      () => nl.links.up(1),
      () => nl.links.add({ kind: 'bridge', name: 'b0' }),
      () => nl.links.delete(1),
      () => nl.addresses.list(),
      () => nl.addresses.add({ link: 1, address: '10.0.0.1/8' }),
      () => nl.addresses.flush(1),
      () => nl.routes.list(),
      () => nl.routes.add({ destination: '10.0.0.0/8', device: 1 }),
      () => nl.neighbours.list(),
      () => nl.neighbours.add({ link: 1, address: '10.0.0.2', lladdr: '02:00:00:00:00:02' }),
      () => nl.neighbours.delete({ link: 'lo', address: '10.0.0.2' }),
      () => nl.handle.request([{ type: RTM_GETLINK, flags: 0, header: Buffer.alloc(16), what: 'raw' }]),
    ];
    for (const call of calls) await expect(call()).rejects.toMatchObject({ code: ErrorCodes.CLOSED, message: expect.stringContaining('closed') });
    expect(types).toEqual([]);
    expect(nl.handle.closed).toBe(true);
  });
});

describe.skipIf(!privileged)('netlink targets given as JavaScript passes them', () => {
  afterEach(() => scratch.removeAll());

  it('opens by NetNS, name or path alike; anything else is a coded error', async () => {
    const a = await namespace();
    const name = a.path.slice('/run/netns/'.length);
    for (const target of [a, name, a.path]) {
      const nl = await openNetlink(target);
      expect((await nl.links.list()).map((l) => l.name)).toEqual(['lo']);
      nl.close();
    }
    await expect(openNetlink(7 as never)).rejects.toMatchObject({ code: ErrorCodes.INVALID_ARG });
    await expect(openNetlink(`${name}-absent`)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('a veth peer namespace or a move target that is not a NetNS is refused before anything is sent', async () => {
    const a = await namespace();
    const { types, transport } = recording();
    const nl = await openNetlink(a, { transport });
    await expect(nl.links.add({ kind: 'veth', name: 'v0', peer: { name: 'v1', netns: a.path as never } })).rejects.toMatchObject({
      code: ErrorCodes.NETLINK_INVALID,
      message: expect.stringMatching(/peer\.netns must be a NetNS/),
    });
    await expect(nl.links.move('lo', { fd: 3 } as never)).rejects.toMatchObject({ code: ErrorCodes.NETLINK_INVALID });
    expect(types).toEqual([]);
    nl.close();
  });
});

describe.skipIf(!privileged)('netlink batches, peers and inherited options', () => {
  afterEach(() => scratch.removeAll());

  it('a batch far larger than the receive buffer settles every request, and the handle stays usable', async () => {
    const nl = await openNetlink(await namespace());
    const lo = await nl.links.index('lo');
    const addresses = Array.from({ length: 3000 }, (_, i) => `10.98.${i >> 8}.${i & 255}/32`);
    const requests = addresses.map((address) => addAddressRequest({ link: lo, address }, lo));
    const settled = await nl.handle.requestSettled(requests);
    expect(settled.filter((s) => s.ok)).toHaveLength(3000);
    expect(await nl.addresses.flush(lo, 4)).toBe(3000); // lo is down: no 127.0.0.1 yet
    expect(await nl.handle.request([])).toEqual([]);
    expect((await nl.links.get('lo')).name).toBe('lo');
    nl.close();
  });

  it('a peer given with a length sets the prefix length, as ip does', async () => {
    const a = await namespace();
    const nl = await openNetlink(a);
    await nl.links.add({ kind: 'bridge', name: 'p0' });
    await nl.addresses.add({ link: 'p0', address: '10.7.0.1', peer: '10.7.0.2/24' });
    const [shown] = ipJson(a, 'addr', 'show', 'p0');
    expect(shown!.addr_info).toEqual([expect.objectContaining({ local: '10.7.0.1', address: '10.7.0.2', prefixlen: 24 })]);
    nl.close();
  });

  it('never takes an option from a polluted Object.prototype', async () => {
    const a = await namespace();
    const nl = await openNetlink(a);
    const polluted = { up: true, mtu: 1280, validLifetime: 5, preferredLifetime: 5, proxy: true, onlink: true };
    Object.assign(Object.prototype, polluted);
    try {
      await nl.links.add({ kind: 'bridge', name: 'q0' });
      await nl.addresses.add({ link: 'q0', address: '10.8.0.1/24' });
      await nl.neighbours.add({ link: 'q0', address: '10.8.0.9', lladdr: '02:00:00:00:00:09' });
    } finally {
      for (const key of Object.keys(polluted)) delete (Object.prototype as Record<string, unknown>)[key];
    }
    const link = await nl.links.get('q0');
    expect(link).toMatchObject({ up: false });
    expect(link.mtu).not.toBe(1280);
    const [address] = await nl.addresses.list({ link: 'q0', family: 4 });
    expect(address!.validLifetime).toBeUndefined(); // forever
    expect(await nl.neighbours.list({ link: 'q0' })).toEqual([expect.objectContaining({ address: '10.8.0.9', proxy: false })]);
    nl.close();
  });
});


describe.skipIf(!privileged)('netlink answers', () => {
  afterEach(() => scratch.removeAll());

  // Any process in the namespace may send a datagram to the handle's port. One
  // queued before a request, carrying an EPERM for every seq the request could
  // have, must not be taken for the kernel's answer.
  it("takes only the kernel's answers: another socket's forged replies are dropped", async () => {
    const a = await namespace();
    const firstSeq = Math.floor(Date.now() / 1000); // the handle's seqs start at its opening second
    const nl = await openNetlink(a);
    const forge = `
import socket, struct, sys
port, first = int(sys.argv[1]), int(sys.argv[2])
s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
s.bind((0, 0))
# NLMSG_ERROR (2), error -EPERM, then the echoed header (ignored)
replies = b''.join(struct.pack('=IHHII', 36, 2, 0x100, seq & 0xffffffff, 0) + struct.pack('=i', -1) + bytes(16)
                   for seq in range(first - 5, first + 200))
s.sendto(replies, (port, 0))
`;
    execFileSync('ip', ['netns', 'exec', nsName(a), 'python3', '-c', forge, String(nl.handle.portId), String(firstSeq)]);
    expect((await nl.links.get('lo')).name).toBe('lo');
    await nl.addresses.add({ link: 'lo', address: '10.9.0.1/32' });
    expect(ipJson(a, 'addr', 'show', 'lo')[0]!.addr_info).toEqual([expect.objectContaining({ local: '10.9.0.1' })]);
    nl.close();
  });

  it('a batch of plain ACKs and one with an error settle each by its own answer', async () => {
    const nl = await openNetlink(await namespace());
    const lo = await nl.links.index('lo');
    const add = (address: string) => addAddressRequest({ link: lo, address }, lo);
    const settled = await nl.handle.requestSettled([add('10.9.1.1/32'), add('10.9.1.1/32'), add('10.9.1.2/32')]);
    expect(settled.map((s) => (s.ok ? 'ok' : s.error.code))).toEqual(['ok', 'EEXIST', 'ok']);
    expect(await nl.handle.requestSettled([add('10.9.1.3/32'), add('10.9.1.4/32')])).toEqual([
      { ok: true, messages: [] },
      { ok: true, messages: [] },
    ]);
    nl.close();
  });
});
