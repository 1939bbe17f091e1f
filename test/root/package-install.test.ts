// The release tarball as a user gets it: `npm run prebuilds` output packed,
// then installed into a fresh project on a machine with no compiler (a PATH
// without make, gcc, g++, cc, c++), offline from the cache `npm ci` filled.
// With a fitting prebuild nothing is compiled and netns works at once; without
// one the install stops with the one message naming what to install.
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exec, lockfile, type CommandResult } from '../helpers/consumer-project.js';
import { packageRoot } from '../helpers/node-child.js';
import { pathWithout, type BarePath } from '../helpers/path-without.js';
import { privileged } from '../helpers/privileges.js';
import { compareVersions, requiredVersions, RUNTIME_FLOOR } from '../../scripts/prebuilds.mjs';

const { version } = JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8')) as { version: string };
const TARBALL = `netns-${version}.tgz`;
const COMPILERS = ['make', 'gcc', 'g++', 'cc', 'c++'];

// Run in the fresh project: a new namespace, a function run inside it, and a spawn there through the exec helper.
const PROBE = `
import { readlinkSync } from 'node:fs';
import { NetNS, withNetNS, closePool } from 'netns';
const ns = await NetNS.create(process.argv[2]);
try {
  const expected = 'net:[' + ns.inode + ']';
  const inFn = await withNetNS(ns, () => process.getBuiltinModule('node:fs').readlinkSync('/proc/thread-self/ns/net'));
  const { stdout } = await ns.execFile('/usr/bin/readlink', ['/proc/self/ns/net']);
  console.log(JSON.stringify({ expected, inFn, spawned: stdout.trim(), home: readlinkSync('/proc/self/ns/net') }));
} finally {
  ns.close();
  await NetNS.delete(process.argv[2]);
  await closePool();
}
`;

// A build of both release targets takes a minute or two: far longer than exec's one-minute guard.
async function prebuildIfStale(): Promise<void> {
  await promisify(execFile)(process.execPath, ['scripts/prebuild.mjs', '--if-stale'], { cwd: packageRoot, timeout: 600_000, maxBuffer: 64 << 20 });
}

describe.skipIf(!privileged)('the packed tarball', () => {
  let work: string;
  let bare: BarePath;

  // The folder the tarball unpacks to (its package/), for file(1) and for a repack without prebuilds.
  const unpacked = () => join(work, 'unpacked', 'package');

  beforeAll(async () => {
    await prebuildIfStale();
    work = mkdtempSync(join(tmpdir(), 'netns-package-install-'));
    bare = pathWithout(...COMPILERS);
    // dist/ is built (npm test's pretest); `prepare` would rewrite it under the other test files.
    await mustSucceed(exec('npm', ['pack', '--ignore-scripts', '--silent', '--pack-destination', work], packageRoot, process.env));
    mkdirSync(join(work, 'unpacked'));
    await mustSucceed(exec('tar', ['-xzf', join(work, TARBALL), '-C', join(work, 'unpacked')], work, process.env));
  }, 900_000);

  afterAll(() => {
    bare?.dispose();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  // The same package with its prebuilds taken out, packed again (once), as on a platform none fits.
  let bareMade: Promise<string> | undefined;
  function bareTarball(): Promise<string> {
    bareMade ??= (async () => {
      const copy = join(work, 'bare-package');
      cpSync(unpacked(), join(copy, 'package'), { recursive: true });
      rmSync(join(copy, 'package', 'prebuilds'), { recursive: true });
      const tarball = join(copy, TARBALL);
      await mustSucceed(exec('tar', ['-czf', tarball, '-C', copy, 'package'], copy, process.env));
      return tarball;
    })();
    return bareMade;
  }

  // A project in its own folder, installing `tarball` offline, by default with no compiler on PATH.
  async function install(name: string, tarball: string, env: Record<string, string> = {}, killAfterMs?: number, flags: string[] = []): Promise<{ dir: string; result: CommandResult }> {
    const dir = join(work, name);
    mkdirSync(dir);
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'consumer', private: true, dependencies: { netns: `file:${tarball}` } }));
    writeFileSync(join(dir, 'package-lock.json'), JSON.stringify(lockfile(tarball)));
    const result = await exec('npm', ['install', '--offline', '--no-audit', '--no-fund', ...flags], dir, { ...process.env, PATH: bare.path, ...env }, killAfterMs);
    return { dir, result };
  }

  it('carries both prebuilds, each built for its machine, the sources, docs and examples, and no build debris', async () => {
    const listing = (await mustSucceed(exec('tar', ['-tzf', join(work, TARBALL)], work, process.env))).stdout.split('\n');
    // No build output, node-addon-api makefiles, tests, or the example's built bundles (made by the suite).
    expect(listing.filter((path) => /^package\/(build|test|bench|examples\/cni-ptp\/dist)\/|\.mk$/.test(path))).toEqual([]);
    // What installing needs (a source build too), and what a user reads.
    for (const path of ['scripts/install.mjs', 'binding.gyp', 'native/addon.cc', 'docs/maintainers.md', 'examples/readme/quick-start.mjs', 'examples/cni-ptp/src/main.ts', 'LICENSE', 'README.md']) {
      expect(listing).toContain(`package/${path}`);
    }
    for (const [arch, machine] of [['x64', 'x86-64'], ['arm64', 'ARM aarch64']]) {
      const dir = join(unpacked(), 'prebuilds', `linux-${arch}`);
      const describe = async (name: string) => (await mustSucceed(exec('file', ['-b', join(dir, name)], work, process.env))).stdout;
      expect(await describe('netns.napi.glibc.node')).toMatch(new RegExp(`^ELF 64-bit LSB shared object, ${machine},.*stripped`));
      for (const helper of ['netns-exec', 'netns-cni-shim']) {
        expect(await describe(helper)).toMatch(new RegExp(`^ELF 64-bit LSB executable, ${machine},.*statically linked.*stripped`));
      }
      // It loads where the README says: no newer glibc or libstdc++ than the release floor.
      const objdump = arch === 'x64' ? 'objdump' : 'aarch64-linux-gnu-objdump';
      const symbols = (await mustSucceed(exec(objdump, ['-T', join(dir, 'netns.napi.glibc.node')], work, process.env))).stdout;
      const needs = requiredVersions(symbols);
      expect(compareVersions(needs.GLIBC!, RUNTIME_FLOOR.GLIBC), `needs GLIBC_${needs.GLIBC}`).toBeLessThanOrEqual(0);
      expect(compareVersions(needs.GLIBCXX!, RUNTIME_FLOOR.GLIBCXX), `needs GLIBCXX_${needs.GLIBCXX}`).toBeLessThanOrEqual(0);
    }
  });

  it('installs with no compiler on PATH, compiles nothing, and runs in a fresh namespace', async () => {
    const { dir, result } = await install('with-prebuilds', join(work, TARBALL));
    expect(result, result.stderr).toMatchObject({ code: 0 });
    expect(existsSync(join(dir, 'node_modules', 'netns', 'build'))).toBe(false);
    writeFileSync(join(dir, 'probe.mjs'), PROBE);
    const probe = await exec(process.execPath, ['probe.mjs', `nspkg-${process.pid}`], dir, { ...process.env, PATH: bare.path, NETNS_ADDON_PATH: '', NETNS_EXEC_HELPER: '', NETNS_RUNTIME_DIR: '' });
    expect(probe, probe.stderr).toMatchObject({ code: 0 });
    const seen = JSON.parse(probe.stdout.trim()) as Record<string, string>;
    expect(seen.inFn).toBe(seen.expected);
    expect(seen.spawned).toBe(seen.expected);
    expect(seen.home).not.toBe(seen.expected);
  });

  // npm 11 warns of, and a stricter npm skips, a dependency's install script until the user approves it:
  // the prebuild must serve with no install script run at all.
  it(`with no install script run, the prebuild serves the README quick start and the CLI (${process.version})`, async () => {
    const { dir, result } = await install('no-scripts', join(work, TARBALL), {}, undefined, ['--ignore-scripts']);
    expect(result, result.stderr).toMatchObject({ code: 0 });
    expect(existsSync(join(dir, 'node_modules', 'netns', 'build'))).toBe(false);
    const env = { ...process.env, PATH: bare.path, NETNS_ADDON_PATH: '', NETNS_EXEC_HELPER: '', NETNS_RUNTIME_DIR: '' };
    cpSync(join(packageRoot, 'examples', 'readme', 'quick-start.mjs'), join(dir, 'quick-start.mjs'));
    const quickStart = await exec(process.execPath, ['quick-start.mjs'], dir, env);
    expect(quickStart, quickStart.stderr).toMatchObject({ code: 0 });
    expect(quickStart.stdout).toMatch(/hello from nsdoc-\d+-a/);
    const cli = (...args: string[]) => exec(join(dir, 'node_modules', '.bin', 'netns'), args, dir, env);
    const name = `nspkgcli-${process.pid}`;
    expect(await cli('add', name)).toMatchObject({ code: 0 });
    try {
      expect((await cli('list')).stdout.split('\n')).toContain(name);
    } finally {
      expect(await cli('del', name)).toMatchObject({ code: 0 });
    }
    expect((await cli('list')).stdout.split('\n')).not.toContain(name);
  });

  it('without a prebuild for this machine, stops with one message naming what to install', async () => {
    expectRefusal((await install('without-prebuilds', await bareTarball())).result, 'no prebuilt binary in the package fits linux-');
  });

  it('without a prebuild but with a compiler, builds from source: it runs, and the package holds no build debris', async () => {
    const { dir, result } = await install('source-build', await bareTarball(), { PATH: process.env.PATH! }, 280_000);
    expect(result, result.stderr).toMatchObject({ code: 0 });
    const installed = join(dir, 'node_modules', 'netns');
    expect(existsSync(join(installed, 'build', 'Release', 'netns.node'))).toBe(true);
    expect(existsSync(join(installed, 'node-addon-api'))).toBe(false); // gyp's makefiles of a dependency target, once
    writeFileSync(join(dir, 'probe.mjs'), PROBE);
    const probe = await exec(process.execPath, ['probe.mjs', `nspkg-${process.pid}-src`], dir, { ...process.env, NETNS_ADDON_PATH: '', NETNS_EXEC_HELPER: '', NETNS_RUNTIME_DIR: '' });
    expect(probe, probe.stderr).toMatchObject({ code: 0 });
  }, 300_000);

  it('with --build-from-source, compiles even where a prebuild fits: without a compiler, the same message', async () => {
    const { result } = await install('from-source', join(work, TARBALL), { npm_config_build_from_source: 'true' });
    expectRefusal(result, 'npm was asked to build from source');
  });

  it('prepack refuses a package folder without both prebuilds', async () => {
    const empty = mkdtempSync(join(work, 'empty-'));
    const result = await exec(process.execPath, [join(packageRoot, 'scripts', 'check-prebuilds.mjs'), empty], work, process.env);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('not packing without the prebuilt binaries');
    expect(result.stderr).toContain(join(empty, 'prebuilds', 'linux-arm64', 'netns-exec'));
  });
});

function expectRefusal(result: CommandResult, why: string): void {
  expect(result.code, result.stderr).not.toBe(0);
  expect(result.stderr).toContain(`netns: ${why}`);
  expect(result.stderr).toContain('this machine lacks make, a C++ compiler (g++), a C compiler (cc), a static C library (libc.a).');
  expect(result.stderr).toContain('Debian/Ubuntu: sudo apt-get install make g++ gcc libc6-dev');
  expect(result.stderr).toContain('Fedora/RHEL:   sudo dnf install make gcc-c++ gcc glibc-static');
  // node-gyp never started: no gyp log, no stack trace.
  expect(result.stderr).not.toMatch(/gyp (info|ERR)|\n\s+at /);
}

async function mustSucceed(pending: Promise<CommandResult>): Promise<CommandResult> {
  const result = await pending;
  expect(result, `exit ${result.code}\n${result.stderr}`).toMatchObject({ code: 0 });
  return result;
}
