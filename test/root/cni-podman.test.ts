// A real runtime drives the cni-ptp example: podman 4.3 with its CNI backend
// (runc, cgroupfs, the low nofile/nproc limits this VM needs), a busybox image
// imported from Debian's busybox-static (no registry), a container on
// [cni-ptp, portmap, tuning] with a published port, per process and resident
// (the shim installed under the plugin's name). The container gets its
// address, the published port reaches it, and `podman rm` leaves nothing that
// names it. Everything podman keeps (storage, run state) is in a temporary
// folder; its networking happens in the suite's throwaway namespace.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NetNS } from '../../dist/index.js';
import { snapshot } from '../../dist/cni/testing/conformance/snapshot.js';
import { OURS } from '../helpers/cni-ptp.js';
import { inUserNamespace, privileged } from '../helpers/privileges.js';

const run = promisify(execFile);
const DAEMON = fileURLToPath(new URL('../../examples/cni-ptp/dist/cni-ptp-daemon.cjs', import.meta.url));
const SHIM = fileURLToPath(new URL('../../build/Release/netns-cni-shim', import.meta.url));
const havePodman = existsSync('/usr/bin/podman') && existsSync('/usr/sbin/runc') && existsSync('/bin/busybox');
if (privileged && !inUserNamespace && !havePodman && process.env.CI) throw new Error('CI must install podman, runc and busybox-static');

const BUSYBOX_TOOLS = ['sh', 'ip', 'httpd', 'cat'];

/** A rootfs with busybox and a page to serve, as a tar podman imports. */
function busyboxImage(dir: string): string {
  const rootfs = join(dir, 'rootfs');
  mkdirSync(join(rootfs, 'bin'), { recursive: true });
  mkdirSync(join(rootfs, 'www'));
  copyFileSync('/bin/busybox', join(rootfs, 'bin', 'busybox'));
  for (const tool of BUSYBOX_TOOLS) symlinkSync('busybox', join(rootfs, 'bin', tool));
  writeFileSync(join(rootfs, 'www', 'index.html'), 'hello from the pod\n');
  return rootfs;
}

/** containers.conf as this VM needs it (see shared/reference/cni-craft.md): CNI backend, runc, cgroupfs, low limits. */
function containersConf(dir: string, pluginDir: string): string {
  const file = join(dir, 'containers.conf');
  writeFileSync(
    file,
    [
      '[containers]',
      'default_ulimits = ["nofile=1024:1024", "nproc=1024:1024"]',
      '[network]',
      'network_backend = "cni"',
      `cni_plugin_dirs = [${JSON.stringify(pluginDir)}, "/usr/lib/cni"]`,
      `network_config_dir = ${JSON.stringify(join(dir, 'net'))}`,
      '[engine]',
      'cgroup_manager = "cgroupfs"',
      'runtime = "runc"',
      'events_logger = "none"',
    ].join('\n'),
  );
  return file;
}

function get(url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    http.get(url, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk)).on('end', () => resolve(body));
    }).on('error', reject);
  });
}

let daemonLog = '';

function startDaemon(socketPath: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, [DAEMON, socketPath], { stdio: ['ignore', 'ignore', 'pipe'] });
  return new Promise((resolve, reject) => {
    child.stderr!.setEncoding('utf8').on('data', (text: string) => {
      daemonLog += text;
      if (daemonLog.includes('serving on')) resolve(child);
    });
    child.on('close', (code) => reject(new Error(`the daemon exited (${code}): ${daemonLog}`)));
  });
}

describe.skipIf(!privileged || inUserNamespace || !havePodman)('podman runs containers on cni-ptp', () => {
  const tag = randomBytes(3).toString('hex');
  let dir: string;
  let env: NodeJS.ProcessEnv;
  let daemon: ChildProcess | undefined;
  const podman = (...args: string[]) =>
    run('podman', ['--root', join(dir, 'root'), '--runroot', join(dir, 'runroot'), '--tmpdir', join(dir, 'tmp'), ...args], { env, encoding: 'utf8' });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), `netns-podman-${tag}-`));
    const perProcess = join(dir, 'per-process');
    const resident = join(dir, 'resident');
    mkdirSync(perProcess);
    mkdirSync(resident);
    symlinkSync(OURS, join(perProcess, 'cni-ptp'));
    copyFileSync(SHIM, join(resident, 'cni-ptp-resident'));
    mkdirSync(join(dir, 'net'));
    // one network per mode, each in its own subnet and IPAM folder; the plugin directories hold both names
    for (const [name, type, subnet] of [[`pp-${tag}`, 'cni-ptp', '10.91.1.0/24'], [`rs-${tag}`, 'cni-ptp-resident', '10.91.2.0/24']] as const) {
      const plugins = [
        { type, ipMasq: true, addressSets: { deleteDelayMs: 0 }, dataDir: join(dir, 'records'), ipam: { type: 'host-local', subnet, dataDir: join(dir, 'ipam'), routes: [{ dst: '0.0.0.0/0' }] } },
        { type: 'portmap', capabilities: { portMappings: true } },
        { type: 'tuning' },
      ];
      writeFileSync(join(dir, 'net', `${name}.conflist`), JSON.stringify({ cniVersion: '1.0.0', name, plugins }));
    }
    symlinkSync(join(resident, 'cni-ptp-resident'), join(perProcess, 'cni-ptp-resident'));
    const socketPath = join(dir, 'cni-ptp.sock');
    env = { ...process.env, CONTAINERS_CONF: containersConf(dir, perProcess), NETNS_CNI_SOCKET: socketPath };
    daemon = await startDaemon(socketPath);
    const rootfs = busyboxImage(dir);
    await run('tar', ['-C', rootfs, '-cf', join(dir, 'bb.tar'), '.']);
    await podman('import', join(dir, 'bb.tar'), `localhost/netns-bb-${tag}:1`);
  }, 120_000);

  afterAll(async () => {
    if (dir === undefined) return;
    await podman('rm', '-a', '-f', '-t', '0').catch(() => {});
    daemon?.kill('SIGTERM');
    await podman('system', 'reset', '-f').catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  }, 120_000);

  for (const [mode, network, port] of [['per process', 'pp', 18091], ['resident', 'rs', 18092]] as const) {
    it(`${mode}: the container gets its address, the published port reaches it, and rm leaves nothing of it`, async () => {
      const host = NetNS.current();
      const before = await snapshot(host, join(dir, 'ipam'));
      const name = `c-${network}-${tag}`;
      const { stdout: id } = await podman('run', '-d', '--name', name, '--network', `${network}-${tag}`, '-p', `127.0.0.1:${port}:8080`, `localhost/netns-bb-${tag}:1`, 'httpd', '-f', '-p', '8080', '-h', '/www');
      const { stdout: address } = await podman('inspect', '-f', `{{(index .NetworkSettings.Networks "${network}-${tag}").IPAddress}}`, name);
      expect(address.trim()).toMatch(network === 'pp' ? /^10\.91\.1\.\d+$/ : /^10\.91\.2\.\d+$/);
      expect(await get(`http://127.0.0.1:${port}/`)).toBe('hello from the pod\n');
      const during = await snapshot(host, join(dir, 'ipam'));
      expect(during.some((line) => line.includes(address.trim()))).toBe(true);
      const removed = await podman('rm', '-f', '-t', '0', name);
      const after = await snapshot(host, join(dir, 'ipam'));
      const left = after.filter((line) => !before.includes(line) && (line.includes(address.trim()) || line.includes(id.trim().slice(0, 12)) || line.startsWith('link ')));
      expect(left, `podman rm said: ${removed.stderr}\nthe daemon said: ${daemonLog}`).toEqual([]);
      host.close();
    }, 60_000);
  }
});
