#!/usr/bin/env node
// `npm run prebuilds`: the binaries a release tarball ships, for every target
// in prebuilds.mjs, into prebuilds/<platform>-<arch>/. (Not named "prebuild":
// npm would run a script of that name before every `npm run build`.) Another architecture is
// cross-compiled with Debian's <triplet>-gcc/g++ (g++-aarch64-linux-gnu; its
// static libc comes with it). Each target is built in a temporary copy of
// binding.gyp and native/, so the checkout's build/Release (what the tests
// load) is never touched. Every output is checked with file(1) (ELF for the
// right machine; the helpers statically linked) and stripped.
//
// --if-stale: keep prebuilds that are newer than every source they come from.
//
// Not prebuildify: it builds in the package folder itself (node-gyp rebuild
// there, replacing build/) and collects only the .node file, not the three
// executables the addon needs beside it.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync } from 'node:fs';
import { arch as hostArch, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runNodeGyp } from './node-gyp.mjs';
import { onPath } from './on-path.mjs';
import { BUILT_FILES, compareVersions, isFresh, prebuildDir, RELEASE_TARGETS, requiredVersions, RUNTIME_FLOOR } from './prebuilds.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

function fail(message) {
  console.error(`prebuild: ${message}`);
  process.exit(1);
}

// The host's own compilers for its architecture, the triplet-prefixed cross ones for another.
function toolchain(target) {
  if (target.arch === hostArch()) return { env: {}, strip: 'strip', objdump: 'objdump' };
  const tool = (name) => `${target.triplet}-${name}`;
  const missing = ['gcc', 'g++', 'strip', 'objdump'].map(tool).filter((command) => !onPath(command));
  if (missing.length > 0) {
    fail(`${target.platform}-${target.arch} is cross-compiled, and ${missing.join(', ')} ${missing.length > 1 ? 'are' : 'is'} not installed (Debian/Ubuntu: apt-get install g++-${target.triplet})`);
  }
  return { env: { CC: tool('gcc'), CXX: tool('g++'), AR: tool('ar'), LINK: tool('g++') }, strip: tool('strip'), objdump: tool('objdump') };
}


function run(command, args) {
  try {
    return execFileSync(command, args, { encoding: 'utf8' });
  } catch (error) {
    fail(error.code === 'ENOENT' ? `${command} is not installed (Debian: apt-get install ${command === 'file' ? 'file' : 'binutils'})` : `${command} ${args.join(' ')} failed: ${error.message}`);
  }
}

// file(1)'s description must say what the target runs: a 64-bit ELF for its machine, helpers linked statically.
function check(path, target, kind) {
  const description = run('file', ['-b', path]);
  const wanted = [/^ELF 64-bit LSB/, new RegExp(`, ${target.machine},`)];
  if (kind === 'executable') wanted.push(/statically linked|static-pie linked/);
  else wanted.push(/shared object/);
  for (const pattern of wanted) {
    if (!pattern.test(description)) fail(`${path} is not what ${target.platform}-${target.arch} needs (${pattern} does not match):\n  ${description}`);
  }
  return description;
}

// The oldest C and C++ runtimes the addon loads with are part of what a release promises
// (README: Install): a build machine with a newer glibc or GCC must not raise them unseen.
function checkFloor(path, dynamicSymbols) {
  const needs = requiredVersions(dynamicSymbols);
  for (const [library, floor] of Object.entries(RUNTIME_FLOOR)) {
    if (compareVersions(needs[library] ?? '0', floor) > 0) {
      fail(`${path} needs ${library}_${needs[library]}, above the promised ${library}_${floor}: build it on an older system, or raise RUNTIME_FLOOR and the README with it`);
    }
  }
}

// Builds one target in a scratch copy of the sources; returns the scratch folder.
function build(target, { env, strip, objdump }) {
  const scratch = mkdtempSync(join(tmpdir(), `netns-prebuild-${target.arch}-`));
  process.on('exit', () => rmSync(scratch, { recursive: true, force: true })); // fail() exits: no scratch left behind
  cpSync(join(root, 'binding.gyp'), join(scratch, 'binding.gyp'));
  cpSync(join(root, 'native'), join(scratch, 'native'), { recursive: true });
  // binding.gyp asks node-addon-api (require'd from its folder) for its targets.
  symlinkSync(join(root, 'node_modules'), join(scratch, 'node_modules'));
  console.log(`prebuild: building ${target.platform}-${target.arch}${env.CXX ? ` with ${env.CXX}` : ''}`);
  const status = runNodeGyp(['rebuild', `--arch=${target.arch}`, '--jobs=max'], { cwd: scratch, env: { ...process.env, ...env } });
  if (status !== 0) fail(`node-gyp failed for ${target.platform}-${target.arch} (status ${status}); its output is above`);
  for (const { built, kind } of BUILT_FILES) {
    const path = join(scratch, 'build', 'Release', built);
    check(path, target, kind);
    // A shared object keeps the symbols it exports (napi_register_module_v1).
    run(strip, kind === 'addon' ? ['--strip-unneeded', path] : [path]);
    const description = check(path, target, kind);
    if (!/, stripped/.test(description)) fail(`${path} is not stripped: ${description}`);
    if (kind === 'addon') checkFloor(path, run(objdump, ['-T', path]));
  }
  return scratch;
}

// The finished folder replaces the old one in one rename: never a half-written prebuild.
function install(scratch, target) {
  const dir = prebuildDir(root, target);
  const staging = `${dir}.new`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  for (const { built, shipped } of BUILT_FILES) cpSync(join(scratch, 'build', 'Release', built), join(staging, shipped));
  rmSync(dir, { recursive: true, force: true });
  renameSync(staging, dir);
  console.log(`prebuild: ${dir}`);
}

const ifStale = process.argv.includes('--if-stale');
const targets = RELEASE_TARGETS.filter((target) => {
  if (ifStale && isFresh(root, target)) console.log(`prebuild: ${prebuildDir(root, target)} is up to date`);
  else return true;
});
// Every toolchain is looked for before anything is built: a missing cross compiler is said at once.
const toolchains = targets.map(toolchain);
targets.forEach((target, i) => install(build(target, toolchains[i]), target));
