// The cni-ptp example plugin, run as a runtime runs it (CNI_* variables,
// configuration on stdin, in the namespace that stands for the host), side
// by side with the official Go ptp plugin (Debian's containernetworking-plugins)
// on the same configuration with only `type` changed: the same container and
// host plumbing and a result of the same shape, plus an address set per
// attachment. Each defect the earlier example had is a case here.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { NetNS } from '../../dist/index.js';
import { AddressSets } from '../../dist/addrset/index.js';
import { attachmentKey, hostEndNames } from '../../dist/cni/identity.js';
import { deleteMasquerade } from '../../dist/cni/masquerade.js';
import { createTestNetwork, ManualClock, type TestNetwork } from '../../dist/testing.js';
import { attach, GO_PLUGINS, haveGoPlugins, ipJson, run, type PluginRun } from '../helpers/cni-ptp.js';
import { pathWithout, type BarePath } from '../helpers/path-without.js';
import { privileged } from '../helpers/privileges.js';
import { tcpHello } from '../helpers/tcp-hello.js';

/** Containers for the parallel case: one attachment of a network per container, as ptp's routes allow. */
const PARALLEL = Array.from({ length: 24 }, (_, i) => `p${i}` as const);
type Hosts = 'goHost' | 'host' | 'goC' | 'c1' | 'c2' | 'c3' | 'c4' | (typeof PARALLEL)[number];

/** Routes as comparable lines, the host veth's name (random in Go's) written VETH. */
async function routeLines(ns: NetNS, family: '-4' | '-6', hostVeth?: string): Promise<string[]> {
  const routes = await ipJson(ns, family, 'route', 'show');
  return routes
    .map((r) => [r.dst, r.gateway && `via ${r.gateway}`, `dev ${r.dev === hostVeth ? 'VETH' : r.dev}`, `scope ${r.scope ?? 'global'}`, r.prefsrc && `src ${r.prefsrc}`, r.protocol && `proto ${r.protocol}`].filter(Boolean).join(' '))
    .sort();
}

async function addressesOf(ns: NetNS, device: string): Promise<string[]> {
  const [link] = await ipJson(ns, 'addr', 'show', 'dev', device);
  return ((link!.addr_info as { local: string; prefixlen: number; scope: string }[]) ?? []).filter((a) => a.scope !== 'link').map((a) => `${a.local}/${a.prefixlen}`).sort();
}

async function vethNames(ns: NetNS): Promise<string[]> {
  return (await ipJson(ns, 'link', 'show', 'type', 'veth')).map((link) => link.ifname as string).sort();
}

async function tableExists(ns: NetNS, table: string): Promise<boolean> {
  const { stdout } = await ns.execFile('nft', ['-j', 'list', 'tables']);
  return (JSON.parse(stdout).nftables as { table?: { name: string } }[]).some((entry) => entry.table?.name === table);
}

describe.skipIf(!privileged || !haveGoPlugins)('the cni-ptp example plugin beside the official ptp', () => {
  let network: TestNetwork<Hosts>;
  let hosts: TestNetwork<Hosts>['hosts'];
  const dataDirs: string[] = [];
  const tag = randomBytes(3).toString('hex');
  let bare: BarePath;

  /** A ptp configuration as the official plugin documents it, with its own host-local data directory. */
  const conf = (name: string, subnet: string, extra: Record<string, unknown> = {}) => {
    const dataDir = mkdtempSync(join(tmpdir(), `netns-cni-ptp-${tag}-`));
    dataDirs.push(dataDir);
    // The plugin's attachment records (`dataDir`, which Go's ptp ignores) beside host-local's files.
    return { cniVersion: '1.0.0', name, type: 'ptp', ipMasq: true, mtu: 1400, dataDir: join(dataDir, 'ptp'), ipam: { type: 'host-local', subnet, dataDir, routes: [{ dst: '0.0.0.0/0' }, { dst: '192.168.128.0/24' }] }, dns: { nameservers: ['10.1.0.1'] }, ...extra };
  };

  beforeAll(async () => {
    network = await createTestNetwork({ prefix: `cniptp-${tag}-`, hosts: { goHost: {}, host: {}, goC: {}, c1: {}, c2: {}, c3: {}, c4: {}, ...Object.fromEntries(PARALLEL.map((p) => [p, {}])) } as Record<Hosts, object> });
    hosts = network.hosts;
    for (const h of [hosts.goHost, hosts.host]) await h.execFile('ip', ['link', 'set', 'lo', 'up']);
    bare = pathWithout('ip', 'nft', 'iptables', 'sysctl');
  });

  // Whatever a test added is deleted after it, passed or failed, so one failure does not spread.
  const added: [NetNS, string, object | string][] = [];
  const added_: [{ c: NetNS; id: string; ifname: string }, object][] = [];
  afterEach(async () => {
    for (const [container, id, config] of added.splice(0)) await run(hosts.host, 'ours', attach('DEL', container, id), config);
    for (const [a, config] of added_.splice(0)) await run(hosts.host, 'ours', attach('DEL', a.c, a.id, a.ifname), config);
  });

  /** ADD by our plugin, remembered for the cleanup. */
  const add = (container: NetNS, id: string, config: object | string, path?: string): Promise<PluginRun> => {
    added.push([container, id, config]);
    return run(hosts.host, 'ours', attach('ADD', container, id), config, path);
  };

  afterAll(async () => {
    bare?.dispose();
    await network?.delete();
    for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
  });

  it('the same configuration gives the same plumbing and result as the Go plugin, with no ip, nft or sysctl process', async () => {
    const config = conf(`same-${tag}`, '10.1.0.0/24');
    for (const h of [hosts.goHost, hosts.host]) await h.sysctl.set('net/ipv4/ip_forward', 0);
    const goDataDir = mkdtempSync(join(tmpdir(), `netns-cni-ptp-${tag}-go-`));
    dataDirs.push(goDataDir);
    const goConfig = { ...config, ipam: { ...config.ipam, dataDir: goDataDir } };
    const go = await run(hosts.goHost, 'go', attach('ADD', hosts.goC, 'ctr-same'), goConfig);
    const ours = await add(hosts.c1, 'ctr-same', config, bare.path);
    expect(go).toMatchObject({ code: 0 });
    expect(ours).toMatchObject({ code: 0, stderr: '' });

    const shape = (result: Record<string, unknown>, container: NetNS) => ({
      ...result,
      interfaces: (result.interfaces as { name: string; mac: string; sandbox?: string }[]).map((i) => ({ ...i, name: i.sandbox ? i.name : 'VETH', mac: /^([0-9a-f]{2}:){5}[0-9a-f]{2}$/.test(i.mac) ? 'MAC' : i.mac, sandbox: i.sandbox === container.path ? 'SANDBOX' : i.sandbox })),
    });
    expect(shape(ours.json!, hosts.c1)).toEqual(shape(go.json!, hosts.goC));
    expect(ours.json).toMatchObject({
      cniVersion: '1.0.0',
      ips: [{ interface: 1, address: '10.1.0.2/24', gateway: '10.1.0.1' }],
      routes: [{ dst: '0.0.0.0/0' }, { dst: '192.168.128.0/24' }],
      dns: { nameservers: ['10.1.0.1'] },
    });

    // The container: its address, MTU and routes (the kernel's subnet route replaced by the gateway's).
    expect(await routeLines(hosts.c1, '-4')).toEqual(await routeLines(hosts.goC, '-4'));
    expect(await routeLines(hosts.c1, '-4')).toEqual([
      '10.1.0.0/24 via 10.1.0.1 dev eth0 scope global src 10.1.0.2',
      '10.1.0.1 dev eth0 scope link src 10.1.0.2',
      '192.168.128.0/24 via 10.1.0.1 dev eth0 scope global',
      'default via 10.1.0.1 dev eth0 scope global',
    ]);
    expect(await addressesOf(hosts.c1, 'eth0')).toEqual(await addressesOf(hosts.goC, 'eth0'));
    const mtu = async (ns: NetNS, dev: string) => (await ipJson(ns, 'link', 'show', 'dev', dev))[0]!.mtu;
    expect(await mtu(hosts.c1, 'eth0')).toBe(1400);

    // The host: the gateway on the host end, a host route to the container, forwarding on.
    const [goVeth] = await vethNames(hosts.goHost);
    const [ourVeth] = await vethNames(hosts.host);
    // Named from the attachment, in the message that made it (the kernel takes no alias there).
    expect(ourVeth).toBe(hostEndNames(attachmentKey(`same-${tag}`, { containerID: 'ctr-same', ifname: 'eth0' }))[0]);
    expect(await routeLines(hosts.host, '-4', ourVeth)).toEqual(await routeLines(hosts.goHost, '-4', goVeth));
    expect(await routeLines(hosts.host, '-4', ourVeth)).toEqual(['10.1.0.2 dev VETH scope host']);
    expect(await addressesOf(hosts.host, ourVeth!)).toEqual(await addressesOf(hosts.goHost, goVeth!));
    expect(await mtu(hosts.host, ourVeth!)).toBe(await mtu(hosts.goHost, goVeth!));
    expect(await hosts.host.sysctl.get('net/ipv4/ip_forward')).toBe('1');

    // Traffic: the host reaches the container, and the container its gateway.
    expect(await tcpHello(hosts.c1, '10.1.0.2', hosts.host)).toBe('hello');
    expect(await tcpHello(hosts.host, '10.1.0.1', hosts.c1)).toBe('hello');

    // Beyond ptp: the attachment's address set, in the network's table.
    const sets = await AddressSets.open({ netns: hosts.host, table: `cni_ptp_${attachmentKey(`same-${tag}`, { containerID: 'ctr-same', ifname: 'eth0' }).slice(0, 16)}`, readOnly: true });
    const owner = attachmentKey(`same-${tag}`, { containerID: 'ctr-same', ifname: 'eth0' });
    expect(await sets.inspect(owner)).toMatchObject({ state: 'orphan', v4: { elements: ['10.1.0.2'] } });

    const prevResult = ours.json;
    expect(await run(hosts.host, 'ours', attach('CHECK', hosts.c1, 'ctr-same'), { ...config, prevResult }, bare.path)).toMatchObject({ code: 0, stdout: '' });
    expect(await run(hosts.host, 'ours', attach('DEL', hosts.c1, 'ctr-same'), config, bare.path)).toMatchObject({ code: 0, stdout: '' });
    expect(await run(hosts.host, 'ours', attach('DEL', hosts.c1, 'ctr-same'), config, bare.path)).toMatchObject({ code: 0, stdout: '' });
    expect(await run(hosts.goHost, 'go', attach('DEL', hosts.goC, 'ctr-same'), goConfig)).toMatchObject({ code: 0 });
    expect(readdirSync(join(goDataDir, `same-${tag}`)).filter((file) => /^\d+\.\d+\.\d+\.\d+$/.test(file))).toEqual([]); // Go's host-local released its address
    expect(await vethNames(hosts.host)).toEqual([]);
    expect(await ipJson(hosts.c1, 'link', 'show', 'type', 'veth')).toEqual([]);
    expect(await sets.inspect(owner)).toMatchObject({ state: 'pending', v4: { elements: [] } });
    await sets.close();
    // host-local released the address: only its bookkeeping files are left.
    expect(readdirSync(join(config.ipam.dataDir, config.name)).filter((f) => f !== 'lock' && !f.startsWith('last_reserved_ip'))).toEqual([]);
  });

  it('containers of one network reach each other through the host', async () => {
    const config = conf(`pair-${tag}`, '10.2.0.0/24');
    expect((await add(hosts.c1, 'ctr-a', config)).code).toBe(0);
    expect((await add(hosts.c2, 'ctr-b', config)).code).toBe(0);
    expect(await tcpHello(hosts.c2, '10.2.0.3', hosts.c1)).toBe('hello');
    for (const [c, id] of [[hosts.c1, 'ctr-a'], [hosts.c2, 'ctr-b']] as const) expect((await run(hosts.host, 'ours', attach('DEL', c, id), config)).code).toBe(0);
  });

  it('results at 0.4.0 carry ips[].version; CHECK below 0.4.0 and GC/STATUS below 1.1.0 are refused', async () => {
    const config = conf(`v040-${tag}`, '10.3.0.0/24', { cniVersion: '0.4.0' });
    const added = await add(hosts.c1, 'ctr-v', config);
    expect(added.json).toMatchObject({ cniVersion: '0.4.0', ips: [{ version: '4', interface: 1, address: '10.3.0.2/24', gateway: '10.3.0.1' }] });
    expect(await run(hosts.host, 'ours', attach('CHECK', hosts.c1, 'ctr-v'), { ...config, prevResult: added.json })).toMatchObject({ code: 0 });
    const old = await run(hosts.host, 'ours', attach('CHECK', hosts.c1, 'ctr-v'), { ...config, cniVersion: '0.3.1', prevResult: added.json });
    expect(old.json).toMatchObject({ code: 1, msg: 'config version does not allow CHECK' });
    const gc = await run(hosts.host, 'ours', { CNI_COMMAND: 'GC' }, { ...config, cniVersion: '1.0.0', 'cni.dev/valid-attachments': [] });
    expect(gc.json).toMatchObject({ code: 1, msg: 'config version does not allow GC' });
    expect((await run(hosts.host, 'ours', { CNI_COMMAND: 'STATUS' }, { ...config, cniVersion: '1.0.0' })).json).toMatchObject({ code: 1 });
    expect((await run(hosts.host, 'ours', attach('DEL', hosts.c1, 'ctr-v'), config)).code).toBe(0);
  });

  it('a previous result is passed on: lo\'s addresses from the loopback plugin stay in the result', async () => {
    const config = conf(`chain-${tag}`, '10.4.0.0/24');
    const { stdout } = await hosts.host.execFile(`${GO_PLUGINS}/loopback`, [], { env: { ...attach('ADD', hosts.c3, 'ctr-l'), CNI_PATH: GO_PLUGINS }, input: JSON.stringify({ cniVersion: '1.0.0', name: config.name, type: 'loopback' }) });
    const prevResult = JSON.parse(stdout) as { interfaces: unknown[]; ips: { interface: number }[] };
    const added = await add(hosts.c3, 'ctr-l', { ...config, prevResult });
    expect(added.code).toBe(0);
    const result = added.json as { interfaces: { name: string; sandbox?: string }[]; ips: { interface: number; address: string }[] };
    expect(result.interfaces.map((i) => i.name)).toEqual(['lo', expect.stringMatching(/^veth/), 'eth0']);
    expect(result.ips).toEqual([...prevResult.ips, expect.objectContaining({ interface: 2, address: '10.4.0.2/24' })]);
    expect(await run(hosts.host, 'ours', attach('CHECK', hosts.c3, 'ctr-l'), { ...config, prevResult: result })).toMatchObject({ code: 0 });
    expect((await run(hosts.host, 'ours', attach('DEL', hosts.c3, 'ctr-l'), config)).code).toBe(0);
  });

  it('CHECK notices a changed MAC and a container the host can no longer reach', async () => {
    const config = conf(`check-${tag}`, '10.5.0.0/24');
    const added = await add(hosts.c4, 'ctr-c', config);
    const check = () => run(hosts.host, 'ours', attach('CHECK', hosts.c4, 'ctr-c'), { ...config, prevResult: added.json });
    expect(await check()).toMatchObject({ code: 0 });
    await hosts.c4.execFile('ip', ['link', 'set', 'eth0', 'address', '02:00:00:00:00:42']);
    expect((await check()).json).toMatchObject({ code: 110, msg: expect.stringContaining('MAC 02:00:00:00:00:42') });
    const mac = (added.json!.interfaces as { mac: string }[])[1]!.mac;
    await hosts.c4.execFile('ip', ['link', 'set', 'eth0', 'address', mac]);
    expect(await check()).toMatchObject({ code: 0 });
    expect(await deleteMasquerade(hosts.host, { network: config.name, containerID: 'ctr-c', ifname: 'eth0' })).toBe(1);
    expect((await check()).json).toMatchObject({ code: 110, msg: expect.stringContaining('no masquerade rule') });
    const [veth] = await vethNames(hosts.host);
    await hosts.host.execFile('ip', ['route', 'del', '10.5.0.2', 'dev', veth!]);
    expect((await check()).json).toMatchObject({ code: 110, msg: `CHECK: no host route to 10.5.0.2 through ${veth}` });
    await hosts.host.execFile('ip', ['link', 'set', veth!, 'down']);
    expect((await check()).json).toMatchObject({ code: 110, msg: `CHECK: the host end ${veth} is down` });
    expect((await run(hosts.host, 'ours', attach('DEL', hosts.c4, 'ctr-c'), config)).code).toBe(0);
  });

  it('GC collects one network\'s attachments not listed, and never another network\'s', async () => {
    const a = conf(`gca-${tag}`, '10.6.0.0/24');
    const b = conf(`gcb-${tag}`, '10.7.0.0/24');
    // ADD at 1.0.0 (Debian's host-local speaks no 1.1.0), GC at 1.1.0, as a runtime with a conflist of both would.
    expect((await add(hosts.c1, 'ctr-a1', a)).code).toBe(0);
    expect((await add(hosts.c2, 'ctr-a2', a)).code).toBe(0);
    expect((await add(hosts.c3, 'ctr-b1', b)).code).toBe(0);
    const before = await vethNames(hosts.host);
    expect(before).toHaveLength(3);
    // No list: nothing goes.
    expect(await run(hosts.host, 'ours', { CNI_COMMAND: 'GC' }, { ...a, cniVersion: '1.1.0' })).toMatchObject({ code: 0 });
    expect(await vethNames(hosts.host)).toEqual(before);
    const valid = [{ containerID: 'ctr-a1', ifname: 'eth0' }];
    expect(await run(hosts.host, 'ours', { CNI_COMMAND: 'GC' }, { ...a, cniVersion: '1.1.0', 'cni.dev/valid-attachments': valid })).toMatchObject({ code: 0, stdout: '' });
    expect(await vethNames(hosts.host)).toHaveLength(2);
    expect(await ipJson(hosts.c2, 'link', 'show', 'type', 'veth')).toEqual([]);
    expect((await ipJson(hosts.c3, 'link', 'show', 'type', 'veth')).map((l) => l.ifname)).toEqual(['eth0']);
    const nat = (await hosts.host.execFile('nft', ['list', 'chain', 'inet', 'cni_plugins_masquerade', 'masq_checks'])).stdout;
    expect(nat).toContain('ip saddr 10.6.0.2 ');
    expect(nat).not.toContain('ip saddr 10.6.0.3 ');
    expect(nat).toContain('ip saddr 10.7.0.2 ');
    const ownersOf = async (name: string) => {
      const sets = await AddressSets.open({ netns: hosts.host, table: `cni_ptp_${attachmentKey(name, valid[0]!).slice(0, 16)}`, readOnly: true });
      try {
        return new Set((await sets.list()).map((row) => row.owner));
      } finally {
        await sets.close();
      }
    };
    expect(await ownersOf(a.name)).toEqual(new Set([attachmentKey(a.name, valid[0]!)]));
    expect(await ownersOf(b.name)).toEqual(new Set([attachmentKey(b.name, { containerID: 'ctr-b1', ifname: 'eth0' })]));
    for (const [c, id, config] of [[hosts.c1, 'ctr-a1', a], [hosts.c3, 'ctr-b1', b]] as const) expect((await run(hosts.host, 'ours', attach('DEL', c, id), config)).code).toBe(0);
  });

  it('a deleted attachment\'s set waits for its delay, and a later ADD destroys it once the delay is over', async () => {
    const config = conf(`delay-${tag}`, '10.11.0.0/24');
    const key = (id: string) => attachmentKey(config.name, { containerID: id, ifname: 'eth0' });
    const table = `cni_ptp_${key('x').slice(0, 16)}`;
    expect((await add(hosts.c1, 'ctr-d1', config)).code).toBe(0);
    expect((await run(hosts.host, 'ours', attach('DEL', hosts.c1, 'ctr-d1'), config)).code).toBe(0);
    expect((await add(hosts.c2, 'ctr-d2', config)).code).toBe(0);
    const sets = await AddressSets.open({ netns: hosts.host, table, readOnly: true });
    try {
      expect((await sets.inspect(key('ctr-d1'))).state).toBe('pending'); // 20 s ahead: the ADD kept it
      // The same delete recorded an hour ago (by a process whose clock says so): due now.
      const past = await AddressSets.open({ netns: hosts.host, table, clock: new ManualClock(Date.now() - 3_600_000) });
      await past.ensure(key('ctr-d1'));
      await past.delete(key('ctr-d1'));
      await past.close();
      expect((await add(hosts.c3, 'ctr-d3', config)).code).toBe(0);
      expect((await sets.inspect(key('ctr-d1'))).state).toBe('absent');
      expect(await sets.inspect(key('ctr-d2'))).toMatchObject({ state: 'orphan', v4: { elements: ['10.11.0.3'] } });
    } finally {
      await sets.close();
    }
  });

  it('parallel ADDs, CHECKs and DELs of one network\'s attachments all succeed, each set left as its attachment is', async () => {
    // Sets destroyed at once (no delay): the most churn for the others' reads.
    const config = conf(`par-${tag}`, '10.12.0.0/24', { addressSets: { deleteDelayMs: 0 } });
    const attachments = PARALLEL.map((name, i) => ({ c: hosts[name]!, id: `ctr-p${i}`, ifname: 'eth0' }));
    const env = (command: string, a: (typeof attachments)[number]) => attach(command, a.c, a.id, a.ifname);
    const added = await Promise.all(attachments.map((a) => {
      added_.push([a, config]);
      return run(hosts.host, 'ours', env('ADD', a), config);
    }));
    expect(added.map((r) => r.json?.msg ?? r.code)).toEqual(attachments.map(() => 0));
    const runs = await Promise.all(attachments.map((a, i) => (i % 6 === 5 ? run(hosts.host, 'ours', env('CHECK', a), { ...config, prevResult: added[i]!.json }) : run(hosts.host, 'ours', env('DEL', a), config))));
    expect(runs.map((r) => r.json ?? r.code)).toEqual(runs.map(() => 0));
    const sets = await AddressSets.open({ netns: hosts.host, table: `cni_ptp_${attachmentKey(config.name, { containerID: 'x', ifname: 'eth0' }).slice(0, 16)}`, readOnly: true });
    try {
      for (const [i, a] of attachments.entries()) {
        const details = await sets.inspect(attachmentKey(config.name, { containerID: a.id, ifname: a.ifname }));
        if (i % 6 === 5) expect(details.v4.elements).toHaveLength(1);
        else expect(details.state).toBe('absent');
      }
    } finally {
      await sets.close();
    }
  });

  it('networks sharing a table: one network\'s GC never destroys another\'s sets', async () => {
    const table = `cni_ptp_shared_${tag}`;
    const a = conf(`sha-${tag}`, '10.13.0.0/24', { addressSets: { table } });
    const b = conf(`shb-${tag}`, '10.14.0.0/24', { addressSets: { table } });
    expect((await add(hosts.c1, 'ctr-sa', a)).code).toBe(0);
    expect((await add(hosts.c2, 'ctr-sb', b)).code).toBe(0);
    const gc = (valid: object[]) => run(hosts.host, 'ours', { CNI_COMMAND: 'GC' }, { ...b, cniVersion: '1.1.0', 'cni.dev/valid-attachments': valid });
    expect(await gc([{ containerID: 'ctr-sb', ifname: 'eth0' }])).toMatchObject({ code: 0 });
    expect(await gc([])).toMatchObject({ code: 0 });
    const sets = await AddressSets.open({ netns: hosts.host, table, readOnly: true });
    try {
      expect(await sets.inspect(attachmentKey(a.name, { containerID: 'ctr-sa', ifname: 'eth0' }))).toMatchObject({ state: 'orphan', v4: { elements: ['10.13.0.2'] } });
      expect((await sets.inspect(attachmentKey(b.name, { containerID: 'ctr-sb', ifname: 'eth0' }))).state).toBe('absent');
    } finally {
      await sets.close();
    }
  });

  it('a DEL with addressSets turned off since the ADD still releases the set the ADD made', async () => {
    const config = conf(`off-${tag}`, '10.15.0.0/24');
    expect((await add(hosts.c1, 'ctr-off', config)).code).toBe(0);
    expect((await run(hosts.host, 'ours', attach('DEL', hosts.c1, 'ctr-off'), { ...config, addressSets: false })).code).toBe(0);
    const key = attachmentKey(config.name, { containerID: 'ctr-off', ifname: 'eth0' });
    const sets = await AddressSets.open({ netns: hosts.host, table: `cni_ptp_${key.slice(0, 16)}`, readOnly: true });
    try {
      expect(await sets.inspect(key)).toMatchObject({ state: 'pending', v4: { elements: [] } });
    } finally {
      await sets.close();
    }
  });

  it('a DEL of an attachment never added succeeds and creates nothing on the host', async () => {
    const config = conf(`never-${tag}`, '10.8.0.0/24', { ipMasq: false });
    const table = `cni_ptp_${attachmentKey(config.name, { containerID: 'x', ifname: 'eth0' }).slice(0, 16)}`;
    expect(await run(hosts.host, 'ours', attach('DEL', hosts.c1, 'ctr-never'), config)).toMatchObject({ code: 0, stdout: '' });
    expect(await run(hosts.host, 'ours', { CNI_COMMAND: 'DEL', CNI_CONTAINERID: 'ctr-never', CNI_IFNAME: 'eth0' }, config)).toMatchObject({ code: 0 });
    expect(await tableExists(hosts.host, table)).toBe(false);
  });

  it('an ADD failing half-way removes what it made and releases the address', async () => {
    const config = conf(`half-${tag}`, '10.9.0.0/24');
    // The container already has a route to the subnet ptp's routes need: adding the gateway's route fails.
    await hosts.c2.execFile('ip', ['link', 'add', 'br0', 'up', 'type', 'bridge']);
    await hosts.c2.execFile('ip', ['route', 'add', '10.9.0.1/32', 'dev', 'br0']);
    const failed = await add(hosts.c2, 'ctr-h', config);
    expect(failed).toMatchObject({ code: 1, json: { code: 999, msg: expect.stringContaining('EEXIST') } });
    expect(await vethNames(hosts.host)).toEqual([]);
    expect(await ipJson(hosts.c2, 'link', 'show', 'type', 'veth')).toEqual([]);
    expect(readdirSync(join(config.ipam.dataDir, config.name)).filter((f) => f.startsWith('10.'))).toEqual([]);
    expect((await hosts.host.execFile('nft', ['list', 'chain', 'inet', 'cni_plugins_masquerade', 'masq_checks'])).stdout).not.toContain('10.9.0.');
    await hosts.c2.execFile('ip', ['link', 'del', 'br0']);
  });

  it('refuses what it cannot do, with the spec\'s codes', async () => {
    const config = conf(`bad-${tag}`, '10.10.0.0/24');
    expect((await add(hosts.c1, 'ctr-bad', { ...config, ipam: undefined })).json).toMatchObject({ code: 7, msg: expect.stringContaining('ipam.type') });
    const missing = await add(hosts.c1, 'ctr-bad', { ...config, ipam: { ...config.ipam, type: 'no-such-ipam' } });
    expect(missing).toMatchObject({ code: 1, json: { msg: expect.stringContaining('no-such-ipam') } });
    expect(await vethNames(hosts.host)).toEqual([]);
    expect((await add(hosts.c1, 'ctr-bad', { ...config, mtu: 'big' })).json).toMatchObject({ code: 7, msg: expect.stringContaining('mtu') });
    expect((await add(hosts.c1, 'ctr-bad', { ...config, ipMasqBackend: 'iptables' })).json).toMatchObject({ code: 2, msg: expect.stringContaining('ipMasqBackend') });
    expect((await add(hosts.c1, 'ctr-bad', { ...config, addressSets: { table: 'filter' } })).json).toMatchObject({ code: 7, msg: expect.stringContaining('cni_ptp_') });
    expect((await add(hosts.c1, 'ctr-bad', { ...config, addressSets: { deleteDelayMs: 4e12 } })).json).toMatchObject({ code: 7, msg: expect.stringContaining('deleteDelayMs') });
    expect((await add(hosts.c1, 'ctr-bad', { ...config, dataDir: 'var/lib/cni' })).json).toMatchObject({ code: 7, msg: expect.stringContaining('dataDir') });
    expect((await add(hosts.c1, 'ctr-bad', '{not json')).json).toMatchObject({ code: 6 });
    expect((await run(hosts.host, 'ours', { ...attach('ADD', hosts.c1, 'ctr-bad'), CNI_NETNS: `/run/netns/cniptp-${tag}-missing` }, config)).json).toMatchObject({ code: 8 });
    expect((await run(hosts.host, 'ours', { CNI_COMMAND: 'VERSION' }, '')).json).toMatchObject({ cniVersion: '1.1.0', supportedVersions: expect.arrayContaining(['0.4.0', '1.1.0']) });
    expect(await run(hosts.host, 'ours', { CNI_COMMAND: 'STATUS' }, { ...config, cniVersion: '1.1.0' })).toMatchObject({ code: 0, stdout: '' });
  });
});
