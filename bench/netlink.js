// netns/netlink beside vishvananda/netlink (Go) and `ip` commands, doing the
// same three scenarios (bench/netlink-baselines.js): an address added and
// deleted, the ptp sequence across two namespaces, a dump of 10,000 routes.
// Ours and Go's take turns, ROUNDS times, so a slow spell of this machine falls
// on both; each figure is the median of the rounds' medians. Ours first runs
// each scenario once untimed (WARM_UP): V8 compiles the hot paths in the first
// few hundred calls, where Go is compiled ahead of time.
import { NetNS } from '../dist/index.js';
import { openNetlink } from '../dist/netlink/index.js';
import { median, nowUs, record } from './lib.js';
import { goNetlinkBaseline, goNetlinkReason, ipCommandBaselines, SCENARIO } from './netlink-baselines.js';

const ROUNDS = 3;
const RUNS = { addr: 1000, ptp: 100, dumps: 20 };
const WARM_UP = { addr: 1000, ptp: 20, dumps: 3 };

async function addressAddDeleteUs(nl, runs) {
  const lo = await nl.links.index(SCENARIO.addr.dev); // as Go's handle is given a Link
  const times = [];
  for (let i = 0; i < runs; i++) {
    const address = SCENARIO.addr.address(i);
    const start = nowUs();
    await nl.addresses.add({ link: lo, address });
    await nl.addresses.delete({ link: lo, address });
    times.push(nowUs() - start);
  }
  return median(times);
}

async function ptpOnce(nlA, nlB, b) {
  const { hostEnd, peerEnd, hostAddress, peerAddress } = SCENARIO.ptp;
  const host = await nlA.links.add({ kind: 'veth', name: hostEnd, up: true, peer: { name: peerEnd, netns: b } });
  const peer = await nlB.links.index(peerEnd);
  await nlB.links.set(peer, { up: true });
  await nlA.addresses.add({ link: host.index, address: `${hostAddress}/32` });
  await nlB.addresses.add({ link: peer, address: `${peerAddress}/32` });
  await nlB.routes.add({ destination: 'default', gateway: hostAddress, device: peer, onlink: true });
  await nlA.routes.add({ destination: `${peerAddress}/32`, device: host.index, scope: 'link' });
  return host.index;
}

async function ptpUs(nlA, nlB, b, runs) {
  const times = [];
  const deletes = [];
  for (let i = 0; i < runs; i++) {
    const start = nowUs();
    const host = await ptpOnce(nlA, nlB, b);
    times.push(nowUs() - start);
    const deleting = nowUs();
    await nlA.links.delete(host);
    deletes.push(nowUs() - deleting);
  }
  return { ptp: median(times), ptpDelete: median(deletes) };
}

async function routeDumpUs(nl, runs) {
  const lo = await nl.links.index(SCENARIO.routes.dev);
  const destinations = Array.from({ length: SCENARIO.routes.count }, (_, i) => SCENARIO.routes.destination(i));
  for (const destination of destinations) await nl.routes.add({ destination, device: lo });
  try {
    const times = [];
    let dumped = 0;
    for (let i = 0; i < runs; i++) {
      const start = nowUs();
      dumped = (await nl.routes.list({ family: 4 })).length;
      times.push(nowUs() - start);
    }
    if (dumped < SCENARIO.routes.count) throw new Error(`dumped ${dumped} routes, expected ${SCENARIO.routes.count}`);
    return median(times);
  } finally {
    for (const destination of destinations) await nl.routes.delete({ destination, device: lo });
  }
}

/** Per key, the median of the rounds' figures. */
function medians(rounds, keys) {
  return Object.fromEntries(keys.map((key) => [key, median(rounds.map((round) => round[key]))]));
}

export async function benchNetlink([nameA, nameB]) {
  const [a, b] = [NetNS.open(nameA), NetNS.open(nameB)];
  const [nlA, nlB] = [await openNetlink(a), await openNetlink(b)];
  const scenarios = async (runs) => ({ addr: await addressAddDeleteUs(nlA, runs.addr), ...(await ptpUs(nlA, nlB, b, runs.ptp)), dump: await routeDumpUs(nlA, runs.dumps) });
  try {
    await scenarios(WARM_UP);
    const oursRounds = [];
    const goRounds = [];
    for (let round = 0; round < ROUNDS; round++) {
      oursRounds.push(await scenarios(RUNS));
      if (goRounds.length < round) continue; // Go failed once: its reason is printed
      const go = goNetlinkBaseline(a.path, b.path, RUNS);
      if (go) goRounds.push(go);
    }
    const ours = medians(oursRounds, ['addr', 'ptp', 'ptpDelete', 'dump']);
    const go = goRounds.length === ROUNDS ? medians(goRounds, ['addrAddDelUs', 'ptpUs', 'ptpDeleteUs', 'routeDumpUs']) : null;
    const ip = await ipCommandBaselines(nameA, nameB);
    const rows = [
      ['address add + delete (median)', ours.addr, go?.addrAddDelUs, ip.addrAddDelUs],
      ['ptp sequence: veth across 2 namespaces, up, 2 addresses, 2 routes (median)', ours.ptp, go?.ptpUs, ip.ptpUs],
      ['veth delete (median, apart)', ours.ptpDelete, go?.ptpDeleteUs, ip.ptpDeleteUs],
      [`dump of ${SCENARIO.routes.count} routes (median)`, ours.dump, go?.routeDumpUs, ip.routeDumpUs],
    ];
    for (const [metric, value, goValue, ipValue] of rows) {
      if (goValue !== undefined) record('netlink', metric, value, 'us', 'Go vishvananda/netlink', goValue);
      record('netlink', metric, value, 'us', 'ip commands', ipValue);
    }
    return go ? undefined : `Go baseline missing: ${goNetlinkReason()}`;
  } finally {
    nlA.close();
    nlB.close();
    a.close();
    b.close();
  }
}
