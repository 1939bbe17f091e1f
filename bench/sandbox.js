// What a rootless sandbox costs to enter (issue 27): spawnSandbox('true') from
// this process beside util-linux's `unshare -Urnpf --mount --mount-proc true`
// (the same user, mount, network and PID namespaces, the caller mapped to
// root, a /proc mounted, but no private /run, sysfs or lo up), and the whole
// `netns sandbox -- true` command beside `node -e 0`. Wall time to exit,
// medians, the variants taking turns.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { spawnSandbox } from '../dist/testing.js';
import { median, nowUs, record } from './lib.js';

const RUNS = 40;
const root = fileURLToPath(new URL('..', import.meta.url));
const cli = `${root}${JSON.parse(readFileSync(`${root}package.json`, 'utf8')).bin.netns}`;

function timeUs(start) {
  const begun = nowUs();
  return new Promise((resolve, reject) => {
    const child = start();
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(nowUs() - begun) : reject(new Error(`exited ${code}`))));
  });
}

export async function benchSandbox() {
  const variants = {
    library: () => spawnSandbox('true', [], { stdio: 'ignore' }),
    unshare: () => spawn('unshare', ['-Urnpf', '--mount', '--mount-proc', 'true'], { stdio: 'ignore' }),
    cli: () => spawn(process.execPath, [cli, 'sandbox', '--', 'true'], { stdio: 'ignore' }),
    node: () => spawn(process.execPath, ['-e', '0'], { stdio: 'ignore' }),
  };
  const times = Object.fromEntries(Object.keys(variants).map((name) => [name, []]));
  for (let run = 0; run < RUNS; run++) {
    for (const [name, start] of Object.entries(variants)) times[name].push(await timeUs(start));
  }
  const ms = (name) => median(times[name]) / 1000;
  const unshare = 'unshare -Urnpf --mount --mount-proc true';
  record('sandbox', `spawnSandbox('true') to exit (median of ${RUNS})`, ms('library'), 'ms', unshare, ms('unshare'));
  record('sandbox', 'netns sandbox -- true (whole command)', ms('cli'), 'ms', 'node -e 0', ms('node'));
  record('sandbox', '  beside unshare', ms('cli'), 'ms', unshare, ms('unshare'));
}
