import { execFile, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NetNS, withNetNS } from '../../dist/index.js';
import { AddressSets } from '../../dist/addrset/index.js';
import { createTestNetwork, type TestNetwork } from '../../dist/testing.js';
import { pathWithout, type BarePath } from '../helpers/path-without.js';
import { privileged } from '../helpers/privileges.js';

const plugin = fileURLToPath(new URL('../../examples/cni-ptp/dist/main.js', import.meta.url));
const tag = randomBytes(3).toString('hex');

interface PluginRun {
  code: number;
  stdout: string;
  json: Record<string, unknown> | undefined;
}

/** Runs the plugin exactly as a runtime does: CNI_* variables and config on stdin. */
function cni(env: Record<string, string>, config: object | string, path = process.env.PATH): Promise<PluginRun> {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [plugin], { env: { PATH: path, ...env } }, (error, stdout) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      resolve({ code, stdout, json: stdout.trim() ? (JSON.parse(stdout) as Record<string, unknown>) : undefined });
    });
    child.stdin!.end(typeof config === 'string' ? config : JSON.stringify(config));
  });
}

describe.skipIf(!privileged)('the cni-ptp example plugin', () => {
  let node: TestNetwork<'node'>;
  const containers = [`cni-${tag}-c1`, `cni-${tag}-c2`];
  let config: Record<string, unknown>;
  let noIp: BarePath;
  const env = (command: string, container = containers[0]!) => ({
    CNI_COMMAND: command,
    CNI_CONTAINERID: `ctr-${container}`,
    CNI_NETNS: `/run/netns/${container}`,
    CNI_IFNAME: 'eth0',
    CNI_PATH: '/opt/cni/bin',
  });

  beforeAll(async () => {
    node = await createTestNetwork({ hosts: { node: {} } }); // stands in for the host: nothing touches the real one
    for (const name of containers) execFileSync('ip', ['netns', 'add', name]);
    noIp = pathWithout('ip');
    config = {
      cniVersion: '1.1.0',
      name: 'ptp-test',
      type: 'cni-ptp',
      address: '10.22.0.2/24',
      gateway: '10.22.0.1',
      hostNetns: node.names.node,
      addressSets: { table: 'cni_ptp', deleteDelayMs: 60_000 },
    };
  });

  afterAll(async () => {
    noIp?.dispose();
    for (const name of containers) execFileSync('ip', ['netns', 'del', name]);
    await node?.close();
  });

  it('answers VERSION', async () => {
    const result = await cni({ CNI_COMMAND: 'VERSION' }, { cniVersion: '1.0.0' });
    expect(result).toMatchObject({ code: 0, json: { cniVersion: '1.0.0', supportedVersions: expect.arrayContaining(['1.1.0', '0.4.0']) } });
  });

  it('ADD wires the container to the host, CHECK confirms it, DEL (twice) undoes it', async () => {
    const added = await cni(env('ADD'), config);
    expect(added.code).toBe(0);
    expect(added.json).toMatchObject({
      cniVersion: '1.1.0',
      interfaces: [{ name: expect.stringMatching(/^cnip[0-9a-f]{11}$/) }, { name: 'eth0', sandbox: `/run/netns/${containers[0]}` }],
      ips: [{ address: '10.22.0.2/24', gateway: '10.22.0.1', interface: 1 }],
      routes: [{ dst: '0.0.0.0/0', gw: '10.22.0.1' }],
    });

    using container = NetNS.open(containers[0]!);
    const inside = await withNetNS(container, () => {
      const ip = (...args: string[]) => JSON.parse(require('node:child_process').execFileSync('ip', ['-j', ...args], { encoding: 'utf8' }));
      return { addr: ip('addr', 'show', 'dev', 'eth0')[0].addr_info[0], route: ip('route', 'show', 'default')[0] };
    });
    expect(inside.addr).toMatchObject({ local: '10.22.0.2', prefixlen: 24 });
    expect(inside.route).toMatchObject({ gateway: '10.22.0.1', dev: 'eth0' });

    // traffic crosses the pair: a server in the container, reached from the "host"
    const server = await container.listen(net.createServer((s) => s.end('from the container')), { host: '10.22.0.2', port: 0 });
    const socket = await node.hosts.node.connect({ host: '10.22.0.2', port: (server.address() as net.AddressInfo).port });
    const text = await new Promise<string>((resolve) => {
      let data = '';
      socket.setEncoding('utf8').on('data', (c) => (data += c)).on('end', () => resolve(data));
    });
    server.close();
    expect(text).toBe('from the container');

    const sets = await AddressSets.open({ netns: node.hosts.node, table: 'cni_ptp', readOnly: true });
    expect((await sets.inspect(`ctr-${containers[0]}/eth0`)).v4.elements).toEqual(['10.22.0.2']);

    expect(await cni(env('CHECK'), { ...config, prevResult: added.json })).toMatchObject({ code: 0, stdout: '' });
    await container.execFile('ip', ['route', 'del', 'default']);
    const broken = await cni(env('CHECK'), { ...config, prevResult: added.json });
    expect(broken).toMatchObject({ code: 1, json: { code: 100, msg: expect.stringContaining('default route') } });

    expect(await cni(env('DEL'), config)).toMatchObject({ code: 0, stdout: '' });
    expect(await cni(env('DEL'), config)).toMatchObject({ code: 0, stdout: '' });
    expect((await node.hosts.node.execFile('ip', ['-j', 'link', 'show', 'type', 'veth'])).stdout.trim()).toMatch(/^\[\]$|^$/);
    expect(await container.execFile('ip', ['-o', 'link', 'show', 'eth0']).catch((e: { code: number }) => e.code)).toBe(1);
    expect((await sets.inspect(`ctr-${containers[0]}/eth0`)).state).toBe('pending');
    await sets.close();
  });

  it('GC keeps the attachments the runtime lists and collects the rest', async () => {
    expect((await cni(env('ADD', containers[0]), config)).code).toBe(0);
    expect((await cni(env('ADD', containers[1]), { ...config, address: '10.22.0.3/24' })).code).toBe(0);
    const valid = [{ containerID: `ctr-${containers[0]}`, ifname: 'eth0' }];
    expect(await cni({ CNI_COMMAND: 'GC', CNI_PATH: '/opt/cni/bin' }, { ...config, 'cni.dev/valid-attachments': valid })).toMatchObject({ code: 0 });
    const sets = await AddressSets.open({ netns: node.hosts.node, table: 'cni_ptp', readOnly: true });
    const owners = new Set((await sets.list()).map((row) => row.owner));
    await sets.close();
    expect(owners).toEqual(new Set([`ctr-${containers[0]}/eth0`]));
    const links = JSON.parse((await node.hosts.node.execFile('ip', ['-j', 'link', 'show', 'type', 'veth'])).stdout) as unknown[];
    expect(links).toHaveLength(1);
    expect((await cni(env('DEL', containers[0]), config)).code).toBe(0);
  });

  it('ADD, CHECK, GC, STATUS and DEL need no ip: they work with a PATH lacking it', async () => {
    const added = await cni(env('ADD'), config, noIp.path);
    expect(added).toMatchObject({ code: 0, json: { interfaces: [{ mac: expect.stringMatching(/^([0-9a-f]{2}:){5}[0-9a-f]{2}$/) }, { name: 'eth0' }] } });
    using container = NetNS.open(containers[0]!);
    const route = JSON.parse((await container.execFile('ip', ['-j', 'route', 'show', 'default'])).stdout)[0];
    expect(route).toMatchObject({ gateway: '10.22.0.1', dev: 'eth0', flags: ['onlink'] });
    const lo = JSON.parse((await container.execFile('ip', ['-j', 'link', 'show', 'lo'])).stdout)[0];
    expect(lo.flags).toContain('UP');
    const hostRoute = JSON.parse((await node.hosts.node.execFile('ip', ['-j', 'route', 'show', '10.22.0.2/32'])).stdout)[0];
    expect(hostRoute).toMatchObject({ dst: '10.22.0.2', scope: 'link' });
    expect(await cni(env('CHECK'), { ...config, prevResult: added.json }, noIp.path)).toMatchObject({ code: 0, stdout: '' });
    expect(await cni(env('STATUS'), config, noIp.path)).toMatchObject({ code: 0, stdout: '' });
    expect(await cni({ CNI_COMMAND: 'GC', CNI_PATH: '/opt/cni/bin' }, { ...config, 'cni.dev/valid-attachments': [] }, noIp.path)).toMatchObject({ code: 0 });
    expect(JSON.parse((await node.hosts.node.execFile('ip', ['-j', 'link', 'show', 'type', 'veth'])).stdout || '[]')).toEqual([]);
    expect(await cni(env('DEL'), config, noIp.path)).toMatchObject({ code: 0, stdout: '' });
    expect(await cni(env('DEL'), config, noIp.path)).toMatchObject({ code: 0, stdout: '' });
  });

  it('an ADD failing half-way (the container already has a default route) deletes the veth it made', async () => {
    using container = NetNS.open(containers[1]!);
    for (const args of [['link', 'add', 'br0', 'up', 'type', 'bridge'], ['addr', 'add', '10.99.0.1/24', 'dev', 'br0'], ['route', 'add', 'default', 'via', '10.99.0.2', 'dev', 'br0', 'onlink']]) {
      await container.execFile('ip', args);
    }
    const failed = await cni(env('ADD', containers[1]), { ...config, address: '10.22.0.3/24' }, noIp.path);
    expect(failed).toMatchObject({ code: 1, json: { code: 5, msg: expect.stringMatching(/^configuring the container side: .*EEXIST/) } });
    expect(JSON.parse((await node.hosts.node.execFile('ip', ['-j', 'link', 'show', 'type', 'veth'])).stdout || '[]')).toEqual([]);
    expect(await container.execFile('ip', ['-o', 'link', 'show', 'eth0']).catch((e: { code: number }) => e.code)).toBe(1);
    await container.execFile('ip', ['link', 'del', 'br0']);
  });

  it('answers STATUS', async () => {
    expect(await cni({ CNI_COMMAND: 'STATUS' }, config)).toMatchObject({ code: 0, stdout: '' });
  });

  it('reports errors as the spec says', async () => {
    const noNetns = await cni({ ...env('ADD'), CNI_NETNS: '' }, config);
    expect(noNetns).toMatchObject({ code: 1, json: { cniVersion: '1.1.0', code: 4 } });
    const gone = await cni({ ...env('ADD'), CNI_NETNS: `/run/netns/cni-${tag}-missing` }, config);
    expect(gone.json).toMatchObject({ code: 3 });
    expect((await cni(env('ADD'), '{not json')).json).toMatchObject({ code: 6 });
    expect((await cni(env('ADD'), { ...config, cniVersion: '9.9.9' })).json).toMatchObject({ code: 1 });
    expect((await cni(env('ADD'), { ...config, address: 'nope' })).json).toMatchObject({ code: 7 });
    expect((await cni({ ...env('ADD'), CNI_COMMAND: 'FROB' }, config)).json).toMatchObject({ code: 4 });
  });
});
