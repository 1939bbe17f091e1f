// What one call of the `netns` command costs (issue 15: at most 1.5x
// `node -e 0`), beside `ip netns` doing the same. Wall time of the whole
// process, medians, every variant taking turns so that noise hits all alike.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { readFileSync } from 'node:fs';
import { median, nowUs, record } from './lib.js';

const RUNS = 20;
const GOAL = 1.5; // x node -e 0

const root = fileURLToPath(new URL('..', import.meta.url));
const cli = `${root}${JSON.parse(readFileSync(`${root}package.json`, 'utf8')).bin.netns}`;

function timeUs(argv) {
  const start = nowUs();
  const result = spawnSync(argv[0], argv.slice(1), { stdio: ['ignore', 'ignore', 'pipe'] });
  const elapsed = nowUs() - start;
  if (result.status !== 0) throw new Error(`${argv.join(' ')} failed (${result.status}): ${result.stderr}`);
  return elapsed;
}

/** [verb, its arguments]: each run as `netns ...` and as `ip netns ...`. */
function verbs(name, made) {
  return [
    ['list', []],
    ['list-id', []],
    ['identify', []],
    ['pids', [name]],
    ['exec', [name, 'true']],
    ['add', [made]],
    ['delete', [made]],
  ];
}

export function benchCli(names) {
  const made = `nsbench-${process.pid}-cli`;
  const cases = verbs(names[0], made);
  const times = { node: [], ours: new Map(cases.map(([verb]) => [verb, []])), ip: new Map(cases.map(([verb]) => [verb, []])) };
  try {
    for (let run = 0; run < RUNS; run++) {
      times.node.push(timeUs([process.execPath, '-e', '0']));
      for (const [tool, argv] of [['ours', [process.execPath, cli]], ['ip', ['ip', 'netns']]]) {
        for (const [verb, args] of cases) times[tool].get(verb).push(timeUs([...argv, verb, ...args]));
      }
    }
  } finally {
    spawnSync('ip', ['netns', 'del', made], { stdio: 'ignore' });
  }
  const node = median(times.node) / 1000;
  record('cli', `node -e 0 (wall, median of ${RUNS})`, node, 'ms');
  for (const [verb] of cases) {
    const ours = median(times.ours.get(verb)) / 1000;
    record('cli', `netns ${verb}`, ours, 'ms', `node -e 0 (goal ${GOAL}x)`, node);
    record('cli', `  beside ip netns ${verb}`, ours, 'ms', `ip netns ${verb}`, median(times.ip.get(verb)) / 1000);
  }
}
