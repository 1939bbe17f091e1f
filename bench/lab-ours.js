// The lab benchmark's own side, one round per process (as Mininet's): builds
// bench/lab-topology.js's spec with createLab (netns/testing), times it and
// lab.delete(), and prints one JSON line: buildMs, deleteMs, the process's
// peak RSS (KiB), and with `verify` the pings' results. `idle` prints the peak
// RSS of a process that only imported netns/testing (the floor under ours);
// a build without createLab prints { unavailable: true }.
// Usage: node bench/lab-ours.js [verify|idle]
import { spawn } from 'node:child_process';
import { checkPings, labPlan, labSpec } from './lab-topology.js';

const testing = await import('../dist/testing.js');
const mode = process.argv[2];
const peakRssKib = () => process.resourceUsage().maxRSS;

if (mode === 'idle') print({ peakRssKib: peakRssKib() });
else if (typeof testing.createLab !== 'function') print({ unavailable: true });
else print(await round(testing.createLab, mode === 'verify'));

async function round(createLab, verify) {
  const start = performance.now();
  const lab = await createLab(labSpec());
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
  return Promise.all(checkPings(labPlan()).map(async ([from, to]) => [from, to, (await runIn(lab, from, ['ping', '-c1', '-W2', to])) === 0]));
}

// A host's namespace as createTestNetwork gives it (a NetNS with spawn), or
// else its name for `ip netns exec`.
function runIn(lab, host, argv) {
  const ns = lab.hosts?.[host];
  const name = lab.names?.[host];
  let child;
  if (typeof ns?.spawn === 'function') child = ns.spawn(argv[0], argv.slice(1), { stdio: 'ignore' });
  else if (typeof name === 'string') child = spawn('ip', ['netns', 'exec', name, ...argv], { stdio: 'ignore' });
  else throw new Error(`lab-ours: no way to run a command in ${host} (lab.hosts.${host}.spawn or lab.names.${host})`);
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (code) => resolve(code));
  });
}

function print(result) {
  console.log(JSON.stringify(result));
}
