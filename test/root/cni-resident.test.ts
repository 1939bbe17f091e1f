// Resident mode as a runtime meets it: the shim (build/Release/netns-cni-shim)
// installed under the plugin's name, the cni-ptp example's daemon serving it
// in the namespace that stands for the host, with Debian's host-local for
// IPAM. What the shim prints and how it exits must be what the plugin run as
// a process gives; many calls at once must not see each other; a daemon
// absent, killed or refusing must end the call cleanly.
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { NetNS } from '../../dist/index.js';
import { AddressSets } from '../../dist/addrset/index.js';
import { attachmentKey, networkTagPrefix } from '../../dist/cni/plumbing.js';
import { createTestNetwork, type TestNetwork } from '../../dist/testing.js';
import { installShim } from '../helpers/cni-shim.mjs';
import { execOutcome, type ExecOutcome } from '../helpers/exec-outcome.js';
import { distUrl } from '../helpers/node-child.js';
import { inUserNamespace, privileged } from '../helpers/privileges.js';

const EXAMPLE = fileURLToPath(new URL('../../examples/cni-ptp/dist/', import.meta.url));
const GO_PLUGINS = '/usr/lib/cni';
const haveGoPlugins = existsSync(`${GO_PLUGINS}/host-local`);
if (!haveGoPlugins && process.env.CI) throw new Error('CI must install containernetworking-plugins (host-local in /usr/lib/cni)');

const PARALLEL = 50;
type Hosts = 'host' | 'c1' | 'c2' | `p${number}`;

type Run = ExecOutcome;

/** Runs `argv` in `host` with exactly `env` and `input` on stdin, however it exits. */
function exec(host: NetNS, argv: string[], env: Record<string, string>, input = ''): Promise<Run> {
  return execOutcome(host, argv[0]!, argv.slice(1), { env, input });
}

/** A daemon started in `host`; resolves once it says it serves (its first stderr line). */
function startDaemon(host: NetNS, argv: string[]): Promise<{ child: ChildProcess; stderr: () => string; exited: Promise<number | null> }> {
  const child = host.spawn(process.execPath, argv, { env: { PATH: process.env.PATH ?? '' }, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  return new Promise((resolve, reject) => {
    child.stderr!.setEncoding('utf8').on('data', (text: string) => {
      stderr += text;
      if (stderr.includes('serving on')) resolve({ child, stderr: () => stderr, exited });
    });
    void exited.then((code) => reject(new Error(`the daemon exited (${code}) before serving: ${stderr}`)));
  });
}

/** The addresses in each attachment's set (undefined: none, or its destroy pending), and whether the network's table is there at all. */
async function addressSets(host: NetNS, network: string, containerIds: string[]): Promise<{ table: boolean; held: (string | undefined)[] }> {
  const table = `cni_ptp_${networkTagPrefix(network).slice(0, -1)}`;
  const sets = await AddressSets.openExisting({ netns: host, table, readOnly: true });
  if (!sets) return { table: false, held: containerIds.map(() => undefined) };
  try {
    const held = [];
    for (const id of containerIds) {
      const details = await sets.inspect(attachmentKey(network, { containerID: id, ifname: 'eth0' }));
      // A reader sees another process's live owner as 'orphan' (recorded, no deadline).
      held.push(details.state === 'orphan' ? details.v4.elements.join(' ') : undefined);
    }
    return { table: true, held };
  } finally {
    await sets.close();
  }
}

const attach = (command: string, container: NetNS, containerId: string) => ({ CNI_COMMAND: command, CNI_CONTAINERID: containerId, CNI_NETNS: container.path, CNI_IFNAME: 'eth0' });

describe.skipIf(!privileged || !haveGoPlugins)('resident mode: the shim and the cni-ptp daemon', () => {
  const tag = randomBytes(3).toString('hex');
  const name = `cni-ptp-${tag}`;
  // The shim finds its daemon by the name it is installed under: /run/netns-cni/NAME.sock.
  const socketPath = `/run/netns-cni/${name}.sock`;
  let network: TestNetwork<Hosts>;
  let hosts: TestNetwork<Hosts>['hosts'];
  let dir: string;
  let shim: string;
  let daemon: Awaited<ReturnType<typeof startDaemon>>;
  const dataDirs: string[] = [];

  const conf = (network: string, subnet: string, extra: Record<string, unknown> = {}) => {
    const dataDir = mkdtempSync(join(tmpdir(), `netns-cni-resident-${tag}-`));
    dataDirs.push(dataDir);
    return { cniVersion: '1.0.0', name: network, type: name, ipMasq: true, mtu: 1400, dataDir: join(dataDir, 'ptp'), ipam: { type: 'host-local', subnet, dataDir, routes: [{ dst: '0.0.0.0/0' }] }, addressSets: { deleteDelayMs: 0 }, ...extra };
  };
  const env = (extra: Record<string, string>) => ({ PATH: process.env.PATH ?? '', CNI_PATH: GO_PLUGINS, ...extra });
  const viaShim = (extra: Record<string, string>, input: object | string = '') => exec(hosts.host, [shim], env(extra), typeof input === 'string' ? input : JSON.stringify(input));
  const viaProcess = (extra: Record<string, string>, input: object | string = '') => exec(hosts.host, [process.execPath, join(EXAMPLE, 'cni-ptp.cjs')], env(extra), typeof input === 'string' ? input : JSON.stringify(input));

  beforeAll(async () => {
    const parallel = Object.fromEntries(Array.from({ length: PARALLEL }, (_, i) => [`p${i}`, {}]));
    network = await createTestNetwork({ prefix: `cnires-${tag}-`, hosts: { host: {}, c1: {}, c2: {}, ...parallel } as Record<Hosts, object> });
    hosts = network.hosts;
    dir = mkdtempSync(join(tmpdir(), `netns-cni-resident-${tag}-`));
    chmodSync(dir, 0o755); // the shim is run as nobody too
    shim = installShim(dir, name);
    daemon = await startDaemon(hosts.host, [join(EXAMPLE, 'cni-ptp-daemon.cjs'), socketPath]);
  }, 120_000);

  const added: [NetNS, string, object][] = [];
  afterEach(async () => {
    await Promise.all(added.splice(0).map(([container, id, config]) => viaShim(attach('DEL', container, id), config)));
  }, 120_000);

  afterAll(async () => {
    daemon?.child.kill('SIGTERM');
    await daemon?.exited;
    await network?.delete();
    for (const path of [dir, ...dataDirs]) if (path) rmSync(path, { recursive: true, force: true });
  });

  it('the daemon listens on a socket only root may use, in a directory only root may enter', () => {
    expect(statSync(socketPath).mode & 0o777).toBe(0o600);
    expect(statSync('/run/netns-cni').mode & 0o077).toBe(0);
  });

  it('ADD, CHECK and DEL through the shim do what the plugin process does, with the same stdout and exit codes', async () => {
    const config = conf(`same-${tag}`, '10.71.0.0/24');
    added.push([hosts.c1, 'ctr-same', config]);
    const shimAdd = await viaShim(attach('ADD', hosts.c1, 'ctr-same'), config);
    expect(shimAdd).toMatchObject({ code: 0, stderr: '' });
    const result = JSON.parse(shimAdd.stdout) as { interfaces: { name: string; mac: string }[]; ips: { address: string }[] };
    expect(result.ips[0]!.address).toBe('10.71.0.2/24');
    const { stdout: inside } = await hosts.c1.execFile('ip', ['-4', '-o', 'addr', 'show', 'dev', 'eth0']);
    expect(inside).toContain('10.71.0.2/24');

    const withPrev = { ...config, prevResult: result };
    const checks = [await viaShim(attach('CHECK', hosts.c1, 'ctr-same'), withPrev), await viaProcess(attach('CHECK', hosts.c1, 'ctr-same'), withPrev)];
    expect(checks[0]).toEqual({ code: 0, stdout: '', stderr: '' });
    expect(checks[1]).toEqual(checks[0]);
    // A CHECK that fails: the same error object, byte for byte.
    const wrong = { ...config, prevResult: { ...result, ips: [{ ...result.ips[0], address: '10.71.0.9/24' }] } };
    const failedChecks = [await viaShim(attach('CHECK', hosts.c1, 'ctr-same'), wrong), await viaProcess(attach('CHECK', hosts.c1, 'ctr-same'), wrong)];
    expect(failedChecks[0]!.code).not.toBe(0);
    expect(failedChecks[1]).toEqual(failedChecks[0]);

    expect(await viaShim(attach('DEL', hosts.c1, 'ctr-same'), config)).toEqual({ code: 0, stdout: '', stderr: '' });
    expect((await hosts.c1.execFile('ip', ['-o', 'link', 'show'])).stdout).not.toContain('eth0');
    // The same attachment again, now by the process: the same address, the same result but for the random veth name and MACs.
    rmSync(config.ipam.dataDir, { recursive: true, force: true });
    const processAdd = await viaProcess(attach('ADD', hosts.c1, 'ctr-same'), config);
    const normal = (text: string) => text.replace(/"veth[0-9a-f]+"/g, '"VETH"').replace(/"([0-9a-f]{2}:){5}[0-9a-f]{2}"/g, '"MAC"');
    expect({ ...processAdd, stdout: normal(processAdd.stdout) }).toEqual({ ...shimAdd, stdout: normal(shimAdd.stdout) });
    expect(await viaProcess(attach('DEL', hosts.c1, 'ctr-same'), config)).toEqual(await viaShim(attach('DEL', hosts.c1, 'ctr-same'), config));
  });

  it('errors and VERSION are byte-identical to the plugin process', async () => {
    const config = conf(`errors-${tag}`, '10.72.0.0/24');
    const cases: [Record<string, string>, object | string][] = [
      [{ CNI_COMMAND: 'VERSION' }, ''],
      [{}, ''], // no command: the about text on stderr
      [attach('ADD', hosts.c2, 'ctr-bad'), { ...config, name: 'bad name!' }], // code 7
      [attach('ADD', hosts.c2, 'ctr-bad'), { ...config, mtu: 'big' }], // code 7, the plugin's own check
      [{ CNI_COMMAND: 'ADD', CNI_NETNS: hosts.c2.path }, config], // code 4
      [attach('ADD', hosts.c2, 'ctr-bad'), '{"cniVersion":'], // code 6
      [attach('ADD', hosts.c2, 'ctr-bad'), { ...config, cniVersion: '9.9.9' }], // code 1
      [{ ...attach('ADD', hosts.c2, 'ctr-bad'), CNI_NETNS: '/nonexistent' }, config], // code 8
      [{ CNI_COMMAND: 'FROB' }, config], // code 4
      [attach('ADD', hosts.c2, 'ctr-bad'), { ...config, name: 'big!', padding: 'x'.repeat(8 << 20) }], // 8 MiB of stdin, in many writes: code 7
    ];
    const codes: number[] = [];
    for (const [vars, input] of cases) {
      const [shimRun, processRun] = [await viaShim(vars, input), await viaProcess(vars, input)];
      expect(shimRun, JSON.stringify(vars)).toEqual(processRun);
      if (shimRun.stdout) codes.push((JSON.parse(shimRun.stdout) as { code?: number }).code ?? 0);
    }
    expect(codes).toEqual([0, 7, 7, 4, 6, 1, 8, 4, 7]);
  });

  it(`${PARALLEL} ADDs at once through the shim are each right, and ${PARALLEL} DELs leave nothing behind`, async () => {
    const config = conf(`many-${tag}`, '10.73.0.0/24');
    const containers = Array.from({ length: PARALLEL }, (_, i) => hosts[`p${i}`]!);
    containers.forEach((c, i) => added.push([c, `ctr-many-${i}`, config]));
    const adds = await Promise.all(containers.map((c, i) => viaShim(attach('ADD', c, `ctr-many-${i}`), config)));
    expect(adds.filter((r) => r.code !== 0)).toEqual([]);
    const addresses = adds.map((r) => (JSON.parse(r.stdout) as { ips: { address: string }[] }).ips[0]!.address);
    expect(new Set(addresses).size).toBe(PARALLEL);
    for (const [i, c] of containers.entries()) expect((await c.execFile('ip', ['-4', '-o', 'addr', 'show', 'dev', 'eth0'])).stdout).toContain(addresses[i]!);
    const hostVeths = await hosts.host.execFile('ip', ['-o', 'link', 'show', 'type', 'veth']);
    expect(hostVeths.stdout.trim().split('\n')).toHaveLength(PARALLEL);
    // Each pod's address in its own set: no call's change lost in the shared transactions.
    const ids = containers.map((_, i) => `ctr-many-${i}`);
    expect((await addressSets(hosts.host, config.name, ids)).held).toEqual(addresses.map((address) => address.split('/')[0]));

    const dels = await Promise.all(containers.map((c, i) => viaShim(attach('DEL', c, `ctr-many-${i}`), config)));
    expect(dels.filter((r) => r.code !== 0 || r.stdout !== '')).toEqual([]);
    expect((await hosts.host.execFile('ip', ['-o', 'link', 'show', 'type', 'veth'])).stdout).toBe('');
    for (const c of containers) expect((await c.execFile('ip', ['-o', 'link', 'show'])).stdout).not.toContain('eth0');
    const allocations = readdirSync(join(config.ipam.dataDir, config.name)).filter((file) => /^\d/.test(file));
    expect(allocations).toEqual([]);
    // No attachment's set, and the network's table gone with its last set (deleteDelayMs 0), as sequential DELs leave it.
    expect(await addressSets(hosts.host, config.name, ids)).toEqual({ table: false, held: ids.map(() => undefined) });
    expect((await hosts.host.execFile('nft', ['list', 'sets'])).stdout).not.toMatch(/\bset (?!as_owners )/);
    const { stdout: rules } = await hosts.host.execFile('nft', ['list', 'ruleset']);
    expect(rules).not.toContain(`ctr-many-`);
  }, 180_000); // a hundred calls and their checks, on a loaded machine

  it('a plugin process on the same network during a resident storm is neither lost nor kept waiting past the storm', async () => {
    const config = conf(`mixed-${tag}`, '10.75.0.0/24');
    const storm = Array.from({ length: 20 }, (_, i) => hosts[`p${i}`]!);
    storm.forEach((c, i) => added.push([c, `ctr-mixed-${i}`, config]));
    added.push([hosts.c2, 'ctr-mixed-process', config]);
    const ids = [...storm.map((_, i) => `ctr-mixed-${i}`), 'ctr-mixed-process'];
    // The process starts with the storm: its lock waits for the daemon's writer, or the daemon's for it.
    const [processAdd, ...adds] = await Promise.all([
      viaProcess(attach('ADD', hosts.c2, 'ctr-mixed-process'), config),
      ...storm.map((c, i) => viaShim(attach('ADD', c, `ctr-mixed-${i}`), config)),
    ]);
    expect([processAdd, ...adds].filter((r) => r.code !== 0)).toEqual([]);
    const addresses = [...adds, processAdd].map((r) => (JSON.parse(r.stdout) as { ips: { address: string }[] }).ips[0]!.address.split('/')[0]);
    expect((await addressSets(hosts.host, config.name, ids)).held).toEqual(addresses);

    const dels = await Promise.all([
      ...storm.map((c, i) => viaShim(attach('DEL', c, `ctr-mixed-${i}`), config)),
      viaProcess(attach('DEL', hosts.c2, 'ctr-mixed-process'), config),
    ]);
    expect(dels.filter((r) => r.code !== 0 || r.stdout !== '')).toEqual([]);
    added.splice(-ids.length);
    // Whichever DEL is last, the network's table goes with the last set.
    expect(await addressSets(hosts.host, config.name, ids)).toEqual({ table: false, held: ids.map(() => undefined) });
  }, 180_000);

  it('the last DEL\'s set and the network\'s table go at the end of the delay, with no later call', async () => {
    const DELAY = 300;
    const config = conf(`timer-${tag}`, '10.76.0.0/24', { addressSets: { deleteDelayMs: DELAY } });
    const table = `cni_ptp_${networkTagPrefix(config.name).slice(0, -1)}`;
    added.push([hosts.c1, 'ctr-timer', config]);
    expect(await viaShim(attach('ADD', hosts.c1, 'ctr-timer'), config)).toMatchObject({ code: 0 });
    const deleting = Date.now();
    expect(await viaShim(attach('DEL', hosts.c1, 'ctr-timer'), config)).toEqual({ code: 0, stdout: '', stderr: '' });
    // No event tells of a table's deletion here: the table list is polled, with a generous bound for a loaded machine.
    const tables = async () => (JSON.parse((await hosts.host.execFile('nft', ['-j', 'list', 'tables'])).stdout).nftables as { table?: { name: string } }[]).map((entry) => entry.table?.name);
    const bound = Date.now() + 60_000;
    while ((await tables()).includes(table) && Date.now() < bound) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await tables()).not.toContain(table);
    // Not at the DEL: its set waited for its delay (a lower bound only, which no slowness can break).
    expect(Date.now() - deleting).toBeGreaterThanOrEqual(DELAY);
  }, 90_000);

  it("one call's environment is never another's: calls at once with different CNI_PATH each find their own IPAM plugin", async () => {
    const config = conf(`env-${tag}`, '10.74.0.0/24');
    const withIpam = join(dir, 'with-ipam');
    const without = join(dir, 'without-ipam');
    mkdirSync(withIpam);
    mkdirSync(without);
    symlinkSync(`${GO_PLUGINS}/host-local`, join(withIpam, 'host-local'));
    added.push([hosts.c2, 'ctr-env', config]);
    const calls = Array.from({ length: 10 }, (_, i) =>
      i % 2 === 0
        ? viaShim({ ...attach('ADD', hosts.c2, 'ctr-env'), CNI_PATH: withIpam }, config)
        : viaShim({ ...attach('DEL', hosts.c2, `ctr-other-${i}`), CNI_PATH: without }, config),
    );
    const runs = await Promise.all(calls);
    // Only one ADD of the attachment can succeed (host-local refuses a second); the others fail as host-local says.
    const adds = runs.filter((_, i) => i % 2 === 0);
    expect(adds.filter((r) => r.code === 0)).toHaveLength(1);
    for (const r of adds.filter((r) => r.code !== 0)) expect(r.stdout).toContain('duplicate allocation');
    for (const r of runs.filter((_, i) => i % 2 === 1)) {
      expect(r.code).toBe(1);
      expect(JSON.parse(r.stdout)).toMatchObject({ code: 4, msg: `failed to find plugin "host-local" in CNI_PATH [${without}]` });
    }
  });

  it('with no daemon, the shim answers code 11 (try again later) naming the socket, at once', async () => {
    const missing = join(dir, 'none.sock');
    const run = await viaShim({ ...attach('ADD', hosts.c2, 'ctr-none'), NETNS_CNI_SOCKET: missing }, '{}');
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stdout)).toMatchObject({ cniVersion: '1.1.0', code: 11, msg: expect.stringContaining(missing) });
  });

  // In a user namespace: setpriv --reuid=nobody fails, for the namespace maps only its caller (no other user to be).
  it.skipIf(inUserNamespace)('another user cannot call the daemon: the directory keeps it out, and the daemon refuses it if let in', async () => {
    const asNobody = (extra: Record<string, string>) =>
      exec(hosts.host, ['setpriv', '--reuid=nobody', '--regid=nogroup', '--clear-groups', shim], env({ CNI_COMMAND: 'VERSION', ...extra }));
    const kept = await asNobody({});
    expect(JSON.parse(kept.stdout)).toMatchObject({ code: 11, msg: expect.stringContaining('Permission denied') });
    // A socket made reachable (say by a careless chmod): SO_PEERCRED still says no.
    const open = mkdtempSync(join(tmpdir(), `netns-cni-resident-open-${tag}-`));
    chmodSync(open, 0o711);
    const loose = await startDaemon(hosts.host, [join(EXAMPLE, 'cni-ptp-daemon.cjs'), join(open, 's.sock')]);
    try {
      chmodSync(join(open, 's.sock'), 0o666);
      const refused = await asNobody({ NETNS_CNI_SOCKET: join(open, 's.sock') });
      expect(refused.code).toBe(1);
      expect(JSON.parse(refused.stdout)).toMatchObject({ code: 999, msg: expect.stringMatching(/^uid \d+ may not call/) });
    } finally {
      loose.child.kill('SIGTERM');
      await loose.exited;
      rmSync(open, { recursive: true, force: true });
    }
  });

  it('a shim started with stdin closed reads it as empty at once, rather than its own socket', async () => {
    // The socket would otherwise take descriptor 0, and the shim send its own request as stdin.
    const run = await exec(hosts.host, ['sh', '-c', 'exec "$0" <&-', shim], env(attach('ADD', hosts.c2, 'ctr-no-stdin')));
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stdout)).toMatchObject({ code: 6 });
  });

  describe('a daemon that fails', () => {
    // A plugin whose ADD never answers and whose DEL has a bug, run resident or as a process.
    let plugin: string;
    beforeAll(() => {
      plugin = join(dir, 'stuck.mjs');
      writeFileSync(
        plugin,
        `import { pluginMain, serveResident } from ${JSON.stringify(distUrl('cni/index.js'))};
// ADD with CNI_ARGS=finish=usr2 answers once the daemon gets SIGUSR2.
const handlers = {
  add: ({ args }) => {
    process.stderr.write('ADDING\\n');
    if (args !== 'finish=usr2') return new Promise(() => {});
    return new Promise((resolve) => process.once('SIGUSR2', () => resolve({ cniVersion: '1.0.0', ips: [{ address: '10.9.0.2/24' }] })));
  },
  del: () => { null.bug; },
  check: () => {},
};
const info = { versions: ['1.0.0'] };
if (process.argv[2]) serveResident(handlers, info, { socketPath: process.argv[2] }).then(() => process.stderr.write('serving on\\n'));
else pluginMain(handlers, info);
`,
      );
    });
    const stuckConf = { cniVersion: '1.0.0', name: 'stuck', type: 'stuck' };

    it('a thrown bug is the error object the process prints, and the daemon goes on serving', async () => {
      const socket = join(dir, 'bug.sock');
      const served = await startDaemon(hosts.host, [plugin, socket]);
      try {
        const vars = { ...attach('DEL', hosts.c2, 'ctr-bug'), NETNS_CNI_SOCKET: socket };
        const resident = await viaShim(vars, stuckConf);
        const alone = await exec(hosts.host, [process.execPath, plugin], env(vars), JSON.stringify(stuckConf));
        expect(resident).toEqual(alone);
        expect(JSON.parse(resident.stdout)).toMatchObject({ code: 999, msg: expect.stringContaining('null') });
        expect(await viaShim({ CNI_COMMAND: 'VERSION', NETNS_CNI_SOCKET: socket })).toMatchObject({ code: 0 });
      } finally {
        served.child.kill('SIGTERM');
        await served.exited;
      }
    });

    it('killed mid-call, the shim fails with an error object instead of hanging; a new daemon replaces the stale socket', async () => {
      const socket = join(dir, 'killed.sock');
      const served = await startDaemon(hosts.host, [plugin, socket]);
      const call = viaShim({ ...attach('ADD', hosts.c2, 'ctr-killed'), NETNS_CNI_SOCKET: socket }, stuckConf);
      await new Promise<void>((resolve) => served.child.stderr!.on('data', () => served.stderr().includes('ADDING') && resolve()));
      served.child.kill('SIGKILL');
      const run = await call;
      expect(run.code).toBe(1);
      expect(JSON.parse(run.stdout)).toMatchObject({ code: 999, msg: expect.stringContaining('closed the connection before answering') });
      // The dead daemon's socket file is still there: the next daemon replaces it and serves.
      expect(existsSync(socket)).toBe(true);
      const next = await startDaemon(hosts.host, [plugin, socket]);
      try {
        expect(await viaShim({ CNI_COMMAND: 'VERSION', NETNS_CNI_SOCKET: socket })).toMatchObject({ code: 0 });
        // A second daemon for a live one's socket is refused, and the live one keeps its socket.
        await expect(startDaemon(hosts.host, [plugin, socket])).rejects.toThrow(/another resident daemon serves/);
        expect(await viaShim({ CNI_COMMAND: 'VERSION', NETNS_CNI_SOCKET: socket })).toMatchObject({ code: 0 });
      } finally {
        next.child.kill('SIGTERM');
        await next.exited;
      }
    });

    it('SIGTERM: no new calls, the call in flight is answered (a second SIGTERM meanwhile does not end it), then the daemon exits, its socket gone', async () => {
      const socket = join(dir, 'term.sock');
      const served = await startDaemon(hosts.host, [plugin, socket]);
      const call = viaShim({ ...attach('ADD', hosts.c2, 'ctr-term'), CNI_ARGS: 'finish=usr2', NETNS_CNI_SOCKET: socket }, stuckConf);
      await new Promise<void>((resolve) => served.child.stderr!.on('data', () => served.stderr().includes('ADDING') && resolve()));
      served.child.kill('SIGTERM');
      // Refused from now on: the shim says try again later.
      await expect.poll(async () => JSON.parse((await viaShim({ CNI_COMMAND: 'VERSION', NETNS_CNI_SOCKET: socket })).stdout).code).toBe(11);
      // Until the call in flight is answered, the socket is still this daemon's: no other may start on it.
      await expect(startDaemon(hosts.host, [plugin, socket])).rejects.toThrow(/another resident daemon serves/);
      served.child.kill('SIGTERM'); // an impatient service manager: the call in flight must still be answered
      await expect.poll(async () => JSON.parse((await viaShim({ CNI_COMMAND: 'VERSION', NETNS_CNI_SOCKET: socket })).stdout).code).toBe(11);
      served.child.kill('SIGUSR2');
      expect(await call).toEqual({ code: 0, stdout: '{"cniVersion":"1.0.0","ips":[{"address":"10.9.0.2/24"}]}\n', stderr: '' });
      expect(await served.exited).toBe(0);
      expect(existsSync(socket)).toBe(false);
      expect(existsSync(`${socket}.lock`)).toBe(false);
    });

    it('calls queued on the socket when SIGTERM comes are answered (served, or code 11), never reset', async () => {
      const socket = join(dir, 'queued.sock');
      const served = await startDaemon(hosts.host, [plugin, socket]);
      served.child.kill('SIGSTOP'); // connections now wait in the listener's queue, not accepted
      const calls = Array.from({ length: 10 }, () => viaShim({ CNI_COMMAND: 'VERSION', NETNS_CNI_SOCKET: socket }));
      const queued = async () => Number((await hosts.host.execFile('ss', ['-xlH', 'src', socket])).stdout.trim().split(/\s+/)[2]);
      await expect.poll(queued).toBe(10);
      served.child.kill('SIGTERM');
      served.child.kill('SIGCONT');
      const runs = await Promise.all(calls);
      for (const run of runs) expect([0, 11]).toContain(run.code === 0 ? 0 : JSON.parse(run.stdout).code);
      expect(await served.exited).toBe(0);
    });

    it('does not take a socket another program listens on, even without a lock file, and leaves no lock of its own', async () => {
      const socket = join(dir, 'foreign.sock');
      // The daemon's probe connects and goes at once: its reset is no error of this program's.
      const foreign = net.createServer((connection) => connection.on('error', () => {}).end('mine'));
      await new Promise<void>((resolve) => foreign.listen(socket, resolve));
      try {
        await expect(startDaemon(hosts.host, [plugin, socket])).rejects.toThrow(/listens on .* without holding its lock file/);
        expect(existsSync(`${socket}.lock`)).toBe(false);
        const answer = await new Promise<string>((resolve, reject) => {
          let text = '';
          net.connect(socket).setEncoding('utf8').on('data', (chunk) => (text += chunk)).on('end', () => resolve(text)).on('error', reject);
        });
        expect(answer).toBe('mine');
      } finally {
        foreign.close();
      }
    });

    it('a daemon that never answers: the shim gives up at NETNS_CNI_TIMEOUT', async () => {
      const socket = join(dir, 'slow.sock');
      const served = await startDaemon(hosts.host, [plugin, socket]);
      try {
        const run = await viaShim({ ...attach('ADD', hosts.c2, 'ctr-slow'), NETNS_CNI_SOCKET: socket, NETNS_CNI_TIMEOUT: '1' }, stuckConf);
        expect(run.code).toBe(1);
        expect(JSON.parse(run.stdout)).toMatchObject({ code: 999, msg: expect.stringContaining('did not answer in time') });
      } finally {
        served.child.kill('SIGKILL');
        await served.exited;
      }
    });
  });
});
