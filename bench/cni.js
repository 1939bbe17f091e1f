// ADD and DEL of the cni-ptp example beside the official Go ptp plugin
// (Debian's containernetworking-plugins), both with host-local, invoked the
// same way (spawned in a scratch namespace standing for the host, config on
// stdin), taking turns, with `node -e 0` timed in the same rounds. Ours runs
// twice: by `node` as ES modules, and packaged as one executable
// (docs/cni-packaging.md; no module loader, a code cache).
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { NetNS } from '../dist/index.js';
import { buildPtpExecutable } from './cni-sea.js';
import { median, nowUs, record } from './lib.js';

const ROUNDS = 20;
const GO_PLUGINS = '/usr/lib/cni';
const OURS = fileURLToPath(new URL('../examples/cni-ptp/dist/main.js', import.meta.url));

/** Runs argv inside `host` with `env` and `input`; resolves with the wall time in microseconds. */
export function timed(host, argv, env, input) {
  const start = nowUs();
  return new Promise((resolve, reject) => {
    const child = host.spawn(argv[0], argv.slice(1), { env, stdio: ['pipe', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(nowUs() - start) : reject(new Error(`${argv.join(' ')} ${env.CNI_COMMAND ?? ''} exited ${code}: ${stderr}`))));
    child.stdin.end(input ?? '');
  });
}

function plugin(name, argv, host, container, subnet) {
  const dataDir = mkdtempSync(join(tmpdir(), `netns-bench-cni-${name}-`));
  const config = JSON.stringify({ cniVersion: '1.0.0', name: `bench-${name}`, type: 'ptp', mtu: 1400, ipam: { type: 'host-local', subnet, dataDir, routes: [{ dst: '0.0.0.0/0' }] } });
  const env = (command) => ({ PATH: process.env.PATH, CNI_COMMAND: command, CNI_CONTAINERID: `bench-${name}`, CNI_NETNS: container.path, CNI_IFNAME: 'eth0', CNI_PATH: GO_PLUGINS });
  return {
    add: () => timed(host, argv, env('ADD'), config),
    del: () => timed(host, argv, env('DEL'), config),
    dispose: () => rmSync(dataDir, { recursive: true, force: true }),
  };
}

export async function benchCni([hostName, containerName]) {
  if (!existsSync(`${GO_PLUGINS}/ptp`)) return `skipped: the Go ptp plugin is not installed (apt-get install containernetworking-plugins)`;
  if (!existsSync(OURS)) return 'skipped: build the example first (npm run build:examples)';
  const host = NetNS.open(hostName);
  const containers = [NetNS.open(containerName), await NetNS.create(), await NetNS.create()];
  const go = plugin('go', [`${GO_PLUGINS}/ptp`], host, containers[0], '10.250.0.0/24');
  const ours = plugin('ours', [process.execPath, OURS], host, containers[1], '10.251.0.0/24');
  const sea = plugin('sea', [buildPtpExecutable(OURS)], host, containers[2], '10.252.0.0/24');
  const times = { node: [], goAdd: [], goDel: [], oursAdd: [], oursDel: [], seaAdd: [], seaDel: [] };
  try {
    for (let round = 0; round < ROUNDS + 2; round++) {
      const warm = round < 2; // the first runs fill caches (page cache, the addon's first load)
      const node = await timed(host, [process.execPath, '-e', '0'], { PATH: process.env.PATH });
      const measured = { node, goAdd: await go.add(), oursAdd: await ours.add(), seaAdd: await sea.add(), goDel: await go.del(), oursDel: await ours.del(), seaDel: await sea.del() };
      if (warm) continue;
      for (const [key, value] of Object.entries(measured)) times[key].push(value);
    }
  } finally {
    for (const p of [go, ours, sea]) p.dispose();
    for (const c of containers) c.close();
    host.close();
  }
  const ms = (list) => median(list) / 1000;
  const node = ms(times.node);
  record('cni', 'node -e 0 (median)', node, 'ms');
  record('cni', 'cni-ptp ADD (median)', ms(times.oursAdd), 'ms', 'Go ptp 1.1.1 ADD', ms(times.goAdd));
  record('cni', 'cni-ptp ADD minus node -e 0 (goal <= 1.5x)', ms(times.oursAdd) - node, 'ms', 'Go ptp 1.1.1 ADD', ms(times.goAdd));
  record('cni', 'cni-ptp DEL (median)', ms(times.oursDel), 'ms', 'Go ptp 1.1.1 DEL', ms(times.goDel));
  record('cni', 'cni-ptp DEL minus node -e 0', ms(times.oursDel) - node, 'ms', 'Go ptp 1.1.1 DEL', ms(times.goDel));
  record('cni', 'cni-ptp as one executable, ADD minus node -e 0', ms(times.seaAdd) - node, 'ms', 'Go ptp 1.1.1 ADD', ms(times.goAdd));
  record('cni', 'cni-ptp as one executable, DEL minus node -e 0', ms(times.seaDel) - node, 'ms', 'Go ptp 1.1.1 DEL', ms(times.goDel));
  return undefined;
}
