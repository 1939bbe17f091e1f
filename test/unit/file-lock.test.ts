// The cross-process lock under address-set tables and lab state files
// (src/core/file-lock.ts): who holds it is named only from a pid the file
// really holds, a release tolerates a lock file someone removed but reports
// any other failure, a zero timeout is one try, and a waiter backs off.
import { closeSync, existsSync, fstatSync, mkdirSync, mkdtempSync, openSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { netnsError } from '../../dist/core/errors.js';
import { lockFile, lockHolder } from '../../dist/core/file-lock.js';

const dir = mkdtempSync(join(tmpdir(), 'netns-file-lock-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => {
  vi.useRealTimers();
});

let count = 0;
const freshPath = () => join(dir, `lock-${++count}`);
const busy = () => netnsError('ERR_NETNS_BUSY', 'held');

describe('lockHolder', () => {
  it('names the pid a lock file holds, and nothing for a file that holds something else', () => {
    const path = freshPath();
    writeFileSync(path, '1234\n');
    expect(lockHolder(path)).toBe(' (pid 1234, or a process it started)');
    for (const text of ['x1234\n', '1234x\n', '\n']) {
      writeFileSync(path, text);
      expect(lockHolder(path)).toBe('');
    }
    expect(lockHolder(join(dir, 'missing'))).toBe('');
  });
});

describe('lockFile', () => {
  it('writes our pid into the file it holds; a release removes it and closes the descriptor, once', async () => {
    const path = freshPath();
    const lock = await lockFile(path, 0, busy);
    expect(lockHolder(path)).toBe(` (pid ${process.pid}, or a process it started)`);
    lock.release();
    expect(() => unlinkSync(path)).toThrow(expect.objectContaining({ code: 'ENOENT' }));
    expect(() => fstatSync(lock.fd)).toThrow(expect.objectContaining({ code: 'EBADF' }));
    const reused = openSync(path, 'w'); // the lowest free descriptor: the lock's number again
    expect(reused).toBe(lock.fd);
    lock.release(); // idempotent: closes nothing, removes nothing
    expect(() => fstatSync(reused)).not.toThrow();
    expect(existsSync(path)).toBe(true);
    closeSync(reused);
  });

  it('takes descriptor 0 when that is the lowest free one (a daemon that closed stdin)', async () => {
    const path = freshPath();
    closeSync(0);
    try {
      const lock = await lockFile(path, 0, busy);
      expect(lock.fd).toBe(0);
      lock.release();
    } finally {
      expect(openSync('/dev/null', 'r')).toBe(0); // stdin back, as it was
    }
  });

  it('releases a lock whose file someone removed, and reports a release that could not remove it', async () => {
    const path = freshPath();
    const removed = await lockFile(path, 0, busy);
    unlinkSync(path);
    expect(() => removed.release()).not.toThrow();

    const replaced = await lockFile(path, 0, busy);
    unlinkSync(path);
    mkdirSync(path); // unlink(2) of a directory: EISDIR
    expect(() => replaced.release()).toThrow(expect.objectContaining({ code: 'EISDIR', message: expect.stringContaining(`(removing the lock file ${path})`) }));
    expect(await lockFile(join(dir, 'after'), 0, busy)).toBeDefined(); // the descriptor was closed all the same
  });

  it("with a zero timeout tries once: rejects at once with the caller's error while the lock is held", async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'Date'] }); // no poll can fire: only the first try can settle it
    const path = freshPath();
    const held = await lockFile(path, 0, busy);
    let outcome: unknown = 'pending';
    lockFile(path, 0, busy).then(
      () => (outcome = 'locked'),
      (error: { code: string }) => (outcome = error.code),
    );
    await new Promise((resolve) => setImmediate(resolve));
    expect(outcome).toBe('ERR_NETNS_BUSY');
    held.release();
  });

  it('polls a held lock at 2 ms, then twice as long each time up to 100 ms, and takes it at the poll after it is let go', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'Date'] });
    const path = freshPath();
    // Polls at 0, 2, 6, 14, 30, 62, 126, then 100 ms apart: 226, 326...
    for (const [releaseAt, takenAt] of [
      [50, 62],
      [930, 1026],
    ]) {
      const held = await lockFile(path, 60_000, busy);
      let taken: { release(): void } | undefined;
      const waiting = lockFile(path, 60_000, busy).then((lock) => (taken = lock));
      await vi.advanceTimersByTimeAsync(releaseAt!);
      held.release();
      await vi.advanceTimersByTimeAsync(takenAt! - releaseAt! - 1);
      expect(taken, `taken before the poll at ${takenAt} ms`).toBeUndefined();
      await vi.advanceTimersByTimeAsync(1);
      expect(taken, `taken at the poll at ${takenAt} ms`).toBeDefined();
      (await waiting).release();
    }
  });
});
