#!/usr/bin/env node
// `npm run mutate [folders or files...]`: Stryker mutation testing of the
// TypeScript in the given folders or files (default: src/run, src/core,
// src/addrset, src/cni, src/testing/lab), then the score per folder. Settings in
// stryker.config.mjs; the tests see mutants through vitest.mutate.config.ts.
// Not in CI: it takes hours over all five folders (docs/maintainers.md,
// "Mutation testing").
//
// Mutated code runs as root, with the root tests: a mutant may well make a
// namespace switch or a netlink request go where it must not. So, as
// scripts/test-isolated.mjs does for `npm test`, the whole run happens in a
// throwaway network namespace (`unshare --net`, lo up), and this process,
// which stays in the real one, compares the real network before and after;
// the globalSetup of the tests checks the same variables as under `npm test`.
// Without CAP_SYS_ADMIN it refuses: half the tests would skip, and a score of
// what is left would not be the measure docs/maintainers.md records.
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_FOLDERS, REPORT, SAVED, folderOf, saveSummaries, savedTable, scoreTable, sourceFiles } from './mutation-table.mjs';
import { hasSysAdmin, missingPrerequisites, run, runInThrowawayNetns } from './test-isolated.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const stryker = join(root, 'node_modules', '@stryker-mutator', 'core', 'bin', 'stryker.js');
const say = (line) => process.stderr.write(`netns mutate: ${line}\n`);

/**
 * The source files to mutate: each .ts file named, and every .ts file under
 * each folder named (the default folders when none is). A folder too big for
 * one sitting is run a few files at a time; their summaries add up.
 */
function sourcesOf(args) {
  const named = args.map((arg) => arg.replace(/\/+$/, ''));
  const files = (named.length > 0 ? named : DEFAULT_FOLDERS).flatMap((path) => (path.endsWith('.ts') ? [path] : sourceFiles(root, path)));
  const unknown = files.filter((file) => !existsSync(join(root, file)));
  if (unknown.length > 0 || files.length === 0) throw new Error(`nothing to mutate at ${unknown.join(', ') || named.join(', ')}`);
  return [...new Set(files)];
}

/** The folders of the table: the default ones that hold a mutated file, then any other folder named. */
function foldersOf(files, args) {
  const holding = DEFAULT_FOLDERS.filter((folder) => files.some((file) => folderOf(file, DEFAULT_FOLDERS) === folder));
  const others = args.map((arg) => arg.replace(/\/+$/, '')).filter((path) => !path.endsWith('.ts') && !holding.includes(path));
  return [...holding, ...others];
}

// Inside the throwaway namespace: lo up, check where we are, run Stryker.
async function inner(list) {
  const real = Number(process.env.NETNS_TEST_REAL_NETNS);
  const here = statSync('/proc/self/ns/net').ino;
  if (!Number.isInteger(real) || here === real) {
    say(`refusing to run: not in a throwaway network namespace (here net:[${here}], real net:[${real}])`);
    return 1;
  }
  const lo = spawnSync('ip', ['link', 'set', 'lo', 'up'], { encoding: 'utf8' });
  if (lo.status !== 0) {
    say(`cannot bring lo up: ${lo.error?.message ?? lo.stderr.trim()}`);
    return 1;
  }
  const { NETNS_MUTATE_INNER: _inner, ...env } = process.env;
  return run(process.execPath, [stryker, 'run', '--mutate', list.join(',')], { ...env, NETNS_TEST_NETNS: String(here) });
}

// In the real namespace: this script again in a throwaway one, the real network compared around it.
async function outer(list) {
  if (!hasSysAdmin()) {
    say('refusing to run without CAP_SYS_ADMIN: the root tests would skip and the score would not measure them; run it as root (it runs in a throwaway network namespace)');
    return 1;
  }
  const missing = missingPrerequisites();
  if (missing.length > 0) {
    say(`cannot run: missing ${missing.join(', ')}`);
    return 1;
  }
  // A mutant can break a test's cleanup: the namespaces the run leaves are removed, not a failure of the run.
  const removeLeftNamespaces = true;
  const scratch = privateTmpdir();
  try {
    return await runInThrowawayNetns({ script: fileURLToPath(import.meta.url), args: list, innerFlag: 'NETNS_MUTATE_INNER', what: `mutating ${list.length} files`, say, removeLeftNamespaces });
  } finally {
    removeSandbox();
    removeScratch(scratch);
  }
}

/**
 * A temporary folder for the whole run, as TMPDIR (which os.tmpdir() and so
 * the tests read): a mutant that hangs a test until Stryker kills its runner
 * skips the test's own removal of its folder, and these are then removed
 * with this one, never anything of another program's in /tmp. Open to all,
 * sticky, as /tmp is: some tests run programs as nobody.
 */
function privateTmpdir() {
  const scratch = mkdtempSync(join(tmpdir(), 'netns-mutate-tmp-'));
  chmodSync(scratch, 0o1777);
  process.env.TMPDIR = scratch;
  return scratch;
}

function removeScratch(scratch) {
  const left = readdirSync(scratch);
  removeWithMounts(scratch, 'the temporary folder');
  if (left.length > 0) say(`removed ${left.length} temporary files and folders left in ${scratch} (${left.slice(0, 5).join(', ')}${left.length > 5 ? ', ...' : ''})`);
}

const SANDBOX = join(root, '.stryker-tmp');

/**
 * Stryker's copy of the checkout, and the mounts a mutant left in it: a
 * mutated run-directory check made tests mount namespaces at relative paths
 * in the copy (`relative/NAME`, `Stryker was here!/NAME`), which kept them
 * alive and kept Stryker from removing its copy.
 */
function removeSandbox() {
  removeWithMounts(SANDBOX, "Stryker's copy");
}

/** Removes `dir` after unmounting what is mounted inside it (only there), deepest first. */
function removeWithMounts(dir, what) {
  const inside = readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((line) => line.split(' ')[4])
    .filter((point) => point !== undefined)
    .map((point) => point.replace(/\\([0-7]{3})/g, (_, octal) => String.fromCharCode(Number.parseInt(octal, 8))))
    .filter((point) => point.startsWith(`${dir}/`))
    .sort((a, b) => b.length - a.length);
  for (const point of inside) spawnSync('umount', ['--lazy', point]);
  if (inside.length > 0) say(`unmounted ${inside.length} mounts a mutant left in ${what} (${inside.join(', ')})`);
  rmSync(dir, { recursive: true, force: true });
}

/** The commit the run measured, marked when the checkout had changes beside it, and whether the root tests ran. */
function provenance() {
  const git = (...args) => spawnSync('git', args, { cwd: root, encoding: 'utf8' }).stdout.trim();
  const dirty = git('status', '--porcelain', '--', 'src', 'test').length > 0;
  const commit = `${git('rev-parse', '--short', 'HEAD')}${dirty ? ' with uncommitted changes' : ''}`;
  return { commit, date: new Date().toISOString().slice(0, 10), ...(process.env.NETNS_MUTATE_TESTS === 'unit' ? { tests: 'unit' } : {}) };
}

// This run's table (Stryker writes its report even when a mutant survives),
// its files' summaries kept in docs/mutation/, and the table of all of them.
function report(files, folders) {
  const file = join(root, REPORT);
  if (!existsSync(file)) return;
  const json = JSON.parse(readFileSync(file, 'utf8'));
  console.log(`\nMutation score per folder (${REPORT}):\n`);
  console.log(scoreTable(json, folders));
  saveSummaries(root, json, files, provenance());
  console.log(`\nEvery folder's last run (${SAVED}/, survivors listed there):\n`);
  console.log(savedTable(root));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  // Stryker reads its config, and writes its sandbox and report, in the working folder.
  process.chdir(root);
  const UNIT_ONLY_FLAG = '--unit-tests-only';
  // Read by vitest.mutate.config.ts in Stryker's test runners, which inherit it.
  if (process.argv.includes(UNIT_ONLY_FLAG)) process.env.NETNS_MUTATE_TESTS = 'unit';
  const args = process.argv.slice(2).filter((arg) => arg !== UNIT_ONLY_FLAG);
  const files = sourcesOf(args);
  if (process.env.NETNS_MUTATE_INNER === '1') {
    process.exitCode = await inner(files);
  } else {
    process.exitCode = await outer(files);
    if (process.exitCode === 0) report(files, foldersOf(files, args));
  }
}
