// A slow IPAM, as a loaded node or a contended lock makes one: a program of the
// IPAM's name, first in CNI_PATH, that waits, then runs the real IPAM with the
// same stdin, environment and stdio, and then marks that it is done, so the
// runner can tell when an abandoned ADD's delegate has finished. Written in
// JavaScript for this Node (no shell: no path or name is ever parsed as shell text).
import { watch } from 'node:fs';
import { chmod, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findInPath } from '../../invoke.js';

export interface SlowIpam {
  /** The directory to put first in CNI_PATH. */
  dir: string;
  /** Resolves when a delegate run has ended (the real IPAM exited), or after `limitMs`, or when `signal` aborts (the run's end kills it). */
  finished(limitMs: number, signal?: AbortSignal): Promise<boolean>;
  remove(): Promise<void>;
}

function wrapperSource(real: string, delayMs: number, doneDir: string): string {
  return `#!${process.execPath}
const { spawn } = require('node:child_process');
const { writeFileSync } = require('node:fs');
setTimeout(() => {
  const child = spawn(${JSON.stringify(real)}, [], { stdio: 'inherit' });
  child.on('close', (code) => {
    writeFileSync(${JSON.stringify(doneDir)} + '/' + process.pid, '');
    process.exit(code ?? 1);
  });
}, ${delayMs});
`;
}

/** A wrapper of the IPAM `type`, found in `cniPath`, delayed by `delayMs`. */
export async function slowIpam(type: string, cniPath: readonly string[], delayMs: number): Promise<SlowIpam> {
  const real = await findInPath(type, cniPath);
  const dir = await mkdtemp(join(tmpdir(), 'netns-cni-slow-ipam-'));
  const doneDir = await mkdtemp(join(tmpdir(), 'netns-cni-slow-ipam-done-'));
  const wrapper = join(dir, type);
  await writeFile(wrapper, wrapperSource(real, delayMs, doneDir), { mode: 0o755 });
  await chmod(dir, 0o755);
  return {
    dir,
    finished: (limitMs, signal) => doneOrLimit(doneDir, limitMs, signal),
    remove: async () => {
      await rm(dir, { recursive: true, force: true });
      await rm(doneDir, { recursive: true, force: true });
    },
  };
}

async function doneOrLimit(doneDir: string, limitMs: number, signal: AbortSignal | undefined): Promise<boolean> {
  const watcher = watch(doneDir);
  try {
    if ((await readdir(doneDir)).length > 0) return true;
    return await new Promise<boolean>((resolve) => {
      const end = (done: boolean) => {
        clearTimeout(limit);
        signal?.removeEventListener('abort', aborted);
        resolve(done);
      };
      const aborted = () => end(false);
      const limit = setTimeout(() => end(false), limitMs);
      watcher.on('change', () => end(true));
      signal?.addEventListener('abort', aborted, { once: true });
    });
  } finally {
    watcher.close();
  }
}
