// Resident mode beside the official Go ptp plugin: each call spawns the
// static shim (installed under the plugin's name) in the namespace standing
// for the host, and the cni-ptp example's daemon, started once there, serves
// it; Go's ptp is spawned the same way. Both use host-local. Rounds take
// turns (Go, then ours with address sets, then ours without) so that load
// falls on all alike; the load average is printed with the figures.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { NetNS } from '../dist/index.js';
import { SHIM, installShim } from '../test/helpers/cni-shim.mjs';
import { timed } from './cni.js';
import { hostState, removeAppeared } from './cni-host-state.js';
import { median, record } from './lib.js';

const ROUNDS = 30;
const GO_PLUGINS = '/usr/lib/cni';
export const DAEMON = fileURLToPath(new URL('../examples/cni-ptp/dist/cni-ptp-daemon.cjs', import.meta.url));

/**
 * Stops the daemon (awaiting its end), removes the veths and tables that
 * appeared in `host` since `before`, closes the namespaces' handles and
 * removes the bench's folders.
 */
export async function tearDown(daemon, containers, host, before, dirs) {
  daemon.kill('SIGTERM');
  await new Promise((resolve) => daemon.once('close', resolve));
  try {
    await removeAppeared(host, before);
  } finally {
    for (const c of containers) c.close();
    host.close();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  }
}

/** The example's daemon in `host`, once it says it serves; `env` adds to its environment. */
export function startDaemon(host, socketPath, env = {}) {
  const child = host.spawn(process.execPath, [DAEMON, socketPath], { env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  return new Promise((resolve, reject) => {
    child.stderr.setEncoding('utf8').on('data', (text) => {
      stderr += text;
      if (stderr.includes('serving on')) resolve(child);
    });
    child.on('close', (code) => reject(new Error(`the resident daemon exited (${code}): ${stderr}`)));
  });
}

function attachment(name, argv, host, container, subnet, extra, dirs) {
  const dataDir = mkdtempSync(join(tmpdir(), `netns-bench-resident-${name}-`));
  dirs.push(dataDir);
  const config = JSON.stringify({ cniVersion: '1.0.0', name: `bench-${name}`, type: 'ptp', mtu: 1400, dataDir: join(dataDir, 'records'), ipam: { type: 'host-local', subnet, dataDir, routes: [{ dst: '0.0.0.0/0' }] }, ...extra });
  const env = (command) => ({ PATH: process.env.PATH, CNI_COMMAND: command, CNI_CONTAINERID: `bench-${name}`, CNI_NETNS: container.path, CNI_IFNAME: 'eth0', CNI_PATH: GO_PLUGINS });
  return { add: () => timed(host, argv, env('ADD'), config), del: () => timed(host, argv, env('DEL'), config) };
}

export async function benchCniResident([hostName]) {
  if (!existsSync(`${GO_PLUGINS}/ptp`)) return 'skipped: the Go ptp plugin is not installed (apt-get install containernetworking-plugins)';
  if (!existsSync(DAEMON) || !existsSync(SHIM)) return 'skipped: build the shim and the example first (npm run build && npm run build:examples)';
  const dirs = [mkdtempSync(join(tmpdir(), 'netns-bench-shim-'))];
  const name = `cni-ptp-bench-${process.pid}`;
  const shim = installShim(dirs[0], name);
  const host = NetNS.open(hostName);
  const before = await hostState(host);
  const containers = [await NetNS.create(), await NetNS.create(), await NetNS.create()];
  const daemon = await startDaemon(host, `/run/netns-cni/${name}.sock`);
  const kinds = {
    go: attachment('go', [`${GO_PLUGINS}/ptp`], host, containers[0], '10.253.0.0/24', {}, dirs),
    resident: attachment('resident', [shim], host, containers[1], '10.254.0.0/24', {}, dirs),
    residentNoSets: attachment('resident-nosets', [shim], host, containers[2], '10.255.0.0/24', { addressSets: false }, dirs),
  };
  const times = Object.fromEntries(Object.keys(kinds).flatMap((kind) => [[`${kind}Add`, []], [`${kind}Del`, []]]));
  const loadBefore = loadavg()[0];
  try {
    for (let round = 0; round < ROUNDS + 3; round++) {
      const measured = {};
      for (const [kind, p] of Object.entries(kinds)) measured[`${kind}Add`] = await p.add();
      for (const [kind, p] of Object.entries(kinds)) measured[`${kind}Del`] = await p.del();
      if (round < 3) continue; // the first calls load the handlers' modules and fill caches
      for (const [key, value] of Object.entries(measured)) times[key].push(value);
    }
  } finally {
    await tearDown(daemon, containers, host, before, dirs);
  }
  const ms = (key) => median(times[key]) / 1000;
  record('cni-resident', 'resident ADD via shim (median, goal <= 1.3x)', ms('residentAdd'), 'ms', 'Go ptp 1.1.1 ADD', ms('goAdd'));
  record('cni-resident', 'resident DEL via shim (median, goal <= 1.3x)', ms('residentDel'), 'ms', 'Go ptp 1.1.1 DEL', ms('goDel'));
  record('cni-resident', 'resident ADD, addressSets: false', ms('residentNoSetsAdd'), 'ms', 'Go ptp 1.1.1 ADD', ms('goAdd'));
  record('cni-resident', 'resident DEL, addressSets: false', ms('residentNoSetsDel'), 'ms', 'Go ptp 1.1.1 DEL', ms('goDel'));
  record('cni-resident', 'load average (1 min) before the rounds', loadBefore, '');
  record('cni-resident', 'load average (1 min) after the rounds', loadavg()[0], '');
  return undefined;
}
