// One writer per nftables table, across processes: an flock on a file named
// for the namespace (by inode) and the table. Every nft process a writer runs
// inherits the locked descriptor, and a lock lives as long as any descriptor
// of it: so when a writer is killed with a transaction in flight, the table
// stays locked until that transaction has landed or failed, and the next
// writer reads the table only after that.
import { ftruncateSync, mkdirSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { callNative, ErrorCodes, fromNodeError, netnsError } from '../core/errors.js';
import { native } from '../core/native.js';
import type { WriterLock } from './backend.js';

export const LOCK_DIR = '/run/netns-addrset';
const FIRST_POLL_MS = 2;
const MAX_POLL_MS = 100;

export interface LockTarget {
  /** The namespace's inode: its identity while it exists. */
  inode: number;
  path: string;
  table: string;
}

export function lockPath(target: LockTarget): string {
  return `${LOCK_DIR}/net-${target.inode}-${target.table}.lock`;
}

function holderOf(path: string): string {
  try {
    const pid = readFileSync(path, 'utf8').trim();
    return /^\d+$/.test(pid) ? ` (pid ${pid}, or an nft it started)` : '';
  } catch {
    return '';
  }
}

function fileLock(fd: number, path: string): WriterLock {
  try {
    ftruncateSync(fd, 0);
    writeSync(fd, `${process.pid}\n`, 0);
  } catch (error) {
    native().closeFd(fd);
    throw fromNodeError(error, `(writing our pid to the table's lock file ${path})`);
  }
  let held = true;
  return {
    fd,
    release() {
      if (!held) return;
      held = false;
      // Unlinked while still locked, so no one can lock this file anew and
      // think it guards the table (TryLockFile checks for this).
      try {
        unlinkSync(path);
      } catch (error) {
        // someone cleaned /run: nothing to undo
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw fromNodeError(error, `(removing the table's lock file ${path})`);
      } finally {
        native().closeFd(fd);
      }
    },
  };
}

/** Takes the table's writer lock, polling (flock has no timeout) for up to timeoutMs. */
export async function lockTable(target: LockTarget, timeoutMs: number): Promise<WriterLock> {
  try {
    mkdirSync(LOCK_DIR, { recursive: true, mode: 0o700 });
  } catch (error) {
    throw fromNodeError(error, `(making the lock directory ${LOCK_DIR}: writers need root or write access to it)`);
  }
  const path = lockPath(target);
  const giveUpAt = Date.now() + timeoutMs;
  for (let pollMs = FIRST_POLL_MS; ; pollMs = Math.min(pollMs * 2, MAX_POLL_MS)) {
    const fd = callNative(() => native().tryLockFile(path));
    if (fd >= 0) return fileLock(fd, path);
    const left = giveUpAt - Date.now();
    if (left <= 0) {
      throw netnsError(
        ErrorCodes.ADDRSET_LOCKED,
        `table inet ${target.table} in ${target.path} has another writer${holderOf(path)}; waited ${timeoutMs} ms`,
        { path },
      );
    }
    await sleep(Math.min(pollMs, left));
  }
}
