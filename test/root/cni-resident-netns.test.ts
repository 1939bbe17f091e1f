// Resident mode acts where the shim runs, as a plugin process acts where it is
// run: the cni-ptp daemon serves from namespace A, the shim is run in B, and
// everything of the host side (the host end, its routes, forwarding, the
// masquerade rule, the address set) is made in B and removed from B, with
// nothing in A. The daemon keeps no descriptor of B once a call is answered,
// and a client that sends no namespace, a descriptor that is not one, several,
// or speaks an older protocol gets a clear CNI error while the daemon goes on.
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readlinkSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NetNS } from '../../dist/index.js';
import { AddressSets } from '../../dist/addrset/index.js';
import { attachmentKey, listMasquerade, networkTagPrefix } from '../../dist/cni/plumbing.js';
import { createTestNetwork, type TestNetwork } from '../../dist/testing.js';
import { installShim } from '../helpers/cni-shim.mjs';
import { execOutcome, type ExecOutcome } from '../helpers/exec-outcome.js';
import { privileged } from '../helpers/privileges.js';
import { writeRawClient } from '../helpers/resident-raw-client.js';

const EXAMPLE = fileURLToPath(new URL('../../examples/cni-ptp/dist/', import.meta.url));
const GO_PLUGINS = '/usr/lib/cni';
const haveGoPlugins = existsSync(`${GO_PLUGINS}/host-local`);

type Hosts = 'a' | 'b' | 'c1';

/** A daemon started in `ns`; resolves once it says it serves (its first stderr line). */
function startDaemon(ns: NetNS, argv: string[]): Promise<{ child: ChildProcess; exited: Promise<number | null> }> {
  const child = ns.spawn(process.execPath, argv, { env: { PATH: process.env.PATH ?? '' }, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  return new Promise((resolve, reject) => {
    child.stderr!.setEncoding('utf8').on('data', (text: string) => {
      stderr += text;
      if (stderr.includes('serving on')) resolve({ child, exited });
    });
    void exited.then((code) => reject(new Error(`the daemon exited (${code}) before serving: ${stderr}`)));
  });
}

/** What each descriptor of process `pid` points at (see `held` for counting them). */
const descriptors = (pid: number): string[] =>
  readdirSync(`/proc/${pid}/fd`).flatMap((fd) => {
    try {
      return [readlinkSync(`/proc/${pid}/fd/${fd}`)];
    } catch {
      return []; // closed while listed
    }
  });

/**
 * The descriptors of `pid` but sockets and namespaces: a connection's socket
 * closes when the daemon reads its shim's end, just after the answer (no event
 * says when), and each I/O thread the addon starts on demand holds its own
 * namespace (one more after a busier call: seen in CI). So files and pipes are
 * counted here, and the caller's namespace exactly, by holdsNamespace.
 */
const held = (pid: number): string[] => descriptors(pid).filter((target) => !target.startsWith('socket:') && !target.startsWith('net:['));


describe.skipIf(!privileged || !haveGoPlugins)('resident mode plumbs in the namespace the shim runs in', () => {
  const tag = randomBytes(3).toString('hex');
  const name = `cni-ptp-ns-${tag}`;
  const socketPath = `/run/netns-cni/${name}.sock`;
  const network = `callerns-${tag}`;
  let net: TestNetwork<Hosts>;
  let hosts: TestNetwork<Hosts>['hosts'];
  let dir: string;
  let shim: string;
  let client: string;
  let daemon: Awaited<ReturnType<typeof startDaemon>>;
  let config: object;

  const env = (extra: Record<string, string>) => ({ PATH: process.env.PATH ?? '', CNI_PATH: GO_PLUGINS, ...extra });
  const viaShim = (from: NetNS, extra: Record<string, string>, input: object | string = ''): Promise<ExecOutcome> =>
    execOutcome(from, shim, [], { env: env(extra), input: typeof input === 'string' ? input : JSON.stringify(input) });
  const attach = (command: string, containerId: string) => ({ CNI_COMMAND: command, CNI_CONTAINERID: containerId, CNI_NETNS: hosts.c1.path, CNI_IFNAME: 'eth0' });
  const byHand = async (magic: string, files: string[]) => (await hosts.b.execFile('python3', [client, socketPath, magic, ...files])).stdout;
  const daemonPid = () => daemon.child.pid!;
  const holdsNamespace = (ns: NetNS) => descriptors(daemonPid()).filter((target) => target === `net:[${ns.inode}]`).length;

  /** What of the attachment is in `ns`: links, routes to the container, masquerade rules and the address set's addresses. */
  async function hostSide(ns: NetNS, address: string): Promise<{ links: string[]; routes: string[]; masquerade: number; set: string[] | undefined }> {
    const { stdout: links } = await ns.execFile('ip', ['-o', 'link', 'show', 'type', 'veth']);
    const { stdout: routes } = await ns.execFile('ip', ['-4', 'route', 'show', `${address}/32`]);
    const sets = await AddressSets.openExisting({ netns: ns, table: `cni_ptp_${networkTagPrefix(network).slice(0, -1)}`, readOnly: true });
    let set: string[] | undefined;
    try {
      const details = await sets?.inspect(attachmentKey(network, { containerID: 'ctr-b', ifname: 'eth0' }));
      set = details?.state === 'orphan' ? details.v4.elements : undefined;
    } finally {
      await sets?.close();
    }
    return {
      links: links.split('\n').filter(Boolean).map((line) => line.split(': ')[1]!.split('@')[0]!),
      routes: routes.split('\n').filter(Boolean).map((line) => line.trim()),
      masquerade: (await listMasquerade(ns, network)).length,
      set,
    };
  }

  beforeAll(async () => {
    net = await createTestNetwork({ prefix: `cnins-${tag}-`, hosts: { a: {}, b: {}, c1: {} } });
    hosts = net.hosts;
    dir = mkdtempSync(join(tmpdir(), `netns-cni-resident-ns-${tag}-`));
    shim = installShim(dir, name);
    client = writeRawClient(dir);
    const dataDir = join(dir, 'ipam');
    config = { cniVersion: '1.1.0', name: network, type: name, ipMasq: true, dataDir: join(dir, 'records'), ipam: { type: 'host-local', subnet: '10.73.0.0/24', dataDir }, addressSets: { deleteDelayMs: 0 } };
    daemon = await startDaemon(hosts.a, [join(EXAMPLE, 'cni-ptp-daemon.cjs'), socketPath]);
  }, 60_000);

  afterAll(async () => {
    if (hosts && shim) await viaShim(hosts.b, attach('DEL', 'ctr-b'), config);
    daemon?.child.kill('SIGTERM');
    await daemon?.exited;
    await net?.delete();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('ADD from B makes the host side in B and nothing in A; DEL from B removes it; the daemon holds no descriptor of B after either', async () => {
    expect(readlinkSync(`/proc/${daemonPid()}/exe`)).toBe(realpathSync(process.execPath)); // the daemon itself, not a helper
    // Warm the daemon (addon, I/O threads) before counting its descriptors.
    expect(await viaShim(hosts.b, { CNI_COMMAND: 'STATUS' }, config)).toMatchObject({ code: 0 });
    const before = held(daemonPid());

    const add = await viaShim(hosts.b, attach('ADD', 'ctr-b'), config);
    expect(add).toMatchObject({ code: 0, stderr: '' });
    expect(holdsNamespace(hosts.b)).toBe(0); // closed before the answer went
    const result = JSON.parse(add.stdout) as { interfaces: { name: string }[]; ips: { address: string; gateway: string }[] };
    const hostEnd = result.interfaces[0]!.name;
    const address = result.ips[0]!.address.split('/')[0]!;
    const inB = await hostSide(hosts.b, address);
    expect(inB.links).toEqual([hostEnd]);
    expect(inB.routes).toEqual([`${address} dev ${hostEnd} scope host`]);
    expect(inB.masquerade).toBe(1);
    expect(inB.set).toEqual([address]);
    expect(await hostSide(hosts.a, address)).toEqual({ links: [], routes: [], masquerade: 0, set: undefined });
    expect((await hosts.b.sysctl.get('net/ipv4/ip_forward')).trim()).toBe('1');
    expect((await hosts.a.sysctl.get('net/ipv4/ip_forward')).trim()).toBe('0');
    // The container reaches its gateway: the pair's other end is in B.
    await hosts.c1.execFile('ping', ['-c', '1', '-W', '5', result.ips[0]!.gateway]);

    const check = await viaShim(hosts.b, attach('CHECK', 'ctr-b'), { ...config, prevResult: result });
    expect(check).toEqual({ code: 0, stdout: '', stderr: '' });

    expect(await viaShim(hosts.b, attach('DEL', 'ctr-b'), config)).toEqual({ code: 0, stdout: '', stderr: '' });
    expect(holdsNamespace(hosts.b)).toBe(0);
    expect(await hostSide(hosts.b, address)).toEqual({ links: [], routes: [], masquerade: 0, set: undefined });
    expect(held(daemonPid())).toEqual(before);
  }, 60_000);

  it('CNI_NETNS naming the caller\'s own namespace is refused (code 8), as a plugin process refuses its own', async () => {
    const own = await viaShim(hosts.b, { ...attach('ADD', 'ctr-own'), CNI_NETNS: hosts.b.path }, config);
    expect(own.code).toBe(1);
    expect(JSON.parse(own.stdout)).toMatchObject({ code: 8, msg: expect.stringContaining('is the plugin\'s own network namespace') });
    expect(holdsNamespace(hosts.b)).toBe(0);
  });

  it('a client that sends no namespace, a file, several descriptors or an older protocol is told so, leaks nothing, and the daemon goes on', async () => {
    expect(await viaShim(hosts.b, { CNI_COMMAND: 'STATUS' }, config)).toMatchObject({ code: 0 });
    const before = held(daemonPid());
    const file = join(dir, 'not-a-namespace');
    writeFileSync(file, '');
    const answers = {
      none: await byHand('NCS3', []),
      file: await byHand('NCS3', [file]),
      mount: await byHand('NCS3', ['/proc/self/ns/mnt']),
      two: await byHand('NCS3', ['/proc/self/ns/net', '/proc/self/ns/net']),
      old: await byHand('NCS2', []),
      right: await byHand('NCS3', ['/proc/self/ns/net']),
    };
    const message = (text: string) => (JSON.parse(text) as { msg: string }).msg;
    expect(JSON.parse(answers.none)).toMatchObject({ code: 999, msg: 'bad request to the resident daemon: no network namespace came with the request' });
    expect(message(answers.file)).toMatch(/^bad request to the resident daemon: the descriptor sent with the request is not a network namespace: .*a regular file/);
    expect(message(answers.mount)).toMatch(/not a network namespace: .*a mnt namespace/);
    expect(message(answers.two)).toBe('bad request to the resident daemon: 2 descriptors came with the request, where the shim sends one (its network namespace)');
    expect(message(answers.old)).toBe('bad request to the resident daemon: the shim speaks protocol 2, this daemon 3: install the shim of the same netns version as the daemon');
    expect(JSON.parse(answers.right)).toMatchObject({ supportedVersions: expect.arrayContaining(['1.1.0']) });
    // Every descriptor received was closed before its answer went.
    expect(descriptors(daemonPid()).filter((target) => target === file || target.startsWith('mnt:'))).toEqual([]);
    expect(holdsNamespace(hosts.b)).toBe(0);
    expect(await viaShim(hosts.b, { CNI_COMMAND: 'STATUS' }, config)).toMatchObject({ code: 0 }); // still serving
    expect(held(daemonPid())).toEqual(before);
  });
});
