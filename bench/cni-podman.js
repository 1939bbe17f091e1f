// A container's start in a real runtime with each kind of network:
// `podman run --rm IMAGE true` (podman 4.3, CNI backend, set up as the podman
// test sets it up: test/helpers/podman.mjs) on a network of Debian's Go ptp,
// of the cni-ptp example one process per call, of the example's resident
// daemon through the shim, and with `--network none` (podman without CNI).
// Each network is one ptp plugin with host-local and mtu, no ipMasq, as in the
// other CNI sections, and ours with deleteDelayMs 0, so that the DEL inside
// `--rm` does all its work. podman runs in the namespace standing for the
// host, where its veths land. The modes take turns in each round; medians of
// CNI_PODMAN_ROUNDS (7) rounds after a warm-up round. podman only logs a
// failed DEL, so the section fails if any address is still allocated after.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { isIP } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { NetNS } from '../dist/index.js';
import { SHIM } from '../test/helpers/cni-shim.mjs';
import { confinedPodman, havePodman, importBusybox, installCniPtp, removePodman, writeNetwork } from '../test/helpers/podman.mjs';
import { OURS } from './cni.js';
import { hostState, removeAppeared } from './cni-host-state.js';
import { DAEMON, startDaemon } from './cni-resident.js';
import { median, nowUs, record } from './lib.js';

const ROUNDS = Number(process.env.CNI_PODMAN_ROUNDS ?? 7);
const GO_PLUGINS = '/usr/lib/cni';
/** Every name this section gives podman (networks, the image, its folder) starts so. */
const PREFIX = `nsbench-podman-${process.pid}`;
const IMAGE = `localhost/${PREFIX}:1`;
/** The shim's name, and so its daemon's socket: /run/netns-cni/<name>.sock (test/helpers/podman.mjs says why not NETNS_CNI_SOCKET). */
const RESIDENT = `${PREFIX}-resident`;
/** Where libcni keeps each attachment's result until its DEL succeeds. */
const CNI_CACHE = '/var/lib/cni/results';
const SETS = { addressSets: { deleteDelayMs: 0 } };
/** The CNI modes: the plugin type each network names, its subnet, and what else it configures. */
const NETWORKS = {
  go: ['ptp', '10.236.0.0/24', {}],
  process: ['cni-ptp', '10.237.0.0/24', SETS],
  resident: [RESIDENT, '10.238.0.0/24', SETS],
};

function writeNetworks(dir) {
  for (const [mode, [type, subnet, extra]] of Object.entries(NETWORKS)) {
    const ipam = { type: 'host-local', subnet, dataDir: join(dir, 'ipam'), routes: [{ dst: '0.0.0.0/0' }] };
    writeNetwork(dir, `${PREFIX}-${mode}`, [{ type, mtu: 1400, dataDir: join(dir, 'records'), ipam, ...extra }]);
  }
}

/** Wall time in microseconds of one container's whole life on `network`. */
async function timedRun(podman, network) {
  const start = nowUs();
  await podman('run', '--rm', '--network', network, IMAGE, 'true');
  return nowUs() - start;
}

/** Runs the rounds; returns each mode's times. */
async function measure(podman) {
  const networks = { none: 'none', ...Object.fromEntries(Object.keys(NETWORKS).map((mode) => [mode, `${PREFIX}-${mode}`])) };
  const times = Object.fromEntries(Object.keys(networks).map((mode) => [mode, []]));
  for (let round = 0; round < ROUNDS + 1; round++) {
    for (const [mode, network] of Object.entries(networks)) {
      const time = await timedRun(podman, network);
      if (round > 0) times[mode].push(time); // the first round fills podman's storage and the page cache
    }
  }
  return times;
}

/** Throws if a DEL failed: host-local still holds an address (a file named by it). */
function expectAddressesReleased(dir) {
  const held = Object.keys(NETWORKS).flatMap((mode) => readdirSync(join(dir, 'ipam', `${PREFIX}-${mode}`)).filter((file) => isIP(file)));
  if (held.length > 0) throw new Error(`podman's DELs left addresses allocated: ${held.join(', ')}`);
}

/** The results libcni cached for this section's networks (a failed DEL leaves its own behind). */
function removeCachedResults() {
  if (!existsSync(CNI_CACHE)) return;
  for (const file of readdirSync(CNI_CACHE)) if (file.startsWith(`${PREFIX}-`)) rmSync(join(CNI_CACHE, file));
}

/** podman's containers and state first (their DELs need the daemon), then the daemon, then what appeared in `host`. */
async function cleanUp(podman, dir, daemon, host, before) {
  try {
    await removePodman(podman, dir);
    removeCachedResults();
  } finally {
    const child = await daemon.catch(() => undefined);
    child?.kill('SIGTERM');
    if (child) await new Promise((resolve) => child.once('close', resolve));
    await removeAppeared(host, before).finally(() => host.close());
  }
}

export async function benchCniPodman([hostName]) {
  if (!havePodman) return 'skipped: podman, runc and busybox-static are not installed';
  if (!existsSync(`${GO_PLUGINS}/ptp`)) return 'skipped: the Go ptp plugin is not installed (apt-get install containernetworking-plugins)';
  if (!existsSync(OURS) || !existsSync(DAEMON) || !existsSync(SHIM)) return 'skipped: build the shim and the example first (npm run build && npm run build:examples)';
  const host = NetNS.open(hostName);
  const before = await hostState(host);
  const dir = mkdtempSync(join(tmpdir(), `${PREFIX}-`));
  const pluginDir = join(dir, 'plugins');
  const podman = confinedPodman(dir, { pluginDir, exec: (command, args, options) => host.execFile(command, args, options) });
  const daemon = startDaemon(host, `/run/netns-cni/${RESIDENT}.sock`);
  const loadBefore = loadavg()[0];
  let times;
  try {
    mkdirSync(pluginDir);
    installCniPtp(pluginDir, OURS, RESIDENT);
    writeNetworks(dir);
    await daemon;
    await importBusybox(podman, dir, IMAGE, ['true']);
    times = await measure(podman);
    expectAddressesReleased(dir);
  } finally {
    await cleanUp(podman, dir, daemon, host, before);
  }
  const ms = (mode) => median(times[mode]) / 1000;
  const go = ms('go');
  record('cni-podman', 'podman run --rm, Go ptp 1.1.1 network (median)', go, 'ms');
  record('cni-podman', 'podman run --rm, cni-ptp one process per call', ms('process'), 'ms', 'podman run, Go ptp', go);
  record('cni-podman', 'podman run --rm, cni-ptp resident via shim', ms('resident'), 'ms', 'podman run, Go ptp', go);
  record('cni-podman', 'podman run --rm --network none (no CNI)', ms('none'), 'ms', 'podman run, Go ptp', go);
  record('cni-podman', 'load average (1 min) before the rounds', loadBefore, '');
  record('cni-podman', 'load average (1 min) after the rounds', loadavg()[0], '');
  return undefined;
}
