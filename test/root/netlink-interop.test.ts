// rtnetlink through this package against `ip` in real namespaces: what this API
// makes, `ip -j` reports; what `ip` makes, this API reads; a veth made across two
// namespaces carries TCP; bad input sends nothing.
import { afterEach, describe, expect, it } from 'vitest';
import { NetNS } from '../../dist/index.js';
import { ErrorCodes, openNetlink } from '../../dist/netlink/index.js';
import { privileged } from '../helpers/privileges.js';
import { ip, ipJson, scratchNamespaces } from '../helpers/scratch-namespaces.js';

const scratch = scratchNamespaces('nsnl');
const namespace = (): Promise<NetNS> => scratch.create();



describe.skipIf(!privileged)('netlink in a namespace', () => {
  afterEach(async () => {
    await scratch.removeAll();
  });

  it('a veth with its peer placed in another namespace, addresses and routes, as ip -j reports them', async () => {
    const [a, b] = [await namespace(), await namespace()];
    await using_(await openNetlink(a), async (nl) => {
      const link = await nl.links.add({ kind: 'veth', name: 'va', peer: { name: 'vb', netns: b }, mtu: 1400, mac: '02:00:00:00:00:0a', up: true });
      await nl.addresses.add({ link: 'va', address: '10.77.0.1/24' });
      await nl.routes.add({ destination: '10.78.0.0/16', gateway: '10.77.0.2', device: 'va', metric: 7, table: 1000, protocol: 'static', onlink: true });
      const [shown] = ipJson(a, '-d', 'link', 'show', 'va') as Record<string, unknown>[];
      expect(shown).toMatchObject({ ifindex: link.index, ifname: 'va', mtu: 1400, address: '02:00:00:00:00:0a', flags: link.flags });
      expect(shown!.linkinfo).toMatchObject({ info_kind: 'veth' });
      expect(link.linkNetnsId).toBeTypeOf('number');
      const [addr] = ipJson(a, 'addr', 'show', 'va') as { addr_info: Record<string, unknown>[] }[];
      expect(addr!.addr_info.find((x) => x.family === 'inet')).toMatchObject({ local: '10.77.0.1', prefixlen: 24 });
      expect(ipJson(a, 'route', 'show', 'table', '1000')).toEqual([
        // the kernel adds linkdown while the peer end is down
        expect.objectContaining({ dst: '10.78.0.0/16', gateway: '10.77.0.2', dev: 'va', protocol: 'static', metric: 7, flags: expect.arrayContaining(['onlink']) }),
      ]);
    });
    const peer = (ipJson(b, 'link', 'show', 'vb') as Record<string, unknown>[])[0];
    expect(peer).toMatchObject({ ifname: 'vb' });
  });

  it('reads what ip made', async () => {
    const a = await namespace();
    ip(a, 'link', 'add', 'br0', 'type', 'bridge');
    ip(a, 'link', 'add', 'v1', 'type', 'veth', 'peer', 'name', 'v2');
    ip(a, 'link', 'set', 'v1', 'master', 'br0');
    ip(a, 'link', 'set', 'v1', 'up');
    ip(a, 'addr', 'add', '10.5.0.1/24', 'dev', 'v1');
    ip(a, 'addr', 'add', 'fd00::1/64', 'dev', 'v1', 'nodad');
    ip(a, 'route', 'add', '10.6.0.0/16', 'via', '10.5.0.9', 'dev', 'v1', 'metric', '3');
    await using_(await openNetlink(a), async (nl) => {
      const links = await nl.links.list();
      const byName = new Map(links.map((l) => [l.name, l]));
      const v1 = byName.get('v1')!;
      expect(v1).toMatchObject({ kind: 'veth', master: byName.get('br0')!.index, linkIndex: byName.get('v2')!.index, up: true });
      for (const shown of ipJson(a, 'link', 'show') as Record<string, unknown>[]) {
        // ip derives M-DOWN from the state of the lower link (IFLA_LINK); it is no flag of this link's
        const flags = (shown.flags as string[]).filter((flag) => flag !== 'M-DOWN');
        expect(byName.get(shown.ifname as string)).toMatchObject({ index: shown.ifindex, mtu: shown.mtu, flags, operState: shown.operstate });
      }
      const addresses = await nl.addresses.list({ link: 'v1' });
      expect(addresses.map((x) => `${x.address}/${x.prefixLength}`)).toEqual(expect.arrayContaining(['10.5.0.1/24', 'fd00::1/64']));
      expect(addresses.find((x) => x.address === 'fd00::1')!.flags).toContain('nodad');
      expect(await nl.addresses.list({ link: 'v1', family: 4 })).toHaveLength(1);
      const routes = await nl.routes.list({ family: 4 });
      expect(routes).toContainEqual(expect.objectContaining({ destination: '10.6.0.0/16', gateway: '10.5.0.9', device: v1.index, metric: 3 }));
      expect(await nl.addresses.flush('v1')).toBeGreaterThanOrEqual(2);
      expect(ipJson(a, 'addr', 'show', 'v1')).toEqual([expect.objectContaining({ addr_info: [] })]);
    });
  });

  it('a veth across two namespaces carries TCP', async () => {
    const [a, b] = [await namespace(), await namespace()];
    await using_(await openNetlink(a), async (nl) => {
      await nl.links.add({ kind: 'veth', name: 'ea', peer: { name: 'eb', netns: b }, up: true });
      await nl.addresses.add({ link: 'ea', address: '10.88.0.1/24', flags: ['nodad'] });
    });
    await using_(await openNetlink(b), async (nl) => {
      await nl.links.up('eb');
      await nl.addresses.add({ link: 'eb', address: '10.88.0.2/24' });
    });
    const net = await import('node:net');
    const server = await b.listen(net.createServer((s) => s.end('hello')), { host: '10.88.0.2', port: 0 });
    const { port } = server.address() as { port: number };
    const socket = await a.connect({ host: '10.88.0.2', port });
    const text = await new Promise<string>((resolve) => {
      let data = '';
      socket.on('data', (d) => (data += d)).on('end', () => resolve(data));
    });
    server.close();
    expect(text).toBe('hello');
  });

  it('kernel errors are coded, name the object and carry the extended-ACK text; bad input is refused', async () => {
    const a = await namespace();
    await using_(await openNetlink(a), async (nl) => {
      await nl.links.up('lo');
      await nl.addresses.add({ link: 'lo', address: '10.9.9.9/32' });
      await expect(nl.addresses.add({ link: 'lo', address: '10.9.9.9/32' })).rejects.toMatchObject({
        code: 'EEXIST',
        syscall: 'netlink',
        message: expect.stringMatching(/^netlink: add address 10\.9\.9\.9\/32 on lo: EEXIST: ipv4: Address already assigned/),
      });
      await expect(nl.links.get('nosuch0')).rejects.toMatchObject({ code: 'ENODEV' });
      await expect(nl.links.set('lo', { mtu: 10 })).rejects.toMatchObject({ code: ErrorCodes.NETLINK_INVALID });
      await expect(nl.routes.add({ destination: '10.1.0.0/16', gateway: '10.200.0.1' })).rejects.toMatchObject({ code: 'ENETUNREACH' });
    });
  });

  it('route mtu and advmss (RTA_METRICS): what this API sets, ip -j shows; what ip sets, this API reads', async () => {
    const a = await namespace();
    ip(a, 'link', 'add', 'r0', 'type', 'veth', 'peer', 'name', 'r1');
    ip(a, 'addr', 'add', '10.40.0.1/24', 'dev', 'r0');
    ip(a, 'addr', 'add', 'fd00:40::1/64', 'dev', 'r0', 'nodad');
    ip(a, 'link', 'set', 'r0', 'up');
    ip(a, 'route', 'add', '10.43.0.0/16', 'via', '10.40.0.9', 'dev', 'r0', 'mtu', '1280', 'advmss', '1240');
    await using_(await openNetlink(a), async (nl) => {
      await nl.routes.add({ destination: '10.41.0.0/16', gateway: '10.40.0.9', device: 'r0', mtu: 1400, advmss: 1360 });
      await nl.routes.add({ destination: 'fd00:41::/64', gateway: 'fd00:40::9', device: 'r0', mtu: 65520, advmss: 65495 });
      await nl.routes.replace({ destination: '10.42.0.0/16', device: 'r0', mtu: 1300 });
      expect(ipJson(a, 'route', 'show', '10.41.0.0/16')).toEqual([expect.objectContaining({ gateway: '10.40.0.9', metrics: [{ mtu: 1400, advmss: 1360 }] })]);
      expect(ipJson(a, '-6', 'route', 'show', 'fd00:41::/64')).toEqual([expect.objectContaining({ gateway: 'fd00:40::9', metrics: [{ mtu: 65520, advmss: 65495 }] })]);
      expect(ipJson(a, 'route', 'show', '10.42.0.0/16')).toEqual([expect.objectContaining({ scope: 'link', metrics: [{ mtu: 1300 }] })]);
      const byDestination = new Map((await nl.routes.list()).map((r) => [r.destination, r]));
      expect(byDestination.get('10.41.0.0/16')).toMatchObject({ mtu: 1400, advmss: 1360 });
      expect(byDestination.get('fd00:41::/64')).toMatchObject({ mtu: 65520, advmss: 65495 });
      expect(byDestination.get('10.42.0.0/16')).toMatchObject({ mtu: 1300 });
      expect(byDestination.get('10.42.0.0/16')).not.toHaveProperty('advmss');
      expect(byDestination.get('10.43.0.0/16')).toMatchObject({ gateway: '10.40.0.9', mtu: 1280, advmss: 1240 });
      expect(byDestination.get('10.40.0.0/24')).not.toHaveProperty('mtu'); // the kernel's prefix route has none
    });
  });

  it('moves a link into another namespace and deletes it there', async () => {
    const [a, b] = [await namespace(), await namespace()];
    await using_(await openNetlink(a), async (nl) => {
      await nl.links.add({ kind: 'veth', name: 'm1', peer: { name: 'm2' } });
      await nl.links.move('m2', b, { name: 'moved' });
      await expect(nl.links.get('m2')).rejects.toMatchObject({ code: 'ENODEV' });
    });
    await using_(await openNetlink(b), async (nl) => {
      expect(await nl.links.get('moved')).toMatchObject({ kind: 'veth' });
      await nl.links.delete('moved');
    });
    expect((ipJson(a, 'link', 'show') as { ifname: string }[]).map((l) => l.ifname)).toEqual(['lo']);
  });
});

async function using_<T extends { close(): void }>(resource: T, body: (r: T) => Promise<void>): Promise<void> {
  try {
    await body(resource);
  } finally {
    resource.close();
  }
}
