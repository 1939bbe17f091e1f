// The plumbing helpers of netns/cni on real namespaces: a veth pair made by
// setupVeth and configured by configureInterface carries TCP (IPv4 and IPv6)
// between the container and host namespaces; CHECK helpers notice what went
// missing; masquerade rules show in `nft list ruleset` and go on teardown; GC
// removes one network's leftovers only.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NetNS } from '../../dist/index.js';
import { openNetlink } from '../../dist/netlink/index.js';
import { createTestNetwork, type TestNetwork } from '../../dist/testing.js';
import { checkInterface, checkRoutes } from '../../dist/cni/check.js';
import { enableForward, familiesOf } from '../../dist/cni/forward.js';
import { collectGarbage } from '../../dist/cni/gc.js';
import { hostAlias, masqueradeComment } from '../../dist/cni/identity.js';
import { configureInterface } from '../../dist/cni/interface.js';
import { addMasquerade, deleteMasquerade, listMasquerade } from '../../dist/cni/masquerade.js';
import { listWithAliases, setupVeth, type Veth } from '../../dist/cni/veth.js';
import type { Result } from '../../dist/cni/types.js';
import { masqueradeListing } from '../helpers/masquerade-listing.js';
import { privileged } from '../helpers/privileges.js';
import { tcpHello } from '../helpers/tcp-hello.js';

type Hosts = 'host' | 'c1' | 'c2' | 'c3' | 'c4' | 'c5' | 'c6' | 'out';
/** Debian's containernetworking-plugins (1.1.1): the official Go plugins, to compare with. */
const GO_PLUGINS = '/usr/lib/cni';
const haveGoPtp = existsSync(`${GO_PLUGINS}/ptp`) && existsSync(`${GO_PLUGINS}/host-local`);
if (!haveGoPtp && process.env.CI) throw new Error('CI must install containernetworking-plugins (ptp and host-local in /usr/lib/cni) for the comparison with the Go plugin');

/** The host side a ptp-like plugin adds: the gateway on the host end, a host route to each container address. */
async function hostSide(host: NetNS, veth: Veth, gateways: string[], containerIps: string[]): Promise<void> {
  const nl = await openNetlink(host);
  try {
    for (const gw of gateways) await nl.addresses.add({ link: veth.host.name, address: gw, flags: gw.includes(':') ? ['nodad'] : [] });
    for (const ip of containerIps) await nl.routes.add({ destination: ip, device: veth.host.name });
  } finally {
    nl.close();
  }
}

/** The host-side link names (aliases read too), through a socket closed afterwards. */
async function linkNames(ns: NetNS): Promise<string[]> {
  const nl = await openNetlink(ns);
  try {
    return (await listWithAliases(nl)).map((link) => link.name);
  } finally {
    nl.close();
  }
}

describe.skipIf(!privileged)('netns/cni plumbing', () => {
  let network: TestNetwork<Hosts>;
  let host: NetNS;
  let c1: NetNS;
  let veth: Veth;
  const result = (v: Veth): Result => ({
    cniVersion: '1.1.0',
    interfaces: [v.host, v.container],
    ips: [
      { interface: 1, address: '10.1.1.2/24', gateway: '10.1.1.1' },
      { interface: 1, address: 'fd00:1::2/64', gateway: 'fd00:1::1' },
    ],
    routes: [{ dst: '0.0.0.0/0' }, { dst: '10.9.0.0/16', gw: '10.1.1.1', table: 100 }, { dst: '::/0' }, { dst: '10.10.0.0/16', mtu: 1300, advmss: 1260 }, { dst: 'fd00:10::/64', mtu: 1280, advmss: 0 }],
  });

  beforeAll(async () => {
    network = await createTestNetwork<Hosts>({
      prefix: `nsplumb-${randomBytes(2).toString('hex')}-`,
      hosts: { host: {}, c1: {}, c2: {}, c3: {}, c4: {}, c5: {}, c6: {}, out: {} },
      links: [['host', 'out', { host: '10.77.0.1/24', out: '10.77.0.2/24' }]],
    });
    ({ host, c1 } = network.hosts);
  });

  afterAll(async () => {
    await network?.delete();
  });

  it('setupVeth makes the pair from the container, the host end named veth+8 hex, up, accept_ra=0, MTU and txqueuelen on both ends', async () => {
    veth = await setupVeth({ containerNs: c1, ifname: 'eth0', mtu: 1400, txQueueLength: 500, mac: '02:00:00:00:01:02', hostNs: host });
    expect(veth.host.name).toMatch(/^veth[0-9a-f]{8}$/);
    expect(veth.host.mtu).toBe(1400);
    expect(veth.container).toEqual({ name: 'eth0', mac: '02:00:00:00:01:02', mtu: 1400, sandbox: c1.path });
    for (const [ns, name] of [[host, veth.host.name], [c1, 'eth0']] as const) {
      expect(JSON.parse((await ns.execFile('ip', ['-j', 'link', 'show', 'dev', name])).stdout)[0].txqlen).toBe(500);
    }
    const nl = await openNetlink(host);
    const inside = await openNetlink(c1);
    try {
      expect(await nl.links.get(veth.host.name)).toMatchObject({ kind: 'veth', mtu: 1400, up: true, mac: veth.host.mac });
      expect(await inside.links.get('eth0')).toMatchObject({ kind: 'veth', mtu: 1400, up: false });
    } finally {
      nl.close();
      inside.close();
    }
    expect(await host.sysctl.get(`net/ipv6/conf/${veth.host.name}/accept_ra`)).toBe('0');
  });

  it('setupVeth refuses an ifname the container has already, or a bad alias, and leaves nothing behind', async () => {
    const before = await linkNames(host);
    await expect(setupVeth({ containerNs: c1, ifname: 'eth0', hostNs: host })).rejects.toMatchObject({ code: 'EEXIST', message: expect.stringContaining('already has an interface named eth0') });
    await expect(setupVeth({ containerNs: c1, ifname: 'eth5', hostNs: host, hostAlias: 'a\nb' })).rejects.toMatchObject({ code: 'ERR_NETNS_INVALID_ARG' });
    expect(await linkNames(host)).toEqual(before);
    expect(await linkNames(c1)).toEqual(['lo', 'eth0']);
  });

  it('configureInterface adds the addresses, brings the link up, waits out DAD, adds the routes with the gateway fallback, mtu and advmss; TCP crosses the pair both families', async () => {
    await configureInterface(c1, 'eth0', result(veth));
    await hostSide(host, veth, ['10.1.1.1/32', 'fd00:1::1/128'], ['10.1.1.2/32', 'fd00:1::2/128']);
    const nl = await openNetlink(c1);
    try {
      const addresses = await nl.addresses.list({ link: 'eth0' });
      expect(addresses.filter((a) => a.scope === 'global').map((a) => [`${a.address}/${a.prefixLength}`, a.flags.includes('tentative')])).toEqual([
        ['10.1.1.2/24', false],
        ['fd00:1::2/64', false],
      ]);
      const routes = await nl.routes.list({ table: 'all' });
      expect(routes).toEqual(expect.arrayContaining([
        expect.objectContaining({ destination: '0.0.0.0/0', gateway: '10.1.1.1', table: 254 }),
        expect.objectContaining({ destination: '10.9.0.0/16', gateway: '10.1.1.1', table: 100 }),
        expect.objectContaining({ destination: '::/0', gateway: 'fd00:1::1', table: 254 }),
        expect.objectContaining({ destination: '10.10.0.0/16', gateway: '10.1.1.1', mtu: 1300, advmss: 1260 }),
        expect.objectContaining({ destination: 'fd00:10::/64', gateway: 'fd00:1::1', mtu: 1280 }),
      ]));
      expect(routes.find((r) => r.destination === 'fd00:10::/64')).not.toHaveProperty('advmss'); // 0: none, as Go
    } finally {
      nl.close();
    }
    expect(await c1.sysctl.get('net/ipv6/conf/eth0/keep_addr_on_down')).toBe('1');
    expect(await tcpHello(c1, '0.0.0.0', host, '10.1.1.2')).toBe('hello');
    expect(await tcpHello(c1, '::', host, 'fd00:1::2')).toBe('hello');
    expect(await tcpHello(host, '10.1.1.1', c1)).toBe('hello');
  });

  it('configureInterface reports an IPv6 address that failed duplicate address detection (EADDRINUSE)', async () => {
    const pair = await setupVeth({ containerNs: network.hosts.c6, ifname: 'eth0', hostNs: host });
    await hostSide(host, pair, ['fd00:6::2/64'], []); // the host end holds the address the container will ask for
    const taken: Result = { cniVersion: '1.1.0', interfaces: [pair.host, pair.container], ips: [{ interface: 1, address: 'fd00:6::2/64' }] };
    await expect(configureInterface(network.hosts.c6, 'eth0', taken)).rejects.toMatchObject({ code: 'EADDRINUSE', message: expect.stringContaining('fd00:6::2/64 failed duplicate address detection') });
  });

  it('configureInterface refuses a result whose ips point at another interface, or with a bad route, before changing anything', async () => {
    await expect(configureInterface(c1, 'eth0', { cniVersion: '1.1.0', interfaces: [{ name: 'eth9' }], ips: [{ interface: 0, address: '10.3.0.2/24' }] })).rejects.toMatchObject({
      code: 'ERR_NETNS_INVALID_ARG',
      message: expect.stringContaining('for interface eth9, not eth0'),
    });
    const badRoute: Result = { cniVersion: '1.1.0', interfaces: [veth.container], ips: [{ interface: 0, address: '10.1.1.7/24' }], routes: [{ dst: '10.8.0.0/33' }] };
    await expect(configureInterface(c1, 'eth0', badRoute)).rejects.toMatchObject({ code: 'ERR_NETNS_NETLINK_INVALID' });
    const badMtu: Result = { ...badRoute, routes: [{ dst: '10.8.0.0/16', mtu: 70000 }] };
    await expect(configureInterface(c1, 'eth0', badMtu)).rejects.toMatchObject({ code: 'ERR_NETNS_NETLINK_INVALID', message: expect.stringContaining('route mtu') });
    const nl = await openNetlink(c1);
    try {
      expect((await nl.addresses.list({ link: 'eth0', family: 4 })).map((a) => a.address)).toEqual(['10.1.1.2']); // nothing was changed
    } finally {
      nl.close();
    }
  });

  it('CHECK helpers pass on what was made and name what goes missing (ERR_NETNS_CNI_CHECK)', async () => {
    const made = result(veth);
    await checkInterface(c1, 'eth0', made, { kind: 'veth' });
    await checkRoutes(c1, made);
    const check = (message: string) => expect.objectContaining({ code: 'ERR_NETNS_CNI_CHECK', message: expect.stringContaining(message) });
    await expect(checkInterface(c1, 'eth0', { ...made, interfaces: [veth.host, { ...veth.container, mac: '02:00:00:00:09:09' }] })).rejects.toEqual(check('MAC 02:00:00:00:01:02, the result says 02:00:00:00:09:09'));
    await expect(checkInterface(c1, 'eth0', { ...made, ips: [...made.ips!, { interface: 1, address: '10.1.1.3/24' }] })).rejects.toEqual(check('address 10.1.1.3/24 is missing on eth0'));
    await expect(checkInterface(c1, 'eth0', made, { kind: 'bridge' })).rejects.toEqual(check('is a veth, not a bridge'));
    await expect(checkInterface(c1, 'eth1', { ...made, interfaces: [{ name: 'eth1' }], ips: [] })).rejects.toEqual(check(`interface eth1 is missing in ${c1.path}`));
    const nl = await openNetlink(c1);
    try {
      await nl.routes.delete({ destination: '10.9.0.0/16', gateway: '10.1.1.1', table: 100 });
    } finally {
      nl.close();
    }
    await expect(checkRoutes(c1, made)).rejects.toEqual(check('route to 10.9.0.0/16 via 10.1.1.1 is missing'));
  });

  it('enableForward turns forwarding on where it is off, and never back', async () => {
    const c2 = network.hosts.c2;
    await c2.sysctl.set('net/ipv4/ip_forward', 0);
    await c2.sysctl.set('net/ipv6/conf/all/forwarding', 1);
    expect(await enableForward(c2, familiesOf([{ address: '10.1.1.2/24' }, { address: 'fd00::2/64' }]))).toEqual([4]);
    expect(await c2.sysctl.get('net/ipv4/ip_forward')).toBe('1');
    expect(await c2.sysctl.get('net/ipv6/conf/all/forwarding')).toBe('1');
    expect(await enableForward(c2, [4, 6])).toEqual([]);
  });

  it('addMasquerade makes one rule per address that `nft list ruleset` shows as written; deleteMasquerade takes them away', async () => {
    const attachment = { network: 'plumb-net', containerID: 'ctr-1', ifname: 'eth0' };
    await addMasquerade(host, attachment, ['10.1.1.2/24', 'fd00:1::2/64']);
    await addMasquerade(host, attachment, ['10.1.1.2/24', 'fd00:1::2/64']); // again: replaced, not doubled
    const tag = masqueradeComment('plumb-net', attachment);
    const { stdout } = await host.execFile('nft', ['list', 'ruleset']);
    expect(stdout).toBe(
      masqueradeListing([
        `ip saddr 10.1.1.2 ip daddr != 10.1.1.0/24 masquerade comment "${tag}"`,
        `ip6 saddr fd00:1::2 ip6 daddr != fd00:1::/64 masquerade comment "${tag}"`,
      ]),
    );
    // And it masquerades: the container reaches a namespace beyond the host, which sees the host's address.
    await enableForward(host, [4]);
    const server = net.createServer((socket) => socket.end(String(socket.remoteAddress)));
    await network.hosts.out.listen(server, { host: '10.77.0.2', port: 0 });
    try {
      const socket = await c1.connect({ host: '10.77.0.2', port: (server.address() as net.AddressInfo).port });
      const chunks: Buffer[] = [];
      for await (const chunk of socket) chunks.push(chunk as Buffer);
      expect(Buffer.concat(chunks).toString()).toBe('10.77.0.1');
    } finally {
      server.close();
    }
    expect(await deleteMasquerade(host, attachment)).toBe(2);
    expect(await deleteMasquerade(host, attachment)).toBe(0);
    expect(await listMasquerade(host, 'plumb-net')).toEqual([]);
    expect((await host.execFile('nft', ['list', 'chain', 'inet', 'cni_plugins_masquerade', 'masq_checks'])).stdout).not.toContain('masquerade comment');
  });

  it("GC removes network A's stale host veths and masquerade rules, keeps A's valid attachments and all of B's, and refuses to run without a list", async () => {
    const { c2, c3 } = network.hosts;
    const a1 = { containerID: 'ctr-a1', ifname: 'eth1' };
    const a2 = { containerID: 'ctr-a2', ifname: 'eth1' };
    const b1 = { containerID: 'ctr-b1', ifname: 'eth2' };
    const made = {
      a1: await setupVeth({ containerNs: c2, ifname: 'eth1', hostNs: host, hostAlias: hostAlias('net-a', a1) }),
      a2: await setupVeth({ containerNs: c3, ifname: 'eth1', hostNs: host, hostAlias: hostAlias('net-a', a2) }),
      b1: await setupVeth({ containerNs: c3, ifname: 'eth2', hostNs: host, hostAlias: hostAlias('net-b', b1) }),
    };
    await addMasquerade(host, { network: 'net-a', ...a1 }, ['10.5.0.2/24']);
    await addMasquerade(host, { network: 'net-a', ...a2 }, ['10.5.0.3/24']);
    await addMasquerade(host, { network: 'net-b', ...b1 }, ['10.6.0.2/24']);
    const hostLinks = () => linkNames(host);

    await expect(collectGarbage({ hostNs: host, network: 'net-a', validAttachments: undefined as never })).rejects.toMatchObject({ code: 'ERR_NETNS_INVALID_ARG' });
    Object.defineProperty(Object.prototype, 'validAttachments', { value: [], configurable: true }); // a polluted prototype is no list either
    try {
      await expect(collectGarbage({ hostNs: host, network: 'net-a' } as never)).rejects.toMatchObject({ code: 'ERR_NETNS_INVALID_ARG' });
    } finally {
      delete (Object.prototype as Record<string, unknown>).validAttachments;
    }
    expect(await hostLinks()).toEqual(expect.arrayContaining([made.a1.host.name, made.a2.host.name, made.b1.host.name]));

    const report = await collectGarbage({ hostNs: host, network: 'net-a', validAttachments: [a1] });
    expect(report.errors).toEqual([]);
    expect(report.removed.map((r) => [r.kind, r.kind === 'veth' ? r.name : 'rule'])).toEqual([
      ['veth', made.a2.host.name],
      ['masquerade', 'rule'],
    ]);
    const links = await hostLinks();
    expect(links).toEqual(expect.arrayContaining([made.a1.host.name, made.b1.host.name, veth.host.name]));
    expect(links).not.toContain(made.a2.host.name);
    const inside = await openNetlink(c3);
    try {
      expect((await inside.links.list()).map((l) => l.name).sort()).toEqual(['eth2', 'lo']); // a2's container end went with its peer
    } finally {
      inside.close();
    }
    expect((await listMasquerade(host, 'net-a')).map((r) => r.comment)).toEqual([masqueradeComment('net-a', a1)]);
    expect((await listMasquerade(host, 'net-b')).map((r) => r.comment)).toEqual([masqueradeComment('net-b', b1)]);

    const none = await collectGarbage({ hostNs: host, network: 'net-a', validAttachments: [] });
    expect(none.removed.map((r) => r.kind)).toEqual(['veth', 'masquerade']);
    expect(await listMasquerade(host, 'net-b')).toHaveLength(1);
    expect(await hostLinks()).toContain(made.b1.host.name);
  });
  it('GC goes on past failures and returns them all', async () => {
    const gone = await createTestNetwork({ prefix: `nsplumbgone-${randomBytes(2).toString('hex')}-`, hosts: { h: {} } });
    const closed = gone.hosts.h;
    await gone.delete(); // its NetNS handle is closed: every step fails
    const report = await collectGarbage({ hostNs: closed, network: 'net-a', validAttachments: [] });
    expect(report).toEqual({ removed: [], errors: [expect.objectContaining({ code: 'ERR_NETNS_CLOSED' }), expect.objectContaining({ code: 'ERR_NETNS_CLOSED' })] });
  });

  it.skipIf(!haveGoPtp)("matches the official Go ptp plugin's plumbing: its veth as setupVeth makes one, and the CHECK helpers accept its container", async () => {
    const { c4, c5 } = network.hosts;
    const dataDir = mkdtempSync(join(tmpdir(), 'nsplumb-ipam-'));
    const config = { cniVersion: '1.0.0', name: 'goptp', type: 'ptp', mtu: 1400, ipam: { type: 'host-local', subnet: '10.44.0.0/24', dataDir, routes: [{ dst: '0.0.0.0/0' }] } };
    const env = (command: string) => ({ CNI_COMMAND: command, CNI_CONTAINERID: 'ctr-go', CNI_NETNS: c4.path, CNI_IFNAME: 'eth0', CNI_PATH: GO_PLUGINS, PATH: process.env.PATH ?? '' });
    try {
      const added = JSON.parse((await host.execFile(`${GO_PLUGINS}/ptp`, [], { env: env('ADD'), input: JSON.stringify(config) })).stdout) as Result;
      expect(added).toMatchObject({ interfaces: [{ name: expect.stringMatching(/^veth[0-9a-f]{8}$/) }, { name: 'eth0', sandbox: c4.path }], ips: [{ address: '10.44.0.2/24', gateway: '10.44.0.1', interface: 1 }] });
      // Its plumbing passes our CHECK helpers, as it passes its own CHECK.
      await checkInterface(c4, 'eth0', added, { kind: 'veth' });
      await checkRoutes(c4, added);
      // Our pair for the same result, side by side with Go's.
      const ours = await setupVeth({ containerNs: c5, ifname: 'eth0', mtu: 1400, hostNs: host });
      await configureInterface(c5, 'eth0', { ...added, interfaces: [ours.host, ours.container] });
      const describeEnds = async (hostName: string, container: NetNS) => {
        const nl = await openNetlink(host);
        const inside = await openNetlink(container);
        try {
          const h = await nl.links.get(hostName);
          const c = await inside.links.get('eth0');
          const addresses = (await inside.addresses.list({ link: 'eth0', family: 4 })).map((a) => `${a.address}/${a.prefixLength}`);
          return { host: [h.kind, h.mtu, h.up, await host.sysctl.get(`net/ipv6/conf/${hostName}/accept_ra`)], container: [c.kind, c.mtu, c.up, addresses] };
        } finally {
          nl.close();
          inside.close();
        }
      };
      expect(await describeEnds(ours.host.name, c5)).toEqual(await describeEnds(added.interfaces![0]!.name, c4));
      await host.execFile(`${GO_PLUGINS}/ptp`, [], { env: env('DEL'), input: JSON.stringify(config) });
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
