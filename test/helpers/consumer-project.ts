// A throwaway project that uses netns as a user's would: installed from the
// tarball `npm pack` makes (so only what the package ships is there), then
// built and run with real tools (node, esbuild, tsx, tsc).
//
// The suite runs in a network namespace without network, so npm installs
// --offline, from the cache `npm ci` filled. That cache holds tarballs but no
// registry metadata, so the project gets a lockfile: this repository's entries
// for netns's dependencies, which name the cached tarballs by integrity.
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { BUILT_FILES } from '../../scripts/prebuilds.mjs';

const repo = fileURLToPath(new URL('../..', import.meta.url));

export interface CommandResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  env?: Record<string, string | undefined>;
  cwd?: string;
}

export interface ConsumerProject {
  dir: string;
  /** Writes a file (path relative to the project), making its folders. */
  write(path: string, text: string): string;
  /** Runs a command in the project; never rejects, the result says how it ended. */
  run(command: string, args: string[], options?: RunOptions): Promise<CommandResult>;
  node(args: string[], options?: RunOptions): Promise<CommandResult>;
  /** One of this repository's dev tools (esbuild, tsc, tsx), on the project's files. */
  tool(name: 'esbuild' | 'tsc' | 'tsx', args: string[], options?: RunOptions): Promise<CommandResult>;
  remove(): void;
}

/** Runs a command to its end (killed after killAfterMs, a minute by default); never rejects, the result says how it ended. */
export function exec(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv, killAfterMs = 60_000): Promise<CommandResult> {
  return new Promise((resolve) => {
    // The timeout only ends a child that never exits, so a hang is a failed result, not a stuck suite.
    execFile(command, args, { cwd, env, encoding: 'utf8', timeout: killAfterMs, maxBuffer: 64 << 20 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : null) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

async function mustRun(command: string, args: string[], cwd: string): Promise<void> {
  const result = await exec(command, args, cwd, process.env);
  if (result.code !== 0) throw new Error(`${command} ${args.join(' ')} failed (${result.code}):\n${result.stderr}${result.stdout}`);
}

/** A consumer project's lockfile installing netns from `tarball` with its dependencies from npm's cache. */
export function lockfile(tarball: string): unknown {
  const lock = JSON.parse(readFileSync(join(repo, 'package-lock.json'), 'utf8')) as { packages: Record<string, Record<string, unknown>> };
  const self = lock.packages['']!;
  const packages: Record<string, unknown> = {
    '': { name: 'consumer', dependencies: { netns: `file:${tarball}` } },
    'node_modules/netns': { version: self.version, resolved: `file:${tarball}`, dependencies: self.dependencies, bin: self.bin, hasInstallScript: true },
  };
  for (const [path, entry] of Object.entries(lock.packages)) {
    if (path.startsWith('node_modules/') && !entry.dev && !entry.devOptional) packages[path] = entry;
  }
  return { name: 'consumer', lockfileVersion: 3, requires: true, packages };
}

async function install(dir: string): Promise<void> {
  // dist/ is built already (npm test's pretest): no `prepare` at pack time.
  await mustRun('npm', ['pack', '--ignore-scripts', '--silent', '--pack-destination', dir], repo);
  const { version } = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as { version: string };
  const tarball = join(dir, `netns-${version}.tgz`);
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'consumer', private: true, dependencies: { netns: `file:${tarball}` } }));
  writeFileSync(join(dir, 'package-lock.json'), JSON.stringify(lockfile(tarball)));
  await mustRun('npm', ['install', '--offline', '--ignore-scripts', '--no-audit', '--no-fund'], dir);
  // What netns's install script would build (node-gyp, a minute): skipped
  // above for speed, so this repository's build stands in for it.
  const release = join(dir, 'node_modules', 'netns', 'build', 'Release');
  mkdirSync(release, { recursive: true });
  for (const { built } of BUILT_FILES) copyFileSync(join(repo, 'build', 'Release', built), join(release, built));
  // `node --import tsx` resolves tsx from the project; its own dependencies resolve from the repository (symlinks are followed).
  symlinkSync(join(repo, 'node_modules', 'tsx'), join(dir, 'node_modules', 'tsx'));
}

/** Makes the project; remove() it in afterAll. */
export async function createConsumerProject(): Promise<ConsumerProject> {
  const dir = mkdtempSync(join(tmpdir(), 'netns-consumer-'));
  const remove = () => rmSync(dir, { recursive: true, force: true });
  try {
    await install(dir);
  } catch (error) {
    remove();
    throw error;
  }
  // The project uses its own installed netns unless a test says otherwise (npm run test:asan sets NETNS_ADDON_PATH).
  const own = { NETNS_ADDON_PATH: undefined, NETNS_EXEC_HELPER: undefined, NETNS_RUNTIME_DIR: undefined };
  const run = (command: string, args: string[], options: RunOptions = {}) =>
    exec(command, args, options.cwd ?? dir, { ...process.env, ...own, ...options.env });
  return {
    dir,
    write(path, text) {
      const file = join(dir, path);
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, text);
      return file;
    },
    run,
    node: (args, options) => run(process.execPath, args, options),
    tool: (name, args, options) => run(join(repo, 'node_modules', '.bin', name), args, options),
    remove,
  };
}

/** What a program printed last, one line of JSON, once it exited 0 (else the test fails showing its stderr). */
export function lastJson(result: CommandResult): unknown {
  expect(result, `exit ${result.code}\nstderr: ${result.stderr}`).toMatchObject({ code: 0 });
  return JSON.parse(result.stdout.trim().split('\n').at(-1)!);
}
