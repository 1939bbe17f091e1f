// Where the package finds its addon, helpers and worker (src/core/runtime-files.ts),
// in this process: a variable naming one file wins, then a runtime folder
// (refused unless its stamp names this version), then the installed package;
// a file not found is ERR_NETNS_ADDON_MISSING naming every path tried and
// what to do. The bundle and CLI tests run the same code in child processes,
// where a mutation tool cannot see it.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  absoluteRuntimeVariables,
  ADDON,
  besideAddon,
  BUNDLED_WORKER,
  installedFile,
  locate,
  RUNTIME_STAMP,
  runtimeStamp,
} from '../../dist/core/runtime-files.js';
import { VERSION } from '../../dist/core/version.js';

const scratch = mkdtempSync(join(tmpdir(), 'netns-runtime-files-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const VARIABLES = ['NETNS_RUNTIME_DIR', 'NETNS_ADDON_PATH', 'NETNS_EXEC_HELPER'] as const;
const saved = Object.fromEntries(VARIABLES.map((name) => [name, process.env[name]]));
afterEach(() => {
  for (const name of VARIABLES) {
    if (saved[name] === undefined) delete process.env[name];
    else process.env[name] = saved[name];
  }
});
const unset = () => VARIABLES.forEach((name) => delete process.env[name]);

let folders = 0;
/** A runtime folder with the addon file in it and, unless null, this stamp. */
function runtimeFolder(stamp: string | null): string {
  const folder = join(scratch, `runtime-${++folders}`);
  mkdirSync(folder);
  writeFileSync(join(folder, 'netns.node'), '');
  if (stamp !== null) writeFileSync(join(folder, RUNTIME_STAMP), stamp);
  return folder;
}

function refusal(fn: () => unknown): Error & { code?: string } {
  try {
    fn();
  } catch (error) {
    return error as Error & { code?: string };
  }
  throw new Error('expected a refusal');
}

describe('locate', () => {
  it('takes the file a variable names, and names that variable when the file is not there', () => {
    unset();
    const file = join(scratch, 'my-addon.node');
    writeFileSync(file, '');
    process.env.NETNS_ADDON_PATH = relative(process.cwd(), file); // relative: from where the program started
    expect(locate(ADDON)).toBe(file);
    process.env.NETNS_ADDON_PATH = join(scratch, 'absent.node');
    const error = refusal(() => locate(ADDON));
    expect(error.code).toBe('ERR_NETNS_ADDON_MISSING');
    expect(error.message.split('\n').slice(0, 3)).toEqual([
      'netns cannot find its native addon (netns.node) in the path NETNS_ADDON_PATH names; looked for:',
      `  ${join(scratch, 'absent.node')}`,
      'NETNS_RUNTIME_DIR is not set.',
    ]);
    expect(error.message).toContain('npm install-scripts approve netns'); // the addon is built at install
  });

  it('takes a runtime folder stamped with this version', () => {
    unset();
    const folder = runtimeFolder(runtimeStamp());
    process.env.NETNS_RUNTIME_DIR = folder;
    expect(locate(ADDON)).toBe(join(folder, 'netns.node'));
    expect(runtimeStamp()).toBe(`{"version":"${VERSION}"}\n`);
  });

  it("refuses a runtime folder of another version, or with no stamp that is netns's", () => {
    unset();
    const cases: [string | null, string][] = [
      ['{"version":"0.0.1"}\n', "holds netns 0.0.1's files"],
      [null, `holds no ${RUNTIME_STAMP} saying which netns filled it`],
      ['not json', `holds no ${RUNTIME_STAMP} saying which netns filled it`],
      [`{"version":"${VERSION}"}${' '.repeat(4096)}`, `holds no ${RUNTIME_STAMP} saying which netns filled it`], // over 4 KiB: not a stamp
    ];
    for (const [stamp, says] of cases) {
      const folder = runtimeFolder(stamp);
      process.env.NETNS_RUNTIME_DIR = folder;
      const error = refusal(() => locate(ADDON));
      expect(error.code).toBe('ERR_NETNS_RUNTIME_MISMATCH');
      expect(error.message).toBe(
        `the folder NETNS_RUNTIME_DIR names (${folder}) ${says}, and this program has netns ${VERSION}: fill it again with \`npx netns runtime ${folder}\` from netns ${VERSION}`,
      );
    }
    const directory = runtimeFolder(null);
    mkdirSync(join(directory, RUNTIME_STAMP)); // not a regular file
    process.env.NETNS_RUNTIME_DIR = directory;
    expect(refusal(() => locate(ADDON)).code).toBe('ERR_NETNS_RUNTIME_MISMATCH');
  });

  it('reads a stamp of up to 4 KiB, and checks a folder once', () => {
    unset();
    const folder = runtimeFolder(`{"version":"${VERSION}"}`.padEnd(4096, ' '));
    process.env.NETNS_RUNTIME_DIR = folder;
    expect(locate(ADDON)).toBe(join(folder, 'netns.node'));
    writeFileSync(join(folder, RUNTIME_STAMP), '{"version":"0.0.1"}'); // checked already: not read again
    expect(locate(ADDON)).toBe(join(folder, 'netns.node'));
  });

  it('names the runtime folder when the file is not in it', () => {
    unset();
    const folder = join(scratch, `runtime-${++folders}`);
    mkdirSync(folder);
    process.env.NETNS_RUNTIME_DIR = folder;
    const error = refusal(() => locate(BUNDLED_WORKER));
    expect(error.code).toBe('ERR_NETNS_ADDON_MISSING');
    expect(error.message.split('\n').slice(0, 3)).toEqual([
      'netns cannot find its pool worker entry (netns-worker.mjs) in the folder NETNS_RUNTIME_DIR names; looked for:',
      `  ${join(folder, 'netns-worker.mjs')}`,
      `NETNS_RUNTIME_DIR is ${folder}.`,
    ]);
    expect(error.message).not.toContain('install-scripts'); // the worker is JavaScript, not built at install
  });

  it('without variables takes the installed package\'s own file', () => {
    unset();
    expect(locate(ADDON)).toBe(installedFile(ADDON));
    expect(installedFile(ADDON)).toMatch(/\/build\/Release\/netns\.node$/);
  });
});

describe('absoluteRuntimeVariables', () => {
  it('gives the variables that are set as absolute paths, for a pool thread that may start elsewhere', () => {
    unset();
    expect(absoluteRuntimeVariables()).toEqual({});
    process.env.NETNS_RUNTIME_DIR = 'rt';
    process.env.NETNS_EXEC_HELPER = '/abs/netns-exec';
    expect(absoluteRuntimeVariables()).toEqual({ NETNS_RUNTIME_DIR: join(process.cwd(), 'rt'), NETNS_EXEC_HELPER: '/abs/netns-exec' });
  });
});

describe('besideAddon', () => {
  it('finds a helper beside the addon the package loads, and keeps to that folder once chosen', () => {
    const root = `${join(scratch, `package-${++folders}`)}/`;
    const beside = besideAddon('netns-exec');
    mkdirSync(`${root}prebuilds/${process.platform}-${process.arch}`, { recursive: true });
    const prebuilt = `${root}prebuilds/${process.platform}-${process.arch}/netns.napi.glibc.node`;
    writeFileSync(prebuilt, '');
    expect(beside(root)).toEqual([join(root, `prebuilds/${process.platform}-${process.arch}/netns-exec`)]);
    // A build appearing later (node-gyp rebuild while the program runs) does not move the helper under the loaded addon.
    mkdirSync(`${root}build/Release`, { recursive: true });
    writeFileSync(`${root}build/Release/netns.node`, '');
    expect(beside(root)).toEqual([join(root, `prebuilds/${process.platform}-${process.arch}/netns-exec`)]);
  });

  it('lists every candidate folder while no addon is there', () => {
    const root = `${join(scratch, `package-${++folders}`)}/`;
    expect(besideAddon('netns-exec')(root)).toEqual([
      `${root}build/Release/netns-exec`,
      `${root}build/Debug/netns-exec`,
      `${root}prebuilds/${process.platform}-${process.arch}/netns-exec`,
    ]);
  });
});
