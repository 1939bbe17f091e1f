// ResultCache, libcni's result cache in a test's directory: what names a file
// (every part checked, so no entry lands outside <dir>/results), what reads
// back, and what list() skips as libcni's GetCachedAttachments does. Found by
// the mutation pass over src/cni/testing/cache.ts (issue 34).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { CACHE_KIND, ResultCache } from '../../dist/cni/testing/index.js';

// The directory's order reversed, so list()'s own sort is what orders it (ext4 here lists small directories by name, tmpfs newest first).
vi.mock('node:fs/promises', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs/promises')>();
  return { ...actual, readdir: async (path: string) => (await actual.readdir(path)).reverse() };
});

const root = mkdtempSync(join(tmpdir(), 'cni-result-cache-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let next = 0;
const fresh = () => new ResultCache(join(root, `c${next++}`));
const attachment = (containerId: string, ifname = 'eth0') => ({ containerId, ifname, netns: '/run/netns/x' });
const RESULT = { cniVersion: '1.1.0', ips: [] };

describe('ResultCache', () => {
  it('refuses a directory that is not a non-empty path, saying what it got', () => {
    const refused = (dir: unknown, got: string) => expect(() => new ResultCache(dir as string)).toThrow(expect.objectContaining({ code: 'ERR_NETNS_INVALID_ARG', message: `dir must be a non-empty path string, got ${got}` }));
    refused(7, 'number');
    refused('', '""');
    refused('a\0b', '"a\\u0000b"');
  });

  it('refuses names that could reach outside its directory', () => {
    const cache = fresh();
    expect(() => cache.file('a b', attachment('c1'))).toThrow(expect.objectContaining({ code: 'ERR_NETNS_INVALID_ARG', message: expect.stringMatching(/^a network name must match \/.*\/, got "a b"$/) }));
    expect(() => cache.file(7 as never, attachment('c1'))).toThrow(expect.objectContaining({ message: expect.stringMatching(/, got 7$/) }));
    const keys = 'containerId and ifname must be non-empty strings without / or NUL (they name the cache file)';
    for (const key of [attachment(''), attachment('../c'), attachment('c1', 'a\0'), attachment(7 as never), undefined]) {
      expect(() => cache.file('net', key as never), JSON.stringify(key)).toThrow(expect.objectContaining({ code: 'ERR_NETNS_INVALID_ARG', message: keys }));
    }
    expect(cache.file('net', attachment('c1'))).toBe(join(cache.dir, 'results', 'net-c1-eth0'));
  });

  it('reads back what it wrote; nothing for an attachment it has not; code 6 for a file that is no entry', async () => {
    const cache = fresh();
    expect(await cache.read('net', attachment('c1'))).toBeUndefined();
    await cache.write('net', attachment('c1'), Buffer.from('{}'), RESULT as never);
    expect(await cache.read('net', attachment('c1'))).toMatchObject({ kind: CACHE_KIND, containerId: 'c1', ifName: 'eth0', networkName: 'net', result: RESULT });
    for (const text of ['{"kind":"other"}', 'null', 'not json']) {
      writeFileSync(cache.file('net', attachment('c2')), text);
      await expect(cache.read('net', attachment('c2')), text).rejects.toMatchObject({ code: 6, message: `cached result ${cache.file('net', attachment('c2'))} is not a cniCacheV1 entry` });
    }
  });

  it('lists readable entries with a network and an interface, in file name order', async () => {
    const cache = fresh();
    expect(await cache.list()).toEqual([]); // no directory yet
    await cache.write('net', attachment('c2'), Buffer.from('{}'), RESULT as never);
    await cache.write('net', attachment('c1'), Buffer.from('{}'), RESULT as never);
    const results = join(cache.dir, 'results');
    mkdirSync(join(results, 'net-c0-dir')); // unreadable as a file
    writeFileSync(join(results, 'net-c3-bad'), 'not json');
    writeFileSync(join(results, 'net-c4-noif'), JSON.stringify({ kind: CACHE_KIND, containerId: 'c4', networkName: 'net' }));
    writeFileSync(join(results, 'net-c5-nonet'), JSON.stringify({ kind: CACHE_KIND, containerId: 'c5', ifName: 'eth0' }));
    expect((await cache.list()).map((entry) => entry.containerId)).toEqual(['c1', 'c2']);
    await cache.delete('net', attachment('c1'));
    await cache.delete('net', attachment('c1')); // none there: success
    expect((await cache.list()).map((entry) => entry.containerId)).toEqual(['c2']);
  });
});
