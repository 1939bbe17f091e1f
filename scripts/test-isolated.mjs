#!/usr/bin/env node
// Runs vitest so that no defect in the code under test can change this
// machine's real network.
//
// As root (CAP_SYS_ADMIN): the whole suite runs inside a throwaway network
// namespace of its own (`unshare --net`, with lo up), which is the tests'
// "host". Named namespaces the tests make still appear under /run/netns (the
// mount namespace is shared). Around the run, this process (which stays in the
// real namespace) takes a snapshot of the real network: nft ruleset, links,
// addresses, routes, rules, and /run/netns entries of the suite's prefixes. If
// anything differs afterwards, the run FAILS and says what changed.
//
// Without CAP_SYS_ADMIN (not root): the same, inside a rootless sandbox
// (`netns sandbox`: a user, mount and network namespace in which the user is
// root), so the root suite runs without root; the few tests that need real
// root skip there and say why. Where the system forbids user namespaces, only
// the unit tests run and the root tests skip and say so; under CI that is an
// error.
//
// usage: node scripts/test-isolated.mjs [vitest arguments...]   (npm test runs it with "run")
//
// Self-contained on purpose: this process stays in the real namespace and is
// the last line of defence, so it loads none of the code under test (the
// sandbox is entered through the built CLI only by a user without root, who
// cannot change this machine's network anyway), and
// repeats the one small check the package has (hasEffectiveCapability in
// src/capabilities.ts). It looks for nft itself: the package no longer needs
// it, the tests' cross-checks do.
import { spawn, spawnSync } from 'node:child_process';
import { accessSync, constants, mkdirSync, readdirSync, readFileSync, statSync, watch } from 'node:fs';
import { constants as osConstants } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { nobodyCannotReach } from './nobody-access.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const vitest = join(root, 'node_modules', 'vitest', 'vitest.mjs');
const cli = join(root, 'dist', 'cli', 'netns.cjs');
const say = (line) => process.stderr.write(`netns tests: ${line}\n`);

/** Commands a root run needs, with the Debian package that has each. */
export const PREREQUISITES = {
  ip: 'iproute2',
  nft: 'nftables',
  unshare: 'util-linux',
  setpriv: 'util-linux',
  pgrep: 'procps',
};

/**
 * Names of the namespaces the suite makes: ns<word>-<creator pid>[-...]
 * (nsfix-, nsdemo-, nscli-, nslife-, nsprep-, a test's own nsfixtXXXX-, ...).
 */
const SUITE_NAME = /^ns[a-z0-9]*-(\d+)(?:-|$)/;

export function hasSysAdmin() {
  const line = readFileSync('/proc/self/status', 'utf8').match(/^CapEff:\s*([0-9a-f]+)$/m);
  return line !== null && (BigInt(`0x${line[1]}`) & (1n << 21n)) !== 0n;
}

function onPath(command, path = process.env.PATH ?? '') {
  return path.split(delimiter).some((dir) => {
    try {
      accessSync(join(dir || '.', command), constants.X_OK);
      return statSync(join(dir || '.', command)).isFile();
    } catch {
      return false;
    }
  });
}

/** "nft (install nftables)" for each prerequisite missing from PATH. */
export function missingPrerequisites(path = process.env.PATH ?? '') {
  return Object.entries(PREREQUISITES)
    .filter(([command]) => !onPath(command, path))
    .map(([command, pkg]) => `${command} (install the Debian package ${pkg}: apt-get install ${pkg})`);
}

function netnsInode() {
  return statSync('/proc/self/ns/net').ino;
}

// The snapshot tools run without the sanitizer `npm run test:asan` preloads:
// it is there for the addon, and it aborts on iproute2's own overlapping strncpy.
function output(command, args) {
  const { LD_PRELOAD: _preload, ...env } = process.env;
  const result = spawnSync(command, args, { encoding: 'utf8', env });
  if (result.error || result.status !== 0) {
    throw new Error(`${command} ${args.join(' ')} failed: ${result.error?.message ?? result.stderr.trim()}`);
  }
  return result.stdout;
}

/** The creator pid in a suite namespace name, if it has one. */
function creatorPid(name) {
  const pid = SUITE_NAME.exec(name)?.[1];
  return pid === undefined ? undefined : Number(pid);
}

/**
 * Names under /run/netns made by this run: when an entry appears, its creator
 * (the pid in its name) is in the run's throwaway namespace. Other runs on the
 * machine (another checkout's suite) share /run/netns; their entries are not
 * ours to judge.
 */
function watchOurs(runPid) {
  const ours = new Set();
  mkdirSync('/run/netns', { recursive: true });
  const watcher = watch('/run/netns', (_event, name) => {
    const pid = name ? creatorPid(name) : undefined;
    if (pid === undefined || ours.has(name)) return;
    try {
      if (statSync(`/proc/${pid}/ns/net`).ino === statSync(`/proc/${runPid}/ns/net`).ino) ours.add(name);
    } catch {
      // the creator is gone already, or it was not ours
    }
  });
  return { ours, close: () => watcher.close() };
}

/**
 * What the network of the calling process's namespace looks like, without
 * what changes on its own (address lifetimes, route expiry, link statistics).
 */
export function snapshot() {
  const lifetimes = (text) => text.replace(/ (valid_lft|preferred_lft|expires) \S+/g, '');
  let netns = [];
  try {
    netns = readdirSync('/run/netns').filter((name) => SUITE_NAME.test(name));
  } catch {
    // no /run/netns yet
  }
  return {
    ruleset: output('nft', ['list', 'ruleset']),
    links: output('ip', ['-o', 'link', 'show']).replace(/ link-netns(id)? \S+/g, ''),
    addresses: lifetimes(output('ip', ['-o', 'address', 'show'])),
    routes: lifetimes(output('ip', ['-4', 'route', 'show', 'table', 'all']) + output('ip', ['-6', 'route', 'show', 'table', 'all'])),
    rules: output('ip', ['-4', 'rule', 'show']) + output('ip', ['-6', 'rule', 'show']),
    netns,
  };
}

function lines(text) {
  return new Set(text.split('\n').filter((line) => line.trim() !== ''));
}

/**
 * How `after` differs from `before`, one line per change; a /run/netns entry
 * counts when it is new and `ours` (made by this run).
 */
export function compare(before, after, ours = new Set()) {
  const changes = [];
  if (before.ruleset !== after.ruleset) changes.push(`nft ruleset changed:\n--- before\n${before.ruleset}--- after\n${after.ruleset}`);
  for (const key of ['links', 'addresses', 'routes', 'rules']) {
    const was = lines(before[key]);
    const is = lines(after[key]);
    for (const line of is) if (!was.has(line)) changes.push(`${key}: added   ${line.trim()}`);
    for (const line of was) if (!is.has(line)) changes.push(`${key}: removed ${line.trim()}`);
  }
  const known = new Set(before.netns);
  for (const name of after.netns) if (!known.has(name) && ours.has(name)) changes.push(`/run/netns: left behind ${name}`);
  return changes;
}

export function run(command, args, env, started = () => {}) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: 'inherit', env });
    started(child);
    const forward = (signal) => child.kill(signal);
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, forward);
    child.once('error', (error) => {
      say(`cannot run ${command}: ${error.message}`);
      resolve(1);
    });
    child.once('exit', (code, signal) => {
      for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.off(s, forward);
      resolve(code ?? 128 + (osConstants.signals[signal] ?? 1));
    });
  });
}

// Inside the throwaway namespace: lo up, check where we are, run vitest.
async function inner(args) {
  const real = Number(process.env.NETNS_TEST_REAL_NETNS);
  const here = netnsInode();
  if (!Number.isInteger(real) || here === real) {
    say(`refusing to run: not in a throwaway network namespace (here net:[${here}], real net:[${real}])`);
    return 1;
  }
  output('ip', ['link', 'set', 'lo', 'up']);
  const { NETNS_TEST_INNER: _inner, ...env } = process.env;
  return run(process.execPath, [vitest, ...args], { ...env, NETNS_TEST_NETNS: String(here) });
}

/** Why a rootless sandbox cannot be made here (the CLI's error, naming the setting), or undefined. */
function sandboxRefusal() {
  const probe = spawnSync(process.execPath, [cli, 'sandbox', '--', 'true'], { encoding: 'utf8' });
  if (probe.error) return probe.error.message;
  return probe.status === 0 ? undefined : probe.stderr.trim() || `netns sandbox -- true exited ${probe.status ?? probe.signal}`;
}

// Not root: this script again, as root of a rootless sandbox, where it takes the root path.
async function inSandbox(args) {
  const refusal = sandboxRefusal();
  if (refusal === undefined) {
    say('not root: running the whole suite in a rootless sandbox (netns sandbox: a user, mount and network namespace of its own; nothing on this machine changes); tests that need real root skip and say why');
    return run(process.execPath, [cli, 'sandbox', '--', process.execPath, fileURLToPath(import.meta.url), ...args], process.env);
  }
  if (process.env.CI) {
    say(`CI must run the root suite, but this user has no CAP_SYS_ADMIN and no rootless sandbox can be made: ${refusal}`);
    return 1;
  }
  say(`no CAP_SYS_ADMIN and no rootless sandbox (${refusal}): only the unit tests run; the root suite is SKIPPED (run as root to include it)`);
  return run(process.execPath, [vitest, ...args], process.env);
}

async function outer(args) {
  if (!hasSysAdmin()) return inSandbox(args);
  const missing = missingPrerequisites();
  if (missing.length > 0) {
    say(`the root suite cannot run: missing ${missing.join(', ')}`);
    return 1;
  }
  // The tests that run programs as nobody will fail; said once here, and again by each of them.
  const unreachable = nobodyCannotReach(join(root, 'package.json'));
  if (unreachable) say(`some tests will FAIL: ${unreachable}`);
  return runInThrowawayNetns({ script: fileURLToPath(import.meta.url), args, innerFlag: 'NETNS_TEST_INNER', what: 'running the suite', say });
}

/**
 * Runs `script` with `args` again in a throwaway network namespace (its
 * environment has `innerFlag`=1 and NETNS_TEST_REAL_NETNS, the real
 * namespace's inode), and fails the run if the real network changed meanwhile.
 */
/**
 * Runs `script` again in a throwaway network namespace and compares the real
 * one around it. `removeLeftNamespaces`: namespaces this run made and left
 * in /run/netns are removed and reported rather than failing the run (a
 * mutant may break a test's cleanup; what the run made is its to remove);
 * any other change to the real namespace still fails it.
 */
export async function runInThrowawayNetns({ script, args, innerFlag, what, say, removeLeftNamespaces = false }) {
  const before = snapshot();
  const real = netnsInode();
  say(`${what} in a throwaway network namespace; real net:[${real}] is compared before and after`);
  let watcher;
  const status = await run(
    'unshare',
    ['--net', '--', process.execPath, script, ...args],
    { ...process.env, [innerFlag]: '1', NETNS_TEST_REAL_NETNS: String(real) },
    (child) => (watcher = watchOurs(child.pid)),
  );
  watcher.close();
  if (removeLeftNamespaces) removeLeftOurs(before, watcher.ours, say);
  const changes = compare(before, snapshot(), watcher.ours);
  if (changes.length > 0) {
    say(`FAILED: the run changed the REAL network namespace net:[${real}]:\n${changes.map((c) => `  ${c}`).join('\n')}`);
    return status === 0 ? 1 : status;
  }
  say(`real network namespace net:[${real}] unchanged`);
  return status;
}

/** Removes the namespaces this run made (`ours`) that were not there before it and are still there. */
function removeLeftOurs(before, ours, say) {
  const known = new Set(before.netns);
  let left = [];
  try {
    left = readdirSync('/run/netns').filter((name) => SUITE_NAME.test(name) && !known.has(name) && ours.has(name));
  } catch {
    // no /run/netns: nothing left
  }
  for (const name of left) {
    if (spawnSync('ip', ['netns', 'del', name]).status === 0) say(`removed ${name}, which the run made and left behind`);
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  process.exitCode = await (process.env.NETNS_TEST_INNER === '1' ? inner(args) : outer(args));
}
