// Baselines for the netlink API (issue 12, "Speed"): the same three scenarios
// done by Go's vishvananda/netlink (bench/go-netlink) and by `ip` commands.
//   1. address add + delete: 10.99.x.y/32 on lo in namespace A;
//   2. the ptp sequence: veth made in A with its peer placed in B, both ends up,
//      an address on each, a default route in B via A's address (onlink), a host
//      route in A to B's address; deleting the veth is timed apart;
//   3. a dump of A's IPv4 main table holding 10,000 /32 routes on lo.
// Every figure is a median in microseconds. Both leave the namespaces as found.
// `node bench/netlink-baselines.js` (as root) prints them on scratch namespaces.
import { execFileSync } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { buildGoProgram, commandMedianUs, median, scratchFile, scratchNamespaces } from './lib.js';

/** What both baselines do, so the bench section can do exactly the same. */
export const SCENARIO = {
  addr: { dev: 'lo', address: (i) => `10.99.${(i >> 8) & 255}.${i & 255}/32` },
  ptp: { hostEnd: 'nlbench-a', peerEnd: 'nlbench-b', hostAddress: '10.200.0.1', peerAddress: '10.200.0.2' },
  routes: { count: 10_000, dev: 'lo', destination: (i) => `10.100.${(i >> 8) & 255}.${i & 255}/32` },
};

export const GO_RUNS = { addr: 1000, ptp: 200, dumps: 50 };
export const IP_RUNS = { addr: 100, ptp: 30, dumps: 20 };

const GO_PACKAGES = 'golang-go golang-github-vishvananda-netlink-dev golang-github-vishvananda-netns-dev';

let goReason;

/** Why goNetlinkBaseline last returned null (undefined if it did not). */
export function goNetlinkReason() {
  return goReason;
}

function stderrOf(error) {
  return String(error.stderr ?? '').trim() || error.message;
}

/**
 * vishvananda/netlink measured in this run: { addrAddDelUs, ptpUs, ptpDeleteUs,
 * routeDumpUs, routesDumped, routeInstallOneByOneUs, runs }. Built once per run,
 * measured anew on every call (a bench alternates it with its own rounds). Null
 * when Go or the library is missing or the run fails; the reason is printed (as
 * goNsDo does) and kept in goNetlinkReason(). Synchronous, about 7 s with the
 * default runs (200 veth deletions dominate).
 */
export function goNetlinkBaseline(nsPathA, nsPathB, runs = GO_RUNS) {
  let result = null;
  goReason = undefined;
  const { binary, reason } = buildGoProgram('go-netlink', 'vishvananda/netlink', GO_PACKAGES);
  goReason = reason;
  if (binary) {
    const { addr, ptp, dumps } = { ...GO_RUNS, ...runs };
    const args = ['-a', nsPathA, '-b', nsPathB, '-addr', `${addr}`, '-ptp', `${ptp}`, '-dumps', `${dumps}`, '-routes', `${SCENARIO.routes.count}`];
    try {
      result = JSON.parse(execFileSync(binary, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }));
    } catch (error) {
      goReason = `go-netlink failed: ${stderrOf(error)}`;
    }
  }
  if (!result) console.error(`bench: Go netlink baseline not available: ${goReason}`);
  return result;
}

/** The ptp sequence as `ip` commands, one process each, in the order the CNI ptp plugin goes. */
export function ptpCommands(nameA, nameB) {
  const { hostEnd, peerEnd, hostAddress, peerAddress } = SCENARIO.ptp;
  return [
    ['ip', '-n', nameA, 'link', 'add', hostEnd, 'type', 'veth', 'peer', 'name', peerEnd, 'netns', nameB],
    ['ip', '-n', nameA, 'link', 'set', hostEnd, 'up'],
    ['ip', '-n', nameB, 'link', 'set', peerEnd, 'up'],
    ['ip', '-n', nameA, 'addr', 'add', `${hostAddress}/32`, 'dev', hostEnd],
    ['ip', '-n', nameB, 'addr', 'add', `${peerAddress}/32`, 'dev', peerEnd],
    ['ip', '-n', nameB, 'route', 'add', 'default', 'via', hostAddress, 'dev', peerEnd, 'onlink'],
    ['ip', '-n', nameA, 'route', 'add', `${peerAddress}/32`, 'dev', hostEnd, 'scope', 'link'],
  ];
}

/** Wall time of one command to exit, via lib.js. */
const onceUs = (argv) => commandMedianUs(argv, 1);

function routeBatch(verb) {
  const { count, dev, destination } = SCENARIO.routes;
  const lines = Array.from({ length: count }, (_, i) => `route ${verb} ${destination(i)} dev ${dev} scope link`);
  return scratchFile(`routes-${verb}.batch`, `${lines.join('\n')}\n`);
}

function quietly(argv) {
  try {
    execFileSync(argv[0], argv.slice(1), { stdio: 'ignore' });
  } catch {
    // nothing to undo
  }
}

/**
 * The same scenarios with `ip` commands, spawned as an operator or a shell
 * plugin would: { addrAddDelUs, ptpUs, ptpDeleteUs, routeDumpUs, routesDumped,
 * routeInstallBatchUs, spawnFloorUs, processes: { addrAddDel, ptp, ptpDelete, routeDump },
 * runs }. spawnFloorUs is `true` spawned the same way: what each process costs
 * before `ip` does anything (about 12 ms from Node on a loaded 2-CPU VM).
 */
export async function ipCommandBaselines(nameA, nameB, runs = IP_RUNS) {
  const { addr, ptp, dumps } = { ...IP_RUNS, ...runs };
  const result = { processes: { addrAddDel: 2, ptp: ptpCommands(nameA, nameB).length, ptpDelete: 1, routeDump: 1 }, runs: { addr, ptp, dumps, routes: SCENARIO.routes.count } };

  result.spawnFloorUs = await commandMedianUs(['true'], 20);

  const pairs = [];
  for (let i = 0; i < addr; i++) {
    const address = SCENARIO.addr.address(i);
    try {
      pairs.push(
        (await onceUs(['ip', '-n', nameA, 'addr', 'add', address, 'dev', SCENARIO.addr.dev])) +
          (await onceUs(['ip', '-n', nameA, 'addr', 'del', address, 'dev', SCENARIO.addr.dev])),
      );
    } catch (error) {
      quietly(['ip', '-n', nameA, 'addr', 'del', address, 'dev', SCENARIO.addr.dev]);
      throw error;
    }
  }
  result.addrAddDelUs = median(pairs);

  const setups = [];
  const deletes = [];
  const deleteVeth = ['ip', '-n', nameA, 'link', 'del', SCENARIO.ptp.hostEnd];
  try {
    for (let i = 0; i < ptp; i++) {
      let total = 0;
      for (const argv of ptpCommands(nameA, nameB)) total += await onceUs(argv);
      setups.push(total);
      deletes.push(await onceUs(deleteVeth));
    }
  } catch (error) {
    quietly(deleteVeth);
    throw error;
  }
  result.ptpUs = median(setups);
  result.ptpDeleteUs = median(deletes);

  const removeRoutes = ['ip', '-n', nameA, '-force', '-batch', routeBatch('del')];
  try {
    result.routeInstallBatchUs = await onceUs(['ip', '-n', nameA, '-batch', routeBatch('add')]);
    result.routeDumpUs = await commandMedianUs(['ip', '-n', nameA, 'route', 'show'], dumps);
    result.routesDumped = execFileSync('ip', ['-n', nameA, 'route', 'show'], { encoding: 'utf8', maxBuffer: 64 << 20 }).trim().split('\n').length;
  } finally {
    quietly(removeRoutes);
  }
  return result;
}

function isMain() {
  try {
    return realpathSync(process.argv[1]) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isMain()) {
  if (process.getuid?.() !== 0) {
    console.error('netlink-baselines: needs root to create namespaces');
    process.exit(1);
  }
  const [a, b] = scratchNamespaces(2);
  const go = goNetlinkBaseline(`/run/netns/${a}`, `/run/netns/${b}`);
  const ip = await ipCommandBaselines(a, b);
  const rows = [
    ['address add + delete (pair)', 'addrAddDelUs', ip.processes.addrAddDel],
    ['ptp sequence', 'ptpUs', ip.processes.ptp],
    ['ptp: veth delete (apart)', 'ptpDeleteUs', ip.processes.ptpDelete],
    [`dump of ${SCENARIO.routes.count.toLocaleString('en')} routes`, 'routeDumpUs', ip.processes.routeDump],
  ];
  const fmt = (v) => (v === undefined ? '-' : v >= 100 ? v.toFixed(0) : v.toFixed(1));
  const table = [
    ['scenario (median, us)', 'Go netlink', 'ip commands', 'ip processes', 'ip / Go'],
    ...rows.map(([label, key, procs]) => [label, fmt(go?.[key]), fmt(ip[key]), `${procs}`, go ? `${(ip[key] / go[key]).toFixed(1)}x` : '-']),
  ];
  const widths = table[0].map((_, i) => Math.max(...table.map((r) => r[i].length)));
  for (const row of table) console.log(row.map((c, i) => c.padEnd(widths[i])).join('  '));
  console.log(`spawning \`true\` the same way: ${fmt(ip.spawnFloorUs)} us per process (in every ip figure)`);
  console.log(`routes seen by the dumps: Go ${go?.routesDumped ?? '-'}, ip ${ip.routesDumped}`);
  console.log(`installing ${SCENARIO.routes.count} routes (not compared): Go one request each ${fmt(go?.routeInstallOneByOneUs)} us, ip -batch ${fmt(ip.routeInstallBatchUs)} us`);
  console.log(JSON.stringify({ go, ip }));
}
