// An flock on a file, across processes, waited for with a timeout (flock has
// none, so we poll). The holder writes its pid into the file, for the error
// of whoever waits too long, and unlinks the file before unlocking it: no one
// can then lock the orphan and think it guards anything (TryLockFile checks).
import { ftruncateSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { callNative, fromNodeError, type NetnsError } from './errors.js';
import { native } from './native.js';
import { sleep } from './sleep.js';

const FIRST_POLL_MS = 2;
const MAX_POLL_MS = 100;

/** A lock taken by lockFile: its descriptor, and how to let the next holder in. */
export interface FileLock {
  /** The locked descriptor (a process that inherits it holds the lock too). */
  readonly fd: number;
  /** Unlinks the file and unlocks it; idempotent. */
  release(): void;
}

/** " (pid N…)" when the lock file names its holder, else "": for a message about a lock held too long. */
export function lockHolder(path: string): string {
  try {
    const pid = readFileSync(path, 'utf8').trim();
    return /^\d+$/.test(pid) ? ` (pid ${pid}, or a process it started)` : '';
  } catch {
    return '';
  }
}

function held(fd: number, path: string): FileLock {
  try {
    ftruncateSync(fd, 0);
    writeSync(fd, `${process.pid}\n`, 0);
  } catch (error) {
    native().closeFd(fd);
    throw fromNodeError(error, `(writing our pid to the lock file ${path})`);
  }
  let locked = true;
  return {
    fd,
    release() {
      if (!locked) return;
      locked = false;
      try {
        unlinkSync(path);
      } catch (error) {
        // someone cleaned the directory: nothing to undo
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw fromNodeError(error, `(removing the lock file ${path})`);
      } finally {
        native().closeFd(fd);
      }
    },
  };
}

/**
 * Takes the lock of the file at `path` (made if missing; its directory must
 * exist), polling for up to timeoutMs; then rejects with busy()'s error
 * (which lockHolder can help name the holder in).
 */
export async function lockFile(path: string, timeoutMs: number, busy: () => NetnsError): Promise<FileLock> {
  const giveUpAt = Date.now() + timeoutMs;
  for (let pollMs = FIRST_POLL_MS; ; pollMs = Math.min(pollMs * 2, MAX_POLL_MS)) {
    const fd = callNative(() => native().tryLockFile(path));
    if (fd >= 0) return held(fd, path);
    const left = giveUpAt - Date.now();
    if (left <= 0) throw busy();
    await sleep(Math.min(pollMs, left));
  }
}
