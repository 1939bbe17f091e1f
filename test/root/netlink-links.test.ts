// Link kinds on the real kernel, made with this API and compared with what
// `ip -j -d link show` reports: bridge, macvlan on a veth parent; master / no
// master, mtu, mac, name, up / down; moved to another namespace. dummy, vlan and
// ipvlan are tried the same way and skip only if this kernel refuses the kind
// itself (EOPNOTSUPP "Unknown device type": the driver is not there).
import { afterEach, describe, expect, it } from 'vitest';
import { NetNS } from '../../dist/index.js';
import { openNetlink, type Link, type LinkSpec, type Netlink } from '../../dist/netlink/index.js';
import { privileged } from '../helpers/privileges.js';
import { ipJson, scratchNamespaces } from '../helpers/scratch-namespaces.js';

const scratch = scratchNamespaces('nslk');
const namespace = (): Promise<NetNS> => scratch.create();
let handles: Netlink[] = [];


async function netlink(ns: NetNS): Promise<Netlink> {
  const nl = await openNetlink(ns);
  handles.push(nl);
  return nl;
}

const shown = (ns: NetNS, name: string): Record<string, any> => ipJson(ns, '-d', 'link', 'show', 'dev', name)[0]!;

/** The fields this API reads, as ip -j -d prints them (M-DOWN is derived by ip from the lower link). */
function expectSameAsIp(link: Link, ipView: Record<string, any>): void {
  expect(link).toMatchObject({
    index: ipView.ifindex,
    name: ipView.ifname,
    mtu: ipView.mtu,
    mac: ipView.address,
    operState: ipView.operstate,
    flags: (ipView.flags as string[]).filter((f) => f !== 'M-DOWN'),
  });
  if (ipView.linkinfo?.info_kind !== undefined) expect(link.kind).toBe(ipView.linkinfo.info_kind);
}

/**
 * The kernel refused the kind itself: its driver is not in this kernel. errno 95
 * is EOPNOTSUPP in the kernel; Node names it ENOTSUP (the same number on Linux).
 */
function kindMissing(error: unknown): boolean {
  const e = error as { code?: string; errno?: number; message?: string };
  return e?.errno === -95 && /Unknown device type/.test(e.message ?? '');
}

describe.skipIf(!privileged)('netlink links on the real kernel', () => {
  afterEach(async () => {
    for (const nl of handles) nl.close();
    handles = [];
    await scratch.removeAll();
  });

  it('a bridge: created with mtu, mac and up, as ip -j -d reports it', async () => {
    const a = await namespace();
    const nl = await netlink(a);
    const br = await nl.links.add({ kind: 'bridge', name: 'br0', mtu: 1400, mac: '02:00:00:00:0b:01', up: true });
    const view = shown(a, 'br0');
    expect(view).toMatchObject({ ifname: 'br0', mtu: 1400, address: '02:00:00:00:0b:01', linkinfo: { info_kind: 'bridge' } });
    expect(view.flags).toContain('UP');
    expectSameAsIp(br, view);
    expectSameAsIp(await nl.links.get('br0'), shown(a, 'br0'));
  });

  it('master / no master: a veth end enslaved to a bridge and released', async () => {
    const a = await namespace();
    const nl = await netlink(a);
    const br = await nl.links.add({ kind: 'bridge', name: 'br0' });
    await nl.links.add({ kind: 'veth', name: 've0', peer: { name: 've1' }, master: 'br0' });
    expect(shown(a, 've0')).toMatchObject({ master: 'br0', linkinfo: { info_slave_kind: 'bridge' } });
    expect(await nl.links.get('ve0')).toMatchObject({ master: br.index });
    await nl.links.set('ve0', { master: null });
    expect(shown(a, 've0').master).toBeUndefined();
    expect((await nl.links.get('ve0')).master).toBeUndefined();
    await nl.links.set('ve1', { master: br.index });
    expect(shown(a, 've1').master).toBe('br0');
    expect((await nl.links.get('ve1')).master).toBe(br.index);
  });

  it('set mtu, mac, name, up and down, each as ip then reports', async () => {
    const a = await namespace();
    const nl = await netlink(a);
    const v = await nl.links.add({ kind: 'veth', name: 's0', peer: { name: 's1' } });
    await nl.links.set('s0', { mtu: 1280, mac: '02:00:00:00:0c:01' });
    expect(shown(a, 's0')).toMatchObject({ ifindex: v.index, mtu: 1280, address: '02:00:00:00:0c:01' });
    await nl.links.set(v.index, { name: 'renamed0', up: true });
    expect(shown(a, 'renamed0')).toMatchObject({ ifindex: v.index });
    expect(shown(a, 'renamed0').flags).toContain('UP');
    expectSameAsIp(await nl.links.get('renamed0'), shown(a, 'renamed0'));
    await nl.links.up('s1');
    expectSameAsIp(await nl.links.get('s1'), shown(a, 's1'));
    expect(shown(a, 'renamed0').flags).toContain('LOWER_UP');
    await nl.links.down('renamed0');
    expect(shown(a, 'renamed0').flags).not.toContain('UP');
    expect(await nl.links.get('renamed0')).toMatchObject({ up: false });
    // name and other changes in one message, by name: the new name is sent, the index found first
    await nl.links.set('renamed0', { name: 's0', mtu: 1500 });
    expect(shown(a, 's0')).toMatchObject({ ifindex: v.index, mtu: 1500 });
  });

  for (const mode of ['bridge', 'private', 'vepa'] as const) {
    it(`a macvlan (mode ${mode}) on a veth parent, as ip -j -d reports it`, async () => {
      const a = await namespace();
      const nl = await netlink(a);
      const parent = await nl.links.add({ kind: 'veth', name: 'p0', peer: { name: 'p1' } });
      const mv = await nl.links.add({ kind: 'macvlan', name: 'mv0', parent: 'p0', mode, mac: '02:00:00:00:0d:01', mtu: 1400 });
      const view = shown(a, 'mv0');
      expect(view).toMatchObject({ ifname: 'mv0', link: 'p0', mtu: 1400, address: '02:00:00:00:0d:01', linkinfo: { info_kind: 'macvlan', info_data: { mode } } });
      expect(mv).toMatchObject({ kind: 'macvlan', linkIndex: parent.index });
      expectSameAsIp(mv, view);
    });
  }

  it('a macvlan moved to another namespace (renamed there); a bridge there too', async () => {
    const [a, b] = [await namespace(), await namespace()];
    const nl = await netlink(a);
    await nl.links.add({ kind: 'veth', name: 'p0', peer: { name: 'p1' } });
    await nl.links.add({ kind: 'macvlan', name: 'mv0', parent: 'p0' });
    await nl.links.move('mv0', b, { name: 'eth0' });
    expect(ipJson(a, 'link', 'show').map((l) => l.ifname)).not.toContain('mv0');
    const inB = await netlink(b);
    const moved = await inB.links.get('eth0');
    const view = shown(b, 'eth0');
    expect(view).toMatchObject({ ifname: 'eth0', linkinfo: { info_kind: 'macvlan' } });
    expect(view.link_netnsid).toBeTypeOf('number');
    expect(moved).toMatchObject({ kind: 'macvlan', linkNetnsId: view.link_netnsid });
    expectSameAsIp(moved, view);
    // and back, by index
    await inB.links.move(moved.index, a);
    expect(await nl.links.get('eth0')).toMatchObject({ kind: 'macvlan' });
    expect(ipJson(b, 'link', 'show').map((l) => l.ifname)).toEqual(['lo']);
  });

  it('addEach (the lab\'s): several links in one round trip, each settled in order; one refused leaves the others made', async () => {
    const [ns, peers] = [await namespace(), await namespace()];
    const nl = await netlink(ns);
    const made = await (nl.links as unknown as { addEach(specs: LinkSpec[]): Promise<PromiseSettledResult<Link>[]> }).addEach([
      { kind: 'veth', name: 'e1', up: true, peer: { name: 'p1', netns: peers } },
      { kind: 'veth', name: 'e1', peer: { name: 'p2', netns: peers } }, // e1 is taken by then
      { kind: 'bridge', name: 'b1' },
    ]);
    expect(made.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((made[1] as PromiseRejectedResult).reason).toMatchObject({ code: 'EEXIST' });
    expectSameAsIp((made[0] as PromiseFulfilledResult<Link>).value, shown(ns, 'e1'));
    expectSameAsIp((made[2] as PromiseFulfilledResult<Link>).value, shown(ns, 'b1'));
    expect(ipJson(peers, 'link', 'show').map((link) => link.ifname as string).sort()).toEqual(['lo', 'p1']);
  });

  it('addEach with a peer namespace closed meanwhile refuses the whole batch before sending anything, and lets the others go', async () => {
    const [ns, open, closed] = [await namespace(), await namespace(), await namespace()];
    const nl = await netlink(ns);
    const peer = NetNS.open(closed.path);
    peer.close();
    const addEach = (nl.links as unknown as { addEach(specs: LinkSpec[]): Promise<PromiseSettledResult<Link>[]> }).addEach.bind(nl.links);
    await expect(
      addEach([
        { kind: 'veth', name: 'q1', peer: { name: 'r1', netns: open } },
        { kind: 'veth', name: 'q2', peer: { name: 'r2', netns: peer } },
      ]),
    ).rejects.toMatchObject({ code: 'ERR_NETNS_CLOSED' });
    expect(ipJson(ns, 'link', 'show').map((link) => link.ifname as string)).toEqual(['lo']);
    await nl.links.add({ kind: 'veth', name: 'q3', peer: { name: 'r3', netns: open } }); // the first peer's handle is still usable
    open.close();
  });

  it('a veth end moved to another namespace keeps its pair: each end reports the other', async () => {
    const [a, b] = [await namespace(), await namespace()];
    const nl = await netlink(a);
    const va = await nl.links.add({ kind: 'veth', name: 'va', peer: { name: 'vb' } });
    await nl.links.move('vb', b);
    const vb = await (await netlink(b)).links.get('vb');
    expect(shown(b, 'vb')).toMatchObject({ ifindex: vb.index, link_index: va.index, link_netnsid: vb.linkNetnsId });
    expect(vb.linkIndex).toBe(va.index);
    expect((await nl.links.get('va')).linkIndex).toBe(vb.index);
  });

  it('a veth made with both ends\' indexes (the lab\'s, as ip link add … index N peer … index M): each end has its own, as ip reports', async () => {
    const [a, b] = [await namespace(), await namespace()];
    const nl = await netlink(a);
    const made = await nl.links.add({ kind: 'veth', name: 'ia', index: 300, up: true, peer: { name: 'ib', netns: b, index: 301 } });
    expect(made).toMatchObject({ index: 300, linkIndex: 301 });
    expect(shown(a, 'ia')).toMatchObject({ ifindex: 300, link_index: 301 });
    expect(shown(b, 'ib')).toMatchObject({ ifindex: 301, link_index: 300 });
  });

  it('an index already taken is refused whole: EEXIST for the link, EBUSY for its peer, and no end is left behind', async () => {
    const [a, b] = [await namespace(), await namespace()];
    const nl = await netlink(a);
    await nl.links.add({ kind: 'bridge', name: 'held', index: 40 });
    await (await netlink(b)).links.add({ kind: 'bridge', name: 'held', index: 41 });
    await expect(nl.links.add({ kind: 'veth', name: 'ta', index: 40, peer: { name: 'tb', netns: b } })).rejects.toMatchObject({ code: 'EEXIST' });
    await expect(nl.links.add({ kind: 'veth', name: 'ta', index: 42, peer: { name: 'tb', netns: b, index: 41 } })).rejects.toMatchObject({ code: 'EBUSY' });
    expect(ipJson(a, 'link', 'show').map((link) => link.ifname as string)).toEqual(['lo', 'held']);
    expect(ipJson(b, 'link', 'show').map((link) => link.ifname as string)).toEqual(['lo', 'held']);
  });

  it('one index for both ends in one namespace is EBUSY with nothing made; the largest index, 2^31-1, is taken', async () => {
    const ns = await namespace();
    const nl = await netlink(ns);
    await expect(nl.links.add({ kind: 'veth', name: 'sa', index: 50, peer: { name: 'sb', index: 50 } })).rejects.toMatchObject({ code: 'EBUSY' });
    expect(ipJson(ns, 'link', 'show').map((link) => link.ifname as string)).toEqual(['lo']);
    expect(await nl.links.add({ kind: 'veth', name: 'ma', index: 2 ** 31 - 1, peer: { name: 'mb', index: 2 ** 31 - 2 } })).toMatchObject({ index: 2 ** 31 - 1, linkIndex: 2 ** 31 - 2 });
  });

  // Kinds this machine's kernel may lack. Each is tried for real; only the
  // kernel's "Unknown device type" (EOPNOTSUPP) for the kind itself skips.
  const optional: [string, (parent: string) => LinkSpec, (view: Record<string, any>) => void][] = [
    ['dummy', () => ({ kind: 'dummy', name: 'd0', mtu: 1400 }), (v) => expect(v).toMatchObject({ mtu: 1400 })],
    ['vlan', (parent) => ({ kind: 'vlan', name: 'vl0', parent, id: 42 }), (v) => expect(v.linkinfo.info_data).toMatchObject({ id: 42 })],
    [
      'ipvlan',
      (parent) => ({ kind: 'ipvlan', name: 'iv0', parent, mode: 'l3' }),
      (v) => expect(v.linkinfo.info_data).toMatchObject({ mode: 'l3' }),
    ],
  ];
  for (const [kind, spec, check] of optional) {
    it(`a ${kind} link, if this kernel has the ${kind} driver`, async (context) => {
      const a = await namespace();
      const nl = await netlink(a);
      await nl.links.add({ kind: 'veth', name: 'p0', peer: { name: 'p1' } });
      let link: Link;
      try {
        link = await nl.links.add(spec('p0'));
      } catch (error) {
        if (kindMissing(error)) return context.skip(`this kernel has no ${kind} driver (EOPNOTSUPP: Unknown device type)`);
        throw error;
      }
      const view = shown(a, link.name);
      expect(view.linkinfo).toMatchObject({ info_kind: kind });
      check(view);
      expectSameAsIp(link, view);
    });
  }
});
