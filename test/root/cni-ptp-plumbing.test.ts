// The cni-ptp example beside Debian's Go ptp (1.1.1) on the same dual-stack configuration:
// both ends of the pair as `ip -d -j link/addr/route` shows them must be the
// same field for field (names, MACs and the MAC-derived link-local addresses
// aside), the IPv4 broadcast on the container's address and the veths'
// txqueuelen included. And a 1.1.0 conflist, which host-local 1.1.1 refuses,
// still adds, checks and deletes, its result's interfaces carrying the MTU set.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { NetNS } from '../../dist/index.js';
import { createTestNetwork, type TestNetwork } from '../../dist/testing.js';
import { privileged } from '../helpers/privileges.js';
import { attach, haveGoPlugins, ipJson, run, untilDadDone, type Plugin } from '../helpers/cni-ptp.js';

type Hosts = 'goHost' | 'host' | 'goC' | 'c1' | 'c2';
type Json = Record<string, unknown>;

/**
 * What differs between any two attachments: names, MACs, indexes, our alias; carrier, which the
 * kernel reports a moment late; and IPv6 DAD on the host end's gateway, which Go leaves running
 * (tentative) and we skip (nodad: see the example's point-to-point.ts).
 */
const VOLATILE = new Set(['ifindex', 'ifname', 'address', 'link_index', 'link_netnsid', 'ifalias', 'flags', 'operstate', 'label', 'stats64', 'tentative', 'nodad']);

/** `ip -d -j` output with the volatile fields gone and link-local (MAC-derived) addresses dropped. */
function comparable(value: unknown): unknown {
  if (Array.isArray(value)) return value.filter((item) => (item as Json)?.scope !== 'link' || (item as Json).family !== 'inet6').map(comparable);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(Object.entries(value).filter(([key]) => !VOLATILE.has(key)).map(([key, v]) => [key, comparable(v)]));
}

/** Every route of every table, the host veth's name written VETH and kernel link-local ones left out. */
async function allRoutes(ns: NetNS, veth: string): Promise<string[]> {
  const routes = [...(await ipJson(ns, '-d', '-4', 'route', 'show', 'table', 'all')), ...(await ipJson(ns, '-d', '-6', 'route', 'show', 'table', 'all'))];
  return routes
    .filter((r) => !String(r.dst).startsWith('fe80:'))
    .map((r) => JSON.stringify({ ...r, dev: r.dev === veth ? 'VETH' : r.dev }))
    .sort();
}

describe.skipIf(!privileged || !haveGoPlugins)('cni-ptp plumbing beside the Go ptp', () => {
  let network: TestNetwork<Hosts>;
  let hosts: TestNetwork<Hosts>['hosts'];
  const tag = randomBytes(3).toString('hex');
  const dataDirs: string[] = [];
  const added: [NetNS, Plugin, NetNS, string, object][] = [];

  /** A host-local state directory of its own, removed after the suite. */
  const newDataDir = (): string => {
    const dir = mkdtempSync(join(tmpdir(), `netns-cni-plumbing-${tag}-`));
    dataDirs.push(dir);
    return dir;
  };
  const conf = (cniVersion: string, name: string, subnet: string, subnet6: string, dataDir = newDataDir()) => ({
    cniVersion,
    name,
    type: 'ptp',
    mtu: 1400,
    dataDir: newDataDir(), // cni-ptp's records (Go's ptp ignores the key)
    ipam: { type: 'host-local', ranges: [[{ subnet }], [{ subnet: subnet6 }]], dataDir },
  });

  /** ADD, remembered so that it is deleted after the test, passed or failed. */
  const add = (host: NetNS, plugin: Plugin, container: NetNS, id: string, config: object) => {
    added.push([host, plugin, container, id, config]);
    return run(host, plugin, attach('ADD', container, id), config);
  };

  beforeAll(async () => {
    network = await createTestNetwork({ prefix: `cniplumb-${tag}-`, hosts: { goHost: {}, host: {}, goC: {}, c1: {}, c2: {} } });
    hosts = network.hosts;
    for (const h of [hosts.goHost, hosts.host]) await h.execFile('ip', ['link', 'set', 'lo', 'up']);
  });

  afterEach(async () => {
    for (const [host, plugin, container, id, config] of added.splice(0)) await run(host, plugin, attach('DEL', container, id), config);
  });

  afterAll(async () => {
    await network?.delete();
    for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
  });

  it('both ends are as the Go ptp makes them: broadcast on the container address, txqueuelen, and every other field of link, addr and route', async () => {
    const config = conf('1.0.0', `same-${tag}`, '10.31.0.0/24', 'fd31::/64');
    const go = await add(hosts.goHost, 'go', hosts.goC, 'ctr-plumb', { ...config, ipam: { ...config.ipam, dataDir: newDataDir() } });
    const ours = await add(hosts.host, 'ours', hosts.c1, 'ctr-plumb', config);
    expect(go).toMatchObject({ code: 0 });
    expect(ours).toMatchObject({ code: 0, stderr: '' });
    const [goVeth] = await ipJson(hosts.goHost, 'link', 'show', 'type', 'veth');
    const [ourVeth] = await ipJson(hosts.host, 'link', 'show', 'type', 'veth');

    const [goAddr] = await ipJson(hosts.goC, '-d', 'addr', 'show', 'dev', 'eth0');
    const [ourAddr] = await ipJson(hosts.c1, '-d', 'addr', 'show', 'dev', 'eth0');
    expect((goAddr!.addr_info as Json[])[0]).toMatchObject({ local: '10.31.0.2', prefixlen: 24, broadcast: '10.31.0.255' });
    expect((ourAddr!.addr_info as Json[])[0]).toMatchObject({ local: '10.31.0.2', prefixlen: 24, broadcast: '10.31.0.255' });
    expect(ourAddr!.txqlen).toBe(goAddr!.txqlen); // `ip -j` leaves txqlen out when it is 0, as Go's are
    expect(comparable(ourAddr)).toEqual(comparable(goAddr));

    const ends: [NetNS, NetNS, string, string][] = [
      [hosts.goC, hosts.c1, 'eth0', 'eth0'],
      [hosts.goHost, hosts.host, goVeth!.ifname as string, ourVeth!.ifname as string],
    ];
    for (const [goNs, ourNs, goDev, ourDev] of ends) {
      for (const what of ['link', 'addr']) {
        const [theirs] = await ipJson(goNs, '-d', what, 'show', 'dev', goDev);
        const [mine] = await ipJson(ourNs, '-d', what, 'show', 'dev', ourDev);
        expect({ dev: ourDev === 'eth0' ? 'container' : 'host', what, ...(comparable(mine) as Json) }).toEqual({ dev: ourDev === 'eth0' ? 'container' : 'host', what, ...(comparable(theirs) as Json) });
      }
    }
    // Go leaves DAD running on the host end's gateway, and the kernel adds an address's local route
    // only when DAD is over: compare the routes as they are once every address has settled.
    for (const ns of [hosts.goHost, hosts.host, hosts.goC, hosts.c1]) await untilDadDone(ns);
    expect(await allRoutes(hosts.c1, 'eth0')).toEqual(await allRoutes(hosts.goC, 'eth0'));
    expect(await allRoutes(hosts.host, ourVeth!.ifname as string)).toEqual(await allRoutes(hosts.goHost, goVeth!.ifname as string));

    // A 1.0.0 result has no interfaces[].mtu (a 1.1 field), as Go's has none.
    expect((ours.json!.interfaces as Json[]).map(Object.keys)).toEqual((go.json!.interfaces as Json[]).map(Object.keys));
    expect(Object.keys(ours.json!)).toEqual(Object.keys(go.json!));
  });

  it('a 1.1.0 conflist adds, checks and deletes with host-local 1.1.1 (which speaks 1.0.0), the result carrying each end\'s MTU, and frees the address', async () => {
    const config = conf('1.1.0', `v11-${tag}`, '10.32.0.0/24', 'fd32::/64');
    const added11 = await add(hosts.host, 'ours', hosts.c2, 'ctr-v11', config);
    expect(added11).toMatchObject({ code: 0, stderr: '' });
    const [veth] = await ipJson(hosts.host, 'link', 'show', 'type', 'veth');
    expect(added11.json).toMatchObject({
      cniVersion: '1.1.0',
      interfaces: [{ name: veth!.ifname, mtu: 1400 }, { name: 'eth0', mtu: 1400, sandbox: hosts.c2.path }],
      ips: [{ interface: 1, address: '10.32.0.2/24', gateway: '10.32.0.1' }, { interface: 1, address: 'fd32::2/64', gateway: 'fd32::1' }],
    });
    const ipamDir = join(config.ipam.dataDir, config.name);
    expect(readdirSync(ipamDir)).toEqual(expect.arrayContaining(['10.32.0.2', 'fd32::2']));

    expect(await run(hosts.host, 'ours', attach('CHECK', hosts.c2, 'ctr-v11'), { ...config, prevResult: added11.json })).toMatchObject({ code: 0, stdout: '' });
    expect(await run(hosts.host, 'ours', attach('DEL', hosts.c2, 'ctr-v11'), config)).toMatchObject({ code: 0, stdout: '' });
    expect(readdirSync(ipamDir).filter((f) => f === '10.32.0.2' || f === 'fd32::2')).toEqual([]);
    expect(await ipJson(hosts.c2, 'link', 'show', 'type', 'veth')).toEqual([]);
  });
});
