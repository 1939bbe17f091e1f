#!/usr/bin/env node
// Listed mutations: the bugs that matter most, written down one by one in
// scripts/mutants/*.json, each with the tests that must catch it. Stryker
// (npm run mutate) cannot reach the C++ in native/, nor code the tests run in
// child processes (the CLI, the worker bundle, the CNI example); this can.
//
// In a scratch copy of the checkout (the checkout itself is never touched):
// builds everything, runs every listed test on the unmutated code (they must
// pass, or no result would mean anything), then for each mutation: applies
// it, rebuilds what it touches, runs its tests through scripts/test-isolated.mjs
// and counts it killed when they fail, survived when they pass. A mutation
// that does not build is reported as such (a broken list, not a kill).
//
// usage: sudo npm run mutate:listed [-- id...]
// Exit status 0 only when every mutation run was killed.
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const listDir = join(root, 'scripts', 'mutants');
const TEST_RUN_LIMIT_MS = 10 * 60_000;
const say = (line) => process.stdout.write(`${line}\n`);

/** Each entry of every list, checked: its text occurs exactly once in its file. */
function loadMutants(only) {
  const mutants = readdirSync(listDir)
    .filter((file) => file.endsWith('.json'))
    .sort()
    .flatMap((file) => JSON.parse(readFileSync(join(listDir, file), 'utf8')).map((mutant) => ({ ...mutant, list: file })));
  for (const mutant of mutants) {
    const occurrences = readFileSync(join(root, mutant.file), 'utf8').split(mutant.find).length - 1;
    if (occurrences !== 1) throw new Error(`${mutant.list} ${mutant.id}: its text occurs ${occurrences} times in ${mutant.file}, not once`);
  }
  const chosen = only.length > 0 ? mutants.filter((mutant) => only.includes(mutant.id)) : mutants;
  const unknown = only.filter((id) => !mutants.some((mutant) => mutant.id === id));
  if (unknown.length > 0) throw new Error(`no listed mutation named ${unknown.join(', ')}`);
  return chosen;
}

/** The checkout's files (tracked and new, not ignored) in a fresh folder others can enter: some tests run as nobody. */
function scratchCopy() {
  const scratch = mkdtempSync(join(tmpdir(), 'netns-mutate-'));
  chmodSync(scratch, 0o755);
  const files = spawnSync('git', ['ls-files', '-co', '--exclude-standard', '-z'], { cwd: root, encoding: 'utf8' }).stdout.split('\0').filter(Boolean);
  for (const file of files) {
    let mode;
    try {
      mode = statSync(join(root, file)).mode;
    } catch {
      continue; // deleted in the work tree, not yet in git
    }
    mkdirSync(dirname(join(scratch, file)), { recursive: true, mode: 0o755 });
    copyFileSync(join(root, file), join(scratch, file));
    chmodSync(join(scratch, file), mode & 0o7777);
  }
  symlinkSync(join(root, 'node_modules'), join(scratch, 'node_modules'));
  return scratch;
}

/** What a change to `file` needs rebuilt: src/ is bundled into the CNI example too. */
function buildsFor(file) {
  if (file.startsWith('native/')) return ['native'];
  if (file.startsWith('src/')) return ['dist', 'examples'];
  if (file.startsWith('examples/')) return ['examples'];
  return [];
}

const BUILD_COMMANDS = {
  native: ['node', ['scripts/build-native.mjs']],
  dist: ['npm', ['run', 'build:ts']],
  examples: ['npm', ['run', 'build:examples']],
};

/** Builds `kinds` in order; returns the failing command's output, or null. */
function build(scratch, kinds) {
  for (const kind of ['native', 'dist', 'examples'].filter((k) => kinds.has(k))) {
    const [command, args] = BUILD_COMMANDS[kind];
    const result = spawnSync(command, args, { cwd: scratch, encoding: 'utf8' });
    if (result.status !== 0) return `${command} ${args.join(' ')}: ${result.stdout}${result.stderr}`.slice(-2000);
  }
  return null;
}

/** Runs tests in the scratch copy; `names` (a regex) narrows a file to the tests that matter. */
function runTests(scratch, mutant) {
  const args = ['scripts/test-isolated.mjs', 'run', ...mutant.tests];
  if (mutant.names) args.push('-t', mutant.names);
  const result = spawnSync(process.execPath, args, { cwd: scratch, encoding: 'utf8', timeout: TEST_RUN_LIMIT_MS, killSignal: 'SIGKILL' });
  if (result.error?.code === 'ETIMEDOUT') return { passed: false, why: 'timed out' };
  const output = `${result.stdout}${result.stderr}`.replace(/\x1b\[[0-9;]*m/g, '');
  const failed = output.match(/FAIL .*/)?.[0] ?? `exit ${result.status}`;
  return { passed: result.status === 0, why: failed };
}

/** Applies one mutation, runs its tests, undoes it; `dirty` collects what must be rebuilt before the next run. */
function tryMutant(scratch, mutant, dirty) {
  const path = join(scratch, mutant.file);
  const original = readFileSync(path, 'utf8');
  writeFileSync(path, original.replace(mutant.find, () => mutant.replace));
  try {
    for (const kind of buildsFor(mutant.file)) dirty.add(kind);
    const broken = build(scratch, dirty);
    if (broken) return { status: 'does not build', why: broken.split('\n').find((line) => /error/i.test(line)) ?? broken };
    const outcome = runTests(scratch, mutant);
    return outcome.passed ? { status: 'SURVIVED', why: 'every test passed' } : { status: 'killed', why: outcome.why };
  } finally {
    writeFileSync(path, original);
    dirty.clear();
    for (const kind of buildsFor(mutant.file)) dirty.add(kind);
  }
}

function baseline(scratch, mutants) {
  const broken = build(scratch, new Set(['native', 'dist', 'examples']));
  if (broken) throw new Error(`the unmutated copy does not build: ${broken}`);
  const tests = [...new Set(mutants.flatMap((mutant) => mutant.tests))];
  const outcome = runTests(scratch, { tests });
  if (!outcome.passed) throw new Error(`the listed tests fail on the unmutated code (${outcome.why}): fix them first`);
}

function main() {
  if (process.getuid?.() !== 0) throw new Error('run as root: the listed tests include the root suite (sudo npm run mutate:listed)');
  const mutants = loadMutants(process.argv.slice(2));
  const scratch = scratchCopy();
  const removeScratch = () => rmSync(scratch, { recursive: true, force: true });
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.once(signal, () => (removeScratch(), process.kill(process.pid, signal)));
  try {
    say(`listed mutations: ${mutants.length}, in ${scratch}; the unmutated code first`);
    baseline(scratch, mutants);
    const dirty = new Set();
    const results = mutants.map((mutant) => {
      const result = tryMutant(scratch, mutant, dirty);
      say(`${result.status.padEnd(14)} ${mutant.id} (${mutant.file}): ${result.why}`);
      return result;
    });
    const killed = results.filter((result) => result.status === 'killed').length;
    say(`${killed} of ${mutants.length} killed (${Math.round((100 * killed) / mutants.length)}%)`);
    process.exitCode = killed === mutants.length ? 0 : 1;
  } finally {
    removeScratch();
  }
}

main();
