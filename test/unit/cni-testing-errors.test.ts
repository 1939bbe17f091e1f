// netns/cni/testing's file errors are NetnsErrors, as every error the package
// raises: Node's code, errno, syscall and path kept, Node's own error as the
// cause. Real files in a temp dir, made to fail the way a test machine can
// (root passes permission checks, so: missing files, a file where a directory
// belongs, a directory where a file belongs). And ResultCache.remove, the old
// name of delete.
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { NetnsError } from '../../dist/core/errors.js';
import { CniHarness, loadConfList, parseConfList, ResultCache } from '../../dist/cni/testing/index.js';

const dir = mkdtempSync(join(tmpdir(), 'cni-testing-errors-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const RESULT = { cniVersion: '1.0.0', interfaces: [{ name: 'eth0' }], ips: [{ address: '10.1.0.2/24' }] };
const key = { containerId: 'c1', ifname: 'eth0' };

/** What rejected, checked as a NetnsError wrapping a Node error of `code`. */
function expectWrapped(error: unknown, code: string, fields: Record<string, unknown>): void {
  expect(error).toBeInstanceOf(NetnsError);
  expect(error).toMatchObject({ name: 'NetnsError', code, ...fields });
  const cause = (error as Error).cause as NodeJS.ErrnoException;
  expect(cause).toBeInstanceOf(Error);
  expect(cause).not.toBeInstanceOf(NetnsError);
  expect(cause.code).toBe(code);
  expect((error as Error).message.startsWith(cause.message)).toBe(true);
}

describe('loadConfList', () => {
  it('a missing file rejects with a NetnsError ENOENT, Node error as cause', async () => {
    const file = join(dir, 'missing.conflist');
    const error = await loadConfList(file).catch((e: unknown) => e);
    expectWrapped(error, 'ENOENT', { errno: -2, syscall: 'open', path: file, message: expect.stringContaining('(loadConfList)') });
  });

  it('a directory rejects with a NetnsError EISDIR', async () => {
    const error = await loadConfList(dir).catch((e: unknown) => e);
    expectWrapped(error, 'EISDIR', { errno: -21, syscall: 'read' });
  });
});

describe('ResultCache', () => {
  it('write under a file where its directory belongs rejects with a NetnsError ENOTDIR', async () => {
    const notDir = join(dir, 'not-a-dir');
    writeFileSync(notDir, '');
    const error = await new ResultCache(notDir).write('net1', { ...key, netns: '' }, Buffer.from('{}'), RESULT).catch((e: unknown) => e);
    expectWrapped(error, 'ENOTDIR', { errno: -20, syscall: 'mkdir', path: join(notDir, 'results'), message: expect.stringContaining('writing the cached result') });
  });

  it("delete of an entry that is a directory rejects with a NetnsError keeping Node's ERR_FS_EISDIR", async () => {
    const cache = new ResultCache(join(dir, 'dir-entry'));
    mkdirSync(cache.file('net1', key), { recursive: true });
    const error = await cache.delete('net1', key).catch((e: unknown) => e);
    expectWrapped(error, 'ERR_FS_EISDIR', { syscall: 'rm', path: cache.file('net1', key), message: expect.stringContaining('deleting the cached result') });
  });

  it('remove is delete under its old name: the same function, and it deletes the entry', async () => {
    const cache = new ResultCache(join(dir, 'alias'));
    expect(cache.remove).toBe(cache.delete);
    expect(ResultCache.prototype.remove).toBe(ResultCache.prototype.delete);
    await cache.write('net1', { ...key, netns: '' }, Buffer.from('{}'), RESULT);
    expect(existsSync(cache.file('net1', key))).toBe(true);
    await cache.remove('net1', key);
    expect(existsSync(cache.file('net1', key))).toBe(false);
  });
});

describe('CniHarness', () => {
  it("ADD whose result cannot be cached rejects with the cache's NetnsError after the chain ran", async () => {
    const bin = join(dir, 'bin');
    mkdirSync(bin);
    writeFileSync(join(bin, 'ok'), `#!/bin/sh\ncat >/dev/null\necho '${JSON.stringify(RESULT)}'\n`, { mode: 0o755 });
    const cacheDir = join(dir, 'cache-file');
    writeFileSync(cacheDir, '');
    const harness = new CniHarness({ path: [bin], cacheDir, env: { PATH: process.env.PATH } });
    const list = parseConfList({ cniVersion: '1.0.0', name: 'net1', plugins: [{ type: 'ok' }] });
    const error = await harness.add(list, { ...key, netns: '' }).catch((e: unknown) => e);
    expectWrapped(error, 'ENOTDIR', { syscall: 'mkdir' });
  });
});
