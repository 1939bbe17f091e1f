// `netns runtime <dir>`: fills a folder with the files netns runs besides its
// JavaScript (addon, exec and sandbox helpers, self-contained worker entry), for a program
// that bundles netns and so no longer has them beside it. The program then
// runs with NETNS_RUNTIME_DIR=<dir> (see src/core/runtime-files.ts).
import { chmodSync, constants, copyFileSync, mkdirSync, mkdtempSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import { installedFile, RUNTIME_DIR_VARIABLE, RUNTIME_FILES, RUNTIME_STAMP, runtimeStamp } from '../core/runtime-files.js';
import { printResult, usageError } from './output.js';

type Staged = { temporary: string; target: string };

// Every file is staged before any is replaced, so a fill that fails (no space,
// no permission) leaves the folder as it was. The staging folder is made by
// mkdtemp (a fresh name, owner-only), so nothing planted in a shared folder
// (a symlink at a guessable temporary name) can be written through.
function stage(dir: string, staging: string): Staged[] {
  const staged = RUNTIME_FILES.map((file) => {
    const source = installedFile(file);
    const temporary = join(staging, file.name);
    copyTo(source, temporary);
    chmodSync(temporary, statSync(source).mode & 0o7777); // the helper must stay executable, whatever the umask
    return { temporary, target: join(dir, file.name) };
  });
  const stamp = { temporary: join(staging, RUNTIME_STAMP), target: join(dir, RUNTIME_STAMP) };
  writeFileSync(stamp.temporary, runtimeStamp(), { flag: 'wx' });
  return [...staged, stamp];
}

// Node names the source of a failed copy; what the user can act on is the target.
function copyTo(source: string, target: string): void {
  try {
    copyFileSync(source, target, constants.COPYFILE_EXCL);
  } catch (error) {
    throw Object.assign(error as Error, { path: target });
  }
}

function fillRuntimeDir(dir: string): string[] {
  mkdirSync(dir, { recursive: true });
  const staging = mkdtempSync(join(dir, '.netns-runtime-'));
  try {
    const staged = stage(dir, staging);
    // Unstamped while files are replaced: a fill killed half-way leaves a folder
    // programs refuse, never an old stamp over new files. The stamp goes last.
    rmSync(join(dir, RUNTIME_STAMP), { force: true });
    // Replaced by rename, never rewritten in place: a running program may have the old addon mapped.
    return staged.map(({ temporary, target }) => {
      renameSync(temporary, target);
      return target;
    });
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

export function addRuntimeCommand(program: Command): void {
  program
    .command('runtime')
    .description(`copy the addon, exec and sandbox helpers and worker entry into <dir>, for a bundle that includes netns (run it with ${RUNTIME_DIR_VARIABLE}=<dir>)`)
    .argument('<dir>', 'folder to fill (created if missing)')
    .option('--json', 'print JSON')
    .action((dir: string, options: { json?: boolean }) => {
      if (dir.trim() === '') throw usageError('dir must name a folder');
      const folder = resolve(dir);
      const files = fillRuntimeDir(folder);
      printResult({ dir: folder, files }, Boolean(options.json), () => [...files, `run the bundle with ${RUNTIME_DIR_VARIABLE}=${folder}`]);
    });
}
