// Where a resident daemon listens (src/cni/daemon/place.ts), taken as a
// daemon takes it, in a test's own directory: the socket's name and path
// checked before anything is made; the directory made 0700 and refused when
// it is a link or others may write it; a second daemon refused while the
// first holds the lock, naming its pid; a stale socket replaced, a live one or
// a file that is no socket left alone; release removing only what is still
// ours. Only the directory of another user needs root.
import { chmodSync, chownSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkSocketPath, defaultSocketPath, takeSocketPlace } from '../../dist/cni/daemon/place.js';
import { inUserNamespace, privileged } from '../helpers/privileges.js';

const root = mkdtempSync(join(tmpdir(), 'netns-resident-place-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let next = 0;
/** A socket path in a fresh directory of its own (not yet made). */
const fresh = () => join(root, `d${next++}`, 'plugin.sock');

/** A unix socket file that nothing listens on any more, as a daemon killed by SIGKILL leaves it. */
async function staleSocket(path: string): Promise<void> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(path, resolve));
  const copy = `${path}.kept`;
  renameSync(path, copy); // close() would remove the file: keep it aside and put it back
  await new Promise<void>((resolve) => server.close(() => resolve()));
  renameSync(copy, path);
}

describe('the resident socket place', () => {
  it("names the default socket after the plugin, refusing a name that is no plain file name", () => {
    expect(defaultSocketPath('netns-ptp')).toBe('/run/netns-cni/netns-ptp.sock');
    expect(defaultSocketPath('a.b_c-1')).toBe('/run/netns-cni/a.b_c-1.sock');
    for (const name of ['', '.hidden', '-x', 'a/b', 'a b', 'x\n', 7]) {
      expect(() => defaultSocketPath(name as never), String(name)).toThrow(expect.objectContaining({ code: 'ERR_NETNS_INVALID_ARG', message: `a resident plugin's name is a file name of letters, digits, . _ and -; got ${JSON.stringify(name)}` }));
    }
  });

  it('takes an absolute socket path of at most 107 bytes without NUL', () => {
    const longest = `/${'é'.repeat(53)}`; // 107 bytes
    expect(() => checkSocketPath(longest)).not.toThrow();
    for (const path of [`${longest}x`, 'relative.sock', '/a\0b', 7, undefined]) {
      expect(() => checkSocketPath(path), String(path)).toThrow(expect.objectContaining({ code: 'ERR_NETNS_INVALID_ARG', message: `socketPath must be an absolute path of at most 107 bytes; got ${JSON.stringify(path)}` }));
    }
  });

  it('makes the directory 0700 and writes its pid in the lock; release removes the lock and the socket still ours', async () => {
    const path = fresh();
    const place = await takeSocketPlace(path);
    expect(lstatSync(join(path, '..')).mode & 0o777).toBe(0o700);
    expect(readFileSync(`${path}.lock`, 'utf8')).toBe(`${process.pid}\n`);
    await staleSocket(path); // stands for the socket the daemon made
    place.release(lstatSync(path).ino);
    expect(existsSync(path)).toBe(false);
    expect(existsSync(`${path}.lock`)).toBe(false);
    place.release(); // once only
  });

  it("leaves a socket that is no longer the daemon's own, and a lock file someone replaced", async () => {
    const path = fresh();
    const place = await takeSocketPlace(path);
    await staleSocket(path);
    const ours = lstatSync(path).ino;
    renameSync(path, `${path}.old`); // kept, so the next socket cannot reuse its inode
    await staleSocket(path); // another socket at the path now
    rmSync(`${path}.lock`);
    writeFileSync(`${path}.lock`, 'another\n');
    place.release(ours);
    expect(existsSync(path)).toBe(true);
    expect(readFileSync(`${path}.lock`, 'utf8')).toBe('another\n');
  });

  it('keeps the socket when release is not told which one it made', async () => {
    const path = fresh();
    const place = await takeSocketPlace(path);
    await staleSocket(path);
    place.release();
    expect(existsSync(path)).toBe(true);
    expect(existsSync(`${path}.lock`)).toBe(false);
  });

  it('refuses a second daemon while the first holds the lock, naming its pid when the lock holds one', async () => {
    const path = fresh();
    const first = await takeSocketPlace(path);
    try {
      await expect(takeSocketPlace(path)).rejects.toMatchObject({ code: 'ERR_NETNS_CNI_DAEMON_RUNNING', message: `another resident daemon serves ${path} (pid ${process.pid})`, path });
      writeFileSync(`${path}.lock`, 'not a pid\n');
      await expect(takeSocketPlace(path)).rejects.toMatchObject({ code: 'ERR_NETNS_CNI_DAEMON_RUNNING', message: `another resident daemon serves ${path}` });
    } finally {
      first.release();
    }
    (await takeSocketPlace(path)).release(); // free again
  });

  it('replaces a stale socket, and leaves a live one or a file that is no socket, holding no lock after', async () => {
    const path = fresh();
    mkdirSync(join(path, '..'), { mode: 0o700 });
    await staleSocket(path);
    const stale = lstatSync(path).ino;
    (await takeSocketPlace(path)).release();
    expect(existsSync(path)).toBe(false);
    expect(stale).toBeGreaterThan(0);

    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(path, resolve));
    try {
      await expect(takeSocketPlace(path)).rejects.toMatchObject({ code: 'ERR_NETNS_CNI_DAEMON_RUNNING', message: `a process listens on ${path} without holding its lock file: not removed (taking ${path})`, path });
      expect(existsSync(path)).toBe(true);
      expect(existsSync(`${path}.lock`)).toBe(false);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }

    writeFileSync(path, 'user data');
    await expect(takeSocketPlace(path)).rejects.toMatchObject({ code: 'ERR_NETNS_INVALID_PATH', message: `${path} exists and is not a socket: not removed (taking ${path})`, path });
    expect(readFileSync(path, 'utf8')).toBe('user data');
    expect(existsSync(`${path}.lock`)).toBe(false);
  });

  it('refuses a directory that is a link, or that others may write, leaving it as it is', async () => {
    const real = join(root, `d${next++}`);
    mkdirSync(real, { mode: 0o700 });
    const link = join(root, `d${next++}`);
    symlinkSync(real, link);
    await expect(takeSocketPlace(join(link, 'p.sock'))).rejects.toMatchObject({ code: 'ERR_NETNS_INVALID_PATH', message: `the resident socket's directory ${link} is not a directory (a symbolic link is refused too)`, path: link });
    for (const mode of [0o720, 0o702]) {
      chmodSync(real, mode);
      await expect(takeSocketPlace(join(real, 'p.sock')), mode.toString(8)).rejects.toMatchObject({ code: 'ERR_NETNS_INVALID_PATH', message: `the resident socket's directory ${real} may be written by others (mode ${mode.toString(8)})` });
    }
    expect(existsSync(join(real, 'p.sock.lock'))).toBe(false);
    chmodSync(real, 0o750); // readable by others is fine
    (await takeSocketPlace(join(real, 'p.sock'))).release();
  });

  // Giving the directory to another user needs the machine's real root (a rootless sandbox maps one uid).
  it.skipIf(!privileged || inUserNamespace)("refuses a directory that is another user's", async () => {
    const dir = join(root, `d${next++}`);
    mkdirSync(dir, { mode: 0o700 });
    chownSync(dir, 65534, 65534);
    await expect(takeSocketPlace(join(dir, 'p.sock'))).rejects.toMatchObject({ code: 'ERR_NETNS_INVALID_PATH', message: `the resident socket's directory ${dir} belongs to uid 65534, not to this process (uid ${process.geteuid!()})` });
    expect(existsSync(join(dir, 'p.sock.lock'))).toBe(false);
  });
});
