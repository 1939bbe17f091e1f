// `netns runtime <dir>`: fills a folder with the files netns runs besides its
// JavaScript (addon, exec helper, self-contained worker entry), for a program
// that bundles netns and so no longer has them beside it. The program then
// runs with NETNS_RUNTIME_DIR=<dir> (see src/core/runtime-files.ts).
import { chmodSync, copyFileSync, mkdirSync, renameSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import { installedFile, RUNTIME_DIR_VARIABLE, RUNTIME_FILES } from '../core/runtime-files.js';
import { printResult } from './output.js';

function fillRuntimeDir(dir: string): string[] {
  const sources = RUNTIME_FILES.map((file) => [installedFile(file), join(dir, file.name)] as const);
  mkdirSync(dir, { recursive: true });
  return sources.map(([source, target]) => {
    // Replaced by rename, never rewritten in place: a running program may have the old addon mapped.
    const temporary = `${target}.${process.pid}.tmp`;
    copyFileSync(source, temporary);
    chmodSync(temporary, statSync(source).mode & 0o7777); // the helper must stay executable, whatever the umask
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
      const folder = resolve(dir);
      const files = fillRuntimeDir(folder);
      printResult({ dir: folder, files }, Boolean(options.json), () => [...files, `run the bundle with ${RUNTIME_DIR_VARIABLE}=${folder}`]);
    });
}
