import { closeSync, fstatSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { NetNS, NetnsError } from '../../dist/index.js';

const scratch = mkdtempSync(join(tmpdir(), 'netns-unit-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('NetNS.open validates before anything can switch', () => {
  it('opens the calling thread namespace and identifies it', () => {
    using ns = NetNS.current();
    expect(ns.inode).toBeGreaterThan(0);
    expect(ns.fd).toBeGreaterThan(2);
    using again = NetNS.open('/proc/self/ns/net');
    expect(ns.equals(again)).toBe(true);
  });

  it('reports a missing path as ENOENT in Node wording', () => {
    const path = join(scratch, 'missing');
    const error = catchError(() => NetNS.open(path));
    expect(error).toBeInstanceOf(NetnsError);
    expect(error).toMatchObject({ code: 'ENOENT', errno: -2, syscall: 'open', path });
    expect(error.message).toBe(`ENOENT: no such file or directory, open '${path}'`);
  });

  it('rejects a regular file, naming what it found', () => {
    const path = join(scratch, 'regular');
    writeFileSync(path, 'not a namespace');
    const error = catchError(() => NetNS.open(path));
    expect(error).toMatchObject({ code: 'ERR_NETNS_NOT_NETNS', path });
    expect(error.message).toContain('a regular file');
  });

  it('rejects a directory', () => {
    const error = catchError(() => NetNS.open(scratch));
    expect(error).toMatchObject({ code: 'ERR_NETNS_NOT_NETNS' });
    expect(error.message).toContain('a directory');
  });

  it('rejects a namespace file of another type', () => {
    const error = catchError(() => NetNS.open('/proc/self/ns/mnt'));
    expect(error).toMatchObject({ code: 'ERR_NETNS_NOT_NETNS' });
    expect(error.message).toContain('a mnt namespace');
  });

  it('resolves a bare name under /run/netns and refuses bad names', () => {
    const error = catchError(() => NetNS.open('surely-not-a-namespace-here'));
    expect(error).toMatchObject({ code: 'ENOENT', path: '/run/netns/surely-not-a-namespace-here' });
    expect(catchError(() => NetNS.open('..'))).toMatchObject({ code: 'ERR_NETNS_INVALID_NAME' });
    expect(catchError(() => NetNS.open(''))).toMatchObject({ code: 'ERR_NETNS_INVALID_ARG' });
    expect(catchError(() => NetNS.open('a\0b'))).toMatchObject({ code: 'ERR_NETNS_INVALID_NAME' });
  });
});

// acquire/release are internal (not in the published types): calls use them.
function internal(ns: NetNS): { acquire(): number; release(): void } {
  return ns as unknown as { acquire(): number; release(): void };
}

describe('a closed handle', () => {
  it('closes once and then refuses every use with ERR_NETNS_CLOSED', () => {
    const ns = NetNS.open('/proc/self/ns/net');
    ns.close();
    ns.close();
    expect(ns.closed).toBe(true);
    expect(catchError(() => ns.fd)).toMatchObject({ code: 'ERR_NETNS_CLOSED', path: '/proc/self/ns/net', message: 'the handle for /proc/self/ns/net has been closed' });
    expect(catchError(() => internal(ns).acquire())).toMatchObject({ code: 'ERR_NETNS_CLOSED' });
  });

  it('a second close() closes nothing, not even a descriptor that took its number', () => {
    const ns = NetNS.current();
    const fd = ns.fd;
    ns.close();
    const reused = openSync('/dev/null', 'r');
    expect(reused).toBe(fd);
    ns.close();
    expect(() => fstatSync(reused)).not.toThrow();
    closeSync(reused);
  });

  it('is branded with the registered symbol every copy of the package checks', () => {
    using ns = NetNS.current();
    expect((ns as unknown as Record<symbol, unknown>)[Symbol.for('netns.NsHandle')]).toBe(true);
  });

  it('releases its descriptor', () => {
    const before = NetNS.current();
    const fd = before.fd;
    before.close();
    using reopened = NetNS.current();
    expect(reopened.fd).toBe(fd); // the lowest free descriptor was handed back
  });

  it('keeps its descriptor while a call still uses it', () => {
    const ns = NetNS.current();
    const fd = internal(ns).acquire();
    ns.close();
    using other = NetNS.current();
    expect(other.fd).not.toBe(fd);
    internal(ns).release();
  });

  it('lets the descriptor go at the last release after close(), and not before', () => {
    const ns = NetNS.current();
    const fd = internal(ns).acquire();
    internal(ns).release();
    expect(() => fstatSync(fd)).not.toThrow(); // the last release of an open handle closes nothing
    internal(ns).acquire();
    internal(ns).acquire();
    internal(ns).release();
    expect(ns.fd).toBe(fd);
    expect(() => fstatSync(fd)).not.toThrow(); // a release while open closes nothing
    ns.close();
    expect(() => fstatSync(fd)).not.toThrow(); // one call still holds it
    internal(ns).release();
    expect(() => fstatSync(fd)).toThrow(expect.objectContaining({ code: 'EBADF' }));
  });

  it('is closed by `using` at the end of its block', () => {
    let held: NetNS;
    {
      using ns = NetNS.current();
      held = ns;
      expect(held.closed).toBe(false);
    }
    expect(held.closed).toBe(true);
  });

  it('equals() refuses what is not a handle or an identity, naming it', () => {
    using ns = NetNS.current();
    expect(catchError(() => ns.equals(null as never))).toMatchObject({ code: 'ERR_NETNS_INVALID_ARG', message: 'equals takes a NetNS or { dev, inode }, got null' });
    expect(catchError(() => ns.equals(7 as never))).toMatchObject({ code: 'ERR_NETNS_INVALID_ARG', message: 'equals takes a NetNS or { dev, inode }, got number' });
    expect(ns.equals({ dev: ns.dev, inode: ns.inode })).toBe(true);
    expect(ns.equals({ dev: ns.dev, inode: ns.inode + 1 })).toBe(false);
    expect(ns.equals({ dev: ns.dev + 1, inode: ns.inode })).toBe(false);
  });

  it('NetNS.fromPid validates the pid', () => {
    expect(catchError(() => NetNS.fromPid(-1))).toMatchObject({ code: 'ERR_NETNS_INVALID_ARG' });
    using self = NetNS.fromPid(process.pid);
    using current = NetNS.current();
    expect(self.equals(current)).toBe(true);
  });
});

function catchError(fn: () => unknown): Error & Record<string, unknown> {
  try {
    fn();
  } catch (error) {
    return error as Error & Record<string, unknown>;
  }
  throw new Error('expected an error');
}
