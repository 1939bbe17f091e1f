// A pod storm: STORM calls at once, all ADDs, then all DELs, of one network,
// each in a container namespace of its own, for Go's ptp (Debian's, spawned
// per call as a runtime would), the cni-ptp example as one process per call,
// and the example's resident daemon through the shim (with address sets, and
// without as a reference). All use host-local. Each storm's wall time runs
// from the first spawn to the last exit; the kinds take turns in each round,
// and the figures are medians of the rounds. Address sets are destroyed at
// DEL (deleteDelayMs 0), so a DEL storm must leave nothing on the host: no
// veth, no table; a round that leaves something fails the bench.
// CNI_STORM_CALLS (50) and CNI_STORM_ROUNDS (3) change the storm; CNI_STORM_KINDS
// (e.g. go,resident) times only those kinds (the per-process storm takes minutes).
import { existsSync, mkdtempSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { NetNS } from '../dist/index.js';
import { OURS, timed } from './cni.js';
import { SHIM, installShim } from '../test/helpers/cni-shim.mjs';
import { DAEMON, startDaemon, tearDown } from './cni-resident.js';
import { appearedSince, hostState } from './cni-host-state.js';
import { median, nowUs, record } from './lib.js';

const STORM = Number(process.env.CNI_STORM_CALLS ?? 50);
const ROUNDS = Number(process.env.CNI_STORM_ROUNDS ?? 3);
const GO_PLUGINS = '/usr/lib/cni';

function network(kind, argv, host, containers, subnet, extra, dirs) {
  const dataDir = mkdtempSync(join(tmpdir(), `netns-bench-storm-${kind}-`));
  dirs.push(dataDir);
  const config = JSON.stringify({ cniVersion: '1.0.0', name: `storm-${kind}`, type: 'ptp', mtu: 1400, dataDir: join(dataDir, 'records'), ipam: { type: 'host-local', subnet, dataDir, routes: [{ dst: '0.0.0.0/0' }] }, ...extra });
  const env = (command, i) => ({ PATH: process.env.PATH, CNI_COMMAND: command, CNI_CONTAINERID: `storm-${kind}-${i}`, CNI_NETNS: containers[i].path, CNI_IFNAME: 'eth0', CNI_PATH: GO_PLUGINS });
  /** Wall time in microseconds of every call of `command` at once. */
  const storm = async (command) => {
    const start = nowUs();
    await Promise.all(containers.map((_, i) => timed(host, argv, env(command, i), config)));
    return nowUs() - start;
  };
  return { add: () => storm('ADD'), del: () => storm('DEL') };
}

/** Throws if a DEL storm left a veth or an nftables table in the host namespace that was not there before the storms. */
async function expectNothingLeft(host, before, kind) {
  const { veths, tables } = await appearedSince(host, before);
  if (veths.length > 0 || tables.length > 0) throw new Error(`the ${kind} DEL storm left veths [${veths.join(', ')}], tables [${tables.join(', ')}]`);
}

export async function benchCniStorm([hostName]) {
  if (!existsSync(`${GO_PLUGINS}/ptp`)) return 'skipped: the Go ptp plugin is not installed (apt-get install containernetworking-plugins)';
  if (!existsSync(OURS) || !existsSync(DAEMON) || !existsSync(SHIM)) return 'skipped: build the shim and the example first (npm run build && npm run build:examples)';
  const dirs = [mkdtempSync(join(tmpdir(), 'netns-bench-storm-shim-'))];
  const name = `cni-ptp-storm-${process.pid}`;
  const shim = installShim(dirs[0], name);
  const host = NetNS.open(hostName);
  const before = await hostState(host);
  const containers = await Promise.all(Array.from({ length: STORM }, () => NetNS.create()));
  // Each delegate (host-local) holds a libuv pool thread while it runs: as many as the calls at once (docs/cni.md).
  const daemon = await startDaemon(host, `/run/netns-cni/${name}.sock`);
  const sets = { addressSets: { deleteDelayMs: 0 } };
  const kinds = {
    go: network('go', [`${GO_PLUGINS}/ptp`], host, containers, '10.240.0.0/24', {}, dirs),
    process: network('process', [OURS], host, containers, '10.241.0.0/24', sets, dirs),
    resident: network('resident', [shim], host, containers, '10.242.0.0/24', sets, dirs),
    residentNoSets: network('resident-nosets', [shim], host, containers, '10.243.0.0/24', { addressSets: false }, dirs),
  };
  const only = process.env.CNI_STORM_KINDS?.split(',');
  if (only) for (const kind of Object.keys(kinds)) if (!only.includes(kind)) delete kinds[kind];
  const times = Object.fromEntries(Object.keys(kinds).flatMap((kind) => [[`${kind}Add`, []], [`${kind}Del`, []]]));
  const loadBefore = loadavg()[0];
  try {
    for (let round = 0; round < ROUNDS + 1; round++) {
      for (const [kind, storms] of Object.entries(kinds)) {
        const add = await storms.add();
        const del = await storms.del();
        await expectNothingLeft(host, before, kind);
        if (round === 0) continue; // the first storm loads the daemon's modules and fills caches
        times[`${kind}Add`].push(add);
        times[`${kind}Del`].push(del);
      }
    }
  } finally {
    await tearDown(daemon, containers, host, before, dirs);
  }
  const ms = (key) => median(times[key]) / 1000;
  const go = { ADD: ms('goAdd'), DEL: ms('goDel') };
  const labels = {
    process: 'cni-ptp, one process per call',
    resident: 'resident via shim (goal <= 1.0x)',
    residentNoSets: 'resident, addressSets: false',
  };
  for (const command of ['ADD', 'DEL']) {
    const key = command === 'ADD' ? 'Add' : 'Del';
    record('cni-storm', `Go ptp 1.1.1, ${STORM} ${command}s at once (median)`, go[command], 'ms');
    for (const [kind, label] of Object.entries(labels)) {
      if (kinds[kind]) record('cni-storm', `${label}, ${STORM} ${command}s at once`, ms(`${kind}${key}`), 'ms', `Go ptp ${command}s`, go[command]);
    }
  }
  record('cni-storm', 'load average (1 min) before the rounds', loadBefore, '');
  record('cni-storm', 'load average (1 min) after the rounds', loadavg()[0], '');
  return undefined;
}
