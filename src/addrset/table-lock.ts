// One writer per nftables table, across processes: an flock on a file named
// for the namespace (by inode) and the table. Every nft process a writer runs
// inherits the locked descriptor, and a lock lives as long as any descriptor
// of it: so when a writer is killed with a transaction in flight, the table
// stays locked until that transaction has landed or failed, and the next
// writer reads the table only after that.
import { mkdirSync } from 'node:fs';
import { ErrorCodes, fromNodeError, netnsError } from '../core/errors.js';
import { lockFile, lockHolder } from '../core/file-lock.js';
import type { WriterLock } from './backend.js';

export const LOCK_DIR = '/run/netns-addrset';

export interface LockTarget {
  /** The namespace's inode: its identity while it exists. */
  inode: number;
  path: string;
  table: string;
}

export function lockPath(target: LockTarget): string {
  return `${LOCK_DIR}/net-${target.inode}-${target.table}.lock`;
}

/** Takes the table's writer lock, polling (flock has no timeout) for up to timeoutMs. */
export async function lockTable(target: LockTarget, timeoutMs: number): Promise<WriterLock> {
  try {
    mkdirSync(LOCK_DIR, { recursive: true, mode: 0o700 });
  } catch (error) {
    throw fromNodeError(error, `(making the lock directory ${LOCK_DIR}: writers need root or write access to it)`);
  }
  const path = lockPath(target);
  return lockFile(path, timeoutMs, () =>
    netnsError(ErrorCodes.ADDRSET_LOCKED, `table inet ${target.table} in ${target.path} has another writer${lockHolder(path)}; waited ${timeoutMs} ms`, { path }),
  );
}
