// `netns runtime <dir>`: fills a folder with the files netns runs besides its
// JavaScript (addon, exec helper, self-contained worker entry), for a program
// that bundles netns and so no longer has them beside it. The program then
// runs with NETNS_RUNTIME_DIR=<dir> (see src/core/runtime-files.ts).
import { chmodSync, copyFileSync, mkdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import { ErrorCodes, netnsError } from '../core/errors.js';
import { installedFile, RUNTIME_DIR_VARIABLE, RUNTIME_FILES, RUNTIME_STAMP, runtimeStamp } from '../core/runtime-files.js';
import { EXIT_USAGE, printResult } from './output.js';

type Staged = { temporary: string; target: string };

// Every file is staged beside its target before any is replaced, so a fill
// that fails (no space, no permission) leaves the folder as it was.
function stage(dir: string): Staged[] {
  const sources = RUNTIME_FILES.map((file) => [installedFile(file), join(dir, file.name)] as const);
  const staged: Staged[] = [];
  try {
    for (const [source, target] of sources) {
      const temporary = `${target}.${process.pid}.tmp`;
      staged.push({ temporary, target });
      copyTo(source, temporary);
      chmodSync(temporary, statSync(source).mode & 0o7777); // the helper must stay executable, whatever the umask
    }
    const stamp = join(dir, RUNTIME_STAMP);
    staged.push({ temporary: `${stamp}.${process.pid}.tmp`, target: stamp });
    writeFileSync(staged.at(-1)!.temporary, runtimeStamp());
    return staged;
  } catch (error) {
    for (const { temporary } of staged) rmSync(temporary, { force: true });
    throw error;
  }
}

// Node names the source of a failed copy; what the user can act on is the target.
function copyTo(source: string, target: string): void {
  try {
    copyFileSync(source, target);
  } catch (error) {
    throw Object.assign(error as Error, { path: target });
  }
}

function fillRuntimeDir(dir: string): string[] {
  mkdirSync(dir, { recursive: true });
  // Replaced by rename, never rewritten in place: a running program may have the old addon mapped.
  // The stamp goes last: a folder is only ever stamped with the version of the files it holds.
  return stage(dir).map(({ temporary, target }) => {
    renameSync(temporary, target);
    return target;
  });
}

export function addRuntimeCommand(program: Command): void {
  program
    .command('runtime')
    .description(`copy the addon, exec helper and worker entry into <dir>, for a bundle that includes netns (run it with ${RUNTIME_DIR_VARIABLE}=<dir>)`)
    .argument('<dir>', 'folder to fill (created if missing)')
    .option('--json', 'print JSON')
    .action((dir: string, options: { json?: boolean }) => {
      if (dir.trim() === '') throw Object.assign(netnsError(ErrorCodes.INVALID_ARG, 'dir must name a folder'), { exitCode: EXIT_USAGE });
      const folder = resolve(dir);
      const files = fillRuntimeDir(folder);
      printResult({ dir: folder, files }, Boolean(options.json), () => [...files, `run the bundle with ${RUNTIME_DIR_VARIABLE}=${folder}`]);
    });
}
