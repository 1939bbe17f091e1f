// Shared benchmark plumbing: statistics, a scratch namespace, baselines built
// from C, and a table that prints each figure beside its baseline.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const benchDir = fileURLToPath(new URL('.', import.meta.url));

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** Whether `command` is a file in a folder of PATH. */
export function onPath(command) {
  return (process.env.PATH ?? '').split(':').some((dir) => dir && existsSync(join(dir, command)));
}

export function nowUs() {
  return Number(process.hrtime.bigint()) / 1000;
}

let scratchCounter = 0;
const made = [];
process.once('exit', () => {
  for (const name of made) {
    try {
      execFileSync('ip', ['netns', 'del', name]);
    } catch {
      // already gone
    }
  }
});
for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => process.exit(130));

/** Namespaces for one benchmark run, removed on exit and on Ctrl-C. */
export function scratchNamespaces(count) {
  const names = Array.from({ length: count }, () => `nsbench-${process.pid}-${scratchCounter++}`);
  for (const name of names) {
    execFileSync('ip', ['netns', 'add', name]);
    execFileSync('ip', ['-n', name, 'link', 'set', 'lo', 'up']);
  }
  made.push(...names);
  return names;
}

/** Runs `nft -f FILE` inside a namespace the way an operator would, and times it. */
export function timeNftFile(name, path) {
  const start = nowUs();
  execFileSync('ip', ['netns', 'exec', name, 'nft', '-f', path]);
  return nowUs() - start;
}

export function scratchFile(name, content) {
  const path = join(scratchDir(), name);
  writeFileSync(path, content);
  return path;
}

let cDir;
/** One temporary folder per run for compiled baselines and input files. */
function scratchDir() {
  cDir ??= mkdtempSync(join(tmpdir(), 'netns-bench-'));
  return cDir;
}
/** Compiles bench/NAME.c once per run and returns the binary's path. */
export function compileC(name) {
  const out = join(scratchDir(), name);
  execFileSync('cc', ['-O2', '-o', out, join(benchDir, `${name}.c`)]);
  return out;
}

/** Median wall time, in microseconds, of running a command to exit. */
export async function commandMedianUs(argv, runs) {
  const times = [];
  for (let i = 0; i < runs; i++) {
    const start = nowUs();
    await new Promise((resolve, reject) => {
      const child = spawn(argv[0], argv.slice(1), { stdio: 'ignore' });
      child.on('error', reject);
      child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${argv.join(' ')} exited ${code}`))));
    });
    times.push(nowUs() - start);
  }
  return median(times);
}

const rows = [];
/** Records one figure; the ratio printed is ours / baseline. */
export function record(section, metric, ours, unit, baselineName, baseline) {
  rows.push({ section, metric, ours, unit, baselineName, baseline });
}

function format(value) {
  if (value === undefined) return '';
  return value >= 100 ? value.toFixed(0) : value >= 10 ? value.toFixed(1) : value.toFixed(2);
}

function ratio(value) {
  return value >= 0.01 ? `${value.toFixed(2)}x` : `1/${(1 / value).toFixed(0)}x`;
}

export function printTable() {
  const header = ['section', 'metric', 'ours', 'unit', 'baseline (same run)', 'baseline', 'ratio'];
  const lines = rows.map((r) => [
    r.section,
    r.metric,
    format(r.ours),
    r.unit,
    r.baselineName ?? '',
    format(r.baseline),
    r.baseline ? ratio(r.ours / r.baseline) : '',
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i].length)));
  const show = (cells) => cells.map((c, i) => c.padEnd(widths[i])).join('  ');
  console.log(show(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const line of lines) console.log(show(line));
}

const GO_PATH = '/usr/share/gocode';
const builtGo = new Map();

/**
 * Builds bench/<program> GOPATH-mode against Debian's Go packages (once per
 * run): { binary }, or { reason } naming what is missing. `packages`: the
 * apt-get line that supplies `library`.
 */
export function buildGoProgram(program, library, packages) {
  if (builtGo.has(program)) return builtGo.get(program);
  const binary = join(scratchDir(), program);
  const env = { ...process.env, GOPATH: GO_PATH, GO111MODULE: 'off', GOCACHE: join(scratchDir(), 'go-cache'), GOFLAGS: '' };
  let result;
  try {
    execFileSync('go', ['build', '-o', binary, '.'], { cwd: join(benchDir, program), env, stdio: ['ignore', 'ignore', 'pipe'] });
    result = { binary };
  } catch (error) {
    const stderr = String(error.stderr ?? '').trim() || error.message;
    if (error.code === 'ENOENT') result = { reason: `Go is not installed (apt-get install ${packages})` };
    else if (/cannot find package/.test(stderr)) result = { reason: `${library} is not installed (apt-get install ${packages})` };
    else result = { reason: `go build failed: ${stderr}` };
  }
  builtGo.set(program, result);
  return result;
}

let goResult;

/**
 * containernetworking's ns.Do measured in this run, if Go and the library are
 * installed (Debian: golang-go golang-github-containernetworking-plugins-dev);
 * undefined otherwise, and the tables then show the figures quoted in the issue.
 */
export function goNsDo(nsPath) {
  if (goResult !== undefined) return goResult ?? undefined;
  goResult = null;
  try {
    const { binary } = buildGoProgram('go-nsdo', 'containernetworking/plugins', 'golang-go golang-github-containernetworking-plugins-dev');
    if (!binary) throw new Error('not built');
    goResult = JSON.parse(execFileSync(binary, [nsPath, '10000'], { encoding: 'utf8' }));
  } catch {
    console.error('bench: Go baseline not available (apt-get install golang-go golang-github-containernetworking-plugins-dev); quoting the issue');
  }
  return goResult ?? undefined;
}
