// The lab benchmark's own side, one round per process (as Mininet's): builds
// bench/lab-topology.js's spec with createLab (netns/testing), times it and
// lab.delete(), and prints one JSON line: buildMs, deleteMs, the process's
// peak RSS (KiB), and with `verify` the pings' results. `idle` prints the peak
// RSS of a process that only imported netns/testing (the floor under ours);
// `no-hosts` builds with createLab { hosts: false } (no /etc/netns files).
// Usage: node bench/lab-ours.js [no-hosts] [verify|idle]
import { createLab } from '../dist/testing.js';
import { checkPings, labPlan, labSpec } from './lab-topology.js';

const args = process.argv.slice(2);
const mode = args.find((arg) => arg !== 'no-hosts');
const hosts = !args.includes('no-hosts');
const peakRssKib = () => process.resourceUsage().maxRSS;

if (mode === 'idle') print({ peakRssKib: peakRssKib() });
else print(await round(mode === 'verify'));

async function round(verify) {
  const start = performance.now();
  const lab = await createLab(labSpec(), { hosts });
  const built = performance.now();
  let pings;
  let deleting;
  try {
    if (verify) pings = await pingAll(lab);
  } finally {
    deleting = performance.now();
    await lab.delete();
  }
  const deleted = performance.now();
  return { buildMs: built - start, deleteMs: deleted - deleting, peakRssKib: peakRssKib(), pings };
}

function pingAll(lab) {
  const plan = labPlan();
  assertSameAddresses(lab, plan);
  return Promise.all(checkPings(plan).map(async ([from, to]) => [from, to, (await runIn(lab, from, ['ping', '-c1', '-W2', to])) === 0]));
}

// The baselines build bench/lab-topology.js's plan: the figures compare only if
// createLab addressed every node as that plan does.
function assertSameAddresses(lab, plan) {
  for (const end of plan.links.flatMap((l) => [l.a, l.b])) {
    if (end.address && !lab.plan.links.some((l) => [l.a, l.b].some((e) => e.node === end.node && e.addresses.includes(`${end.address}/24`)))) {
      throw new Error(`lab-ours: createLab did not give ${end.node} ${end.address}/24, as the baselines do`);
    }
  }
}

function runIn(lab, host, argv) {
  const child = lab.nodes[host].spawn(argv[0], argv.slice(1), { stdio: 'ignore' });
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (code) => resolve(code));
  });
}

function print(result) {
  console.log(JSON.stringify(result));
}
