// What a node that is a machine costs (issue 35: at most 2x a plain one): a
// command run in a lab node as a machine (its own mount namespace with /sys
// remounted and /etc/netns bound, its own UTS namespace, and its own
// directories: an empty /var/log and an overlay of /etc) beside the same
// command in the node's network namespace alone (`{ etc: false }`) and beside
// `ip netns exec` (which makes the mount namespace but no UTS one and no
// directories), rounds interleaved; and the build of a 20-host lab whose hosts
// all have such directories beside the same lab without them.
import { execFileSync } from 'node:child_process';
import { createLab } from '../dist/testing.js';
import { median, nowUs, record } from './lib.js';

const COMMANDS = Number(process.env.LAB_MACHINE_COMMANDS ?? 200);
const BUILDS = Number(process.env.LAB_MACHINE_BUILDS ?? 7);
const HOSTS = 20;
const SECTION = 'lab machine';
const DIRS = { '/var/log': 'empty', '/etc': 'overlay' };

export async function benchLabMachine() {
  const prefix = `nsbench-machine-${process.pid}-`;
  await commandCost(prefix);
  await buildCost(prefix);
}

async function commandCost(prefix) {
  const lab = await createLab({ prefix, hosts: { m: { dirs: DIRS }, p: {} }, links: [['m', 'p']] });
  try {
    const ways = {
      plain: () => lab.execFile('m', 'true', [], { etc: false }),
      machine: () => lab.execFile('m', 'true'),
      ipExec: async () => execFileSync('ip', ['netns', 'exec', lab.names.m, 'true']),
    };
    const times = await interleaved(ways, COMMANDS);
    record(SECTION, 'command in a machine node (mount+UTS ns, /var/log, /etc overlay)', times.machine, 'ms', 'same node, network namespace only', times.plain);
    record(SECTION, 'command in a machine node', times.machine, 'ms', 'ip netns exec', times.ipExec);
  } finally {
    await lab.delete();
  }
}

async function buildCost(prefix) {
  const spec = (dirs) => ({
    prefix,
    hosts: Object.fromEntries(Array.from({ length: HOSTS }, (_, i) => [`h${i}`, dirs ? { dirs: DIRS } : {}])),
    switches: { s: {} },
    links: Array.from({ length: HOSTS }, (_, i) => [`h${i}`, 's']),
  });
  const build = (dirs) => async () => (await createLab(spec(dirs))).delete();
  const times = await interleaved({ machines: build(true), plain: build(false) }, BUILDS);
  record(SECTION, `${HOSTS}-host lab build+delete, every host with its own /var/log and /etc`, times.machines, 'ms', 'same lab, plain hosts', times.plain);
}

/** Median ms of each way over `rounds`, the ways taking turns within a round. */
async function interleaved(ways, rounds) {
  const samples = Object.fromEntries(Object.keys(ways).map((name) => [name, []]));
  for (let round = 0; round < rounds; round++) {
    for (const [name, run] of Object.entries(ways)) {
      const start = nowUs();
      await run();
      samples[name].push((nowUs() - start) / 1000);
    }
  }
  return Object.fromEntries(Object.entries(samples).map(([name, values]) => [name, median(values)]));
}
