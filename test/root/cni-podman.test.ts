// A real runtime drives the cni-ptp example: podman 4.3 with its CNI backend
// (runc, cgroupfs, the low nofile/nproc limits this VM needs), a busybox image
// imported from Debian's busybox-static (no registry), a container on
// [cni-ptp, portmap, tuning] with a published port, per process and resident
// (the shim installed under the plugin's name). The container gets its
// address, the published port reaches it, and `podman rm` leaves nothing that
// names it. Everything podman keeps (storage, run state) is in a temporary
// folder (test/helpers/podman.mjs sets podman up); its networking happens in
// the suite's throwaway namespace.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NetNS } from '../../dist/index.js';
import { snapshot } from '../../dist/cni/testing/conformance/snapshot.js';
import { OURS } from '../helpers/cni-ptp.js';
import { confinedPodman, havePodman, importBusybox, installCniPtp, removePodman, writeNetwork, type Podman } from '../helpers/podman.mjs';
import { inUserNamespace, privileged } from '../helpers/privileges.js';

const DAEMON = fileURLToPath(new URL('../../examples/cni-ptp/dist/cni-ptp-daemon.cjs', import.meta.url));
if (privileged && !inUserNamespace && !havePodman && process.env.CI) throw new Error('CI must install podman, runc and busybox-static');

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
  const residentName = `cni-ptp-rs-${tag}`;
  let dir: string;
  let podman: Podman;
  let daemon: ChildProcess | undefined;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), `netns-podman-${tag}-`));
    const plugins = join(dir, 'plugins');
    mkdirSync(plugins);
    // The shim under a name of this run's, which finds its daemon with no NETNS_CNI_SOCKET:
    // podman runs a DEL from conmon's exit command too, and that does not pass the variable on.
    installCniPtp(plugins, OURS, residentName);
    const socketPath = `/run/netns-cni/${residentName}.sock`;
    podman = confinedPodman(dir, { pluginDir: plugins });
    // one network per mode, each in its own subnet and IPAM folder
    for (const [name, type, subnet] of [[`pp-${tag}`, 'cni-ptp', '10.91.1.0/24'], [`rs-${tag}`, residentName, '10.91.2.0/24']] as const) {
      writeNetwork(dir, name, [
        { type, ipMasq: true, addressSets: { deleteDelayMs: 0 }, dataDir: join(dir, 'records'), ipam: { type: 'host-local', subnet, dataDir: join(dir, 'ipam'), routes: [{ dst: '0.0.0.0/0' }] } },
        { type: 'portmap', capabilities: { portMappings: true } },
        { type: 'tuning' },
      ]);
    }
    daemon = await startDaemon(socketPath);
    await importBusybox(podman, dir, `localhost/netns-bb-${tag}:1`, ['sh', 'ip', 'httpd', 'cat'], { 'www/index.html': 'hello from the pod\n' });
  }, 120_000);

  afterAll(async () => {
    if (dir === undefined) return;
    await removePodman(podman, dir);
    daemon?.kill('SIGTERM');
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
