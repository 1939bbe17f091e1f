// ADD and DEL of the cni-ptp example beside the official Go ptp plugin
// (Debian's containernetworking-plugins), both with host-local, invoked the
// same way (spawned in a scratch namespace standing for the host, config on
// stdin, stdout a pipe), taking turns, with `node -e 0` timed in the same
// rounds. Ours is what the example ships: one bundled CommonJS file, run as the
// plugin binary itself (its #! line starts node; npm run build:examples;
// docs/cni-packaging.md). CNI_PTP_BENCH_PLUGIN names another build of it to
// time in its place; CNI_PTP_BENCH_COMPARE one to time beside it, in the same
// rounds (a build from before a change: on a busy machine, separate runs differ
// more than builds do).
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { NetNS } from '../dist/index.js';
import { hostState, removeAppeared } from './cni-host-state.js';
import { median, nowUs, record } from './lib.js';

const ROUNDS = Number(process.env.CNI_BENCH_ROUNDS ?? 20);
const GO_PLUGINS = '/usr/lib/cni';
export const OURS = process.env.CNI_PTP_BENCH_PLUGIN ?? fileURLToPath(new URL('../examples/cni-ptp/dist/cni-ptp.cjs', import.meta.url));
const COMPARE = process.env.CNI_PTP_BENCH_COMPARE;

/** Runs argv inside `host` with `env` and `input`; resolves with the wall time in microseconds. */
export function timed(host, argv, env, input) {
  const start = nowUs();
  return new Promise((resolve, reject) => {
    const child = host.spawn(argv[0], argv.slice(1), { env, stdio: ['pipe', 'pipe', 'pipe'] }); // stdout a pipe, as runtimes read it
    let output = ''; // a plugin's error is JSON on stdout, a crash's on stderr
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(nowUs() - start) : reject(new Error(`${argv.join(' ')} ${env.CNI_COMMAND ?? ''} exited ${code}: ${output}`))));
    child.stdin.end(input ?? '');
  });
}

function plugin(name, argv, host, container, subnet) {
  const dataDir = mkdtempSync(join(tmpdir(), `netns-bench-cni-${name}-`));
  const config = JSON.stringify({ cniVersion: '1.0.0', name: `bench-${name}`, type: 'ptp', mtu: 1400, dataDir: join(dataDir, 'records'), ipam: { type: 'host-local', subnet, dataDir, routes: [{ dst: '0.0.0.0/0' }] } });
  const env = (command) => ({ PATH: process.env.PATH, CNI_COMMAND: command, CNI_CONTAINERID: `bench-${name}`, CNI_NETNS: container.path, CNI_IFNAME: 'eth0', CNI_PATH: GO_PLUGINS });
  return {
    add: () => timed(host, argv, env('ADD'), config),
    del: () => timed(host, argv, env('DEL'), config),
    dispose: () => rmSync(dataDir, { recursive: true, force: true }),
  };
}

export async function benchCniProcess([hostName, containerName]) {
  if (!existsSync(`${GO_PLUGINS}/ptp`)) return `skipped: the Go ptp plugin is not installed (apt-get install containernetworking-plugins)`;
  if (!existsSync(OURS)) return 'skipped: build the example first (npm run build:examples)';
  if (COMPARE !== undefined && !existsSync(COMPARE)) return `skipped: CNI_PTP_BENCH_COMPARE names no file (${COMPARE})`;
  const host = NetNS.open(hostName);
  const before = await hostState(host);
  const containers = [NetNS.open(containerName), await NetNS.create(), ...(COMPARE ? [await NetNS.create()] : [])];
  const go = plugin('go', [`${GO_PLUGINS}/ptp`], host, containers[0], '10.250.0.0/24');
  const ours = plugin('ours', [OURS], host, containers[1], '10.251.0.0/24');
  const other = COMPARE ? plugin('other', [COMPARE], host, containers[2], '10.249.0.0/24') : undefined;
  const times = { node: [], goAdd: [], goDel: [], oursAdd: [], oursDel: [], otherAdd: [], otherDel: [] };
  try {
    for (let round = 0; round < ROUNDS + 2; round++) {
      const warm = round < 2; // the first runs fill caches (page cache, the addon's first load)
      const node = await timed(host, [process.execPath, '-e', '0'], { PATH: process.env.PATH });
      const measured = { node, goAdd: await go.add(), oursAdd: await ours.add() };
      if (other) measured.otherAdd = await other.add();
      Object.assign(measured, { goDel: await go.del(), oursDel: await ours.del() });
      if (other) measured.otherDel = await other.del();
      if (warm) continue;
      for (const [key, value] of Object.entries(measured)) times[key].push(value);
    }
  } finally {
    await removeAppeared(host, before).finally(() => {
      for (const p of [go, ours, other]) p?.dispose();
      for (const c of containers) c.close();
      host.close();
    });
  }
  const ms = (list) => median(list) / 1000;
  const [goAdd, goDel] = [ms(times.goAdd), ms(times.goDel)];
  record('cni-process', 'Go ptp 1.1.1 ADD (median)', goAdd, 'ms');
  record('cni-process', 'Go ptp 1.1.1 DEL (median)', goDel, 'ms');
  record('cni-process', 'cni-ptp ADD, one process', ms(times.oursAdd), 'ms', 'Go ptp 1.1.1 ADD', goAdd);
  record('cni-process', 'cni-ptp DEL, one process', ms(times.oursDel), 'ms', 'Go ptp 1.1.1 DEL', goDel);
  record('cni-process', 'node -e 0 (the floor of a node process)', ms(times.node), 'ms', 'Go ptp 1.1.1 ADD', goAdd);
  // Issue 33's per-process goal: an ADD costs at most a node start and Go's whole ADD (1x).
  const floor = ms(times.node) + goAdd;
  record('cni-process', 'cni-ptp ADD, one process (goal <= 1x)', ms(times.oursAdd), 'ms', 'node -e 0 + Go ptp ADD', floor);
  if (other) {
    record('cni-process', 'CNI_PTP_BENCH_COMPARE ADD, one process', ms(times.otherAdd), 'ms', 'node -e 0 + Go ptp ADD', floor);
    record('cni-process', 'CNI_PTP_BENCH_COMPARE ADD, one process', ms(times.otherAdd), 'ms', 'Go ptp 1.1.1 ADD', goAdd);
    record('cni-process', 'CNI_PTP_BENCH_COMPARE DEL, one process', ms(times.otherDel), 'ms', 'Go ptp 1.1.1 DEL', goDel);
  }
  return undefined;
}
