// CniHarness refuses a test's slips before any plugin runs, each with what is
// wrong: its options, a runtime configuration, GC's list, and a network list
// that parseConfList did not make (named by the method it was given to).
// Found by the mutation pass over src/cni/testing/harness.ts (issue 34).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { CniHarness, parseConfList, ResultCache } from '../../dist/cni/testing/index.js';

const cacheDir = mkdtempSync(join(tmpdir(), 'cni-harness-input-'));
afterAll(() => rmSync(cacheDir, { recursive: true, force: true }));
const refused = (message: string) => expect.objectContaining({ code: 'ERR_NETNS_INVALID_ARG', message });
const list = parseConfList({ name: 'net1', cniVersion: '1.1.0', plugins: [{ type: 'missing-plugin' }] });
const rt = { containerId: 'c1', netns: '/run/netns/x', ifname: 'eth0' };

describe('CniHarness refuses misuse before running anything', () => {
  it('its options', () => {
    const cases: [unknown, string][] = [
      [null, 'CniHarness takes { path, cacheDir, env?, spawn? }'],
      ['/opt/cni/bin', 'CniHarness takes { path, cacheDir, env?, spawn? }'],
      [{ path: ['/bin', 7], cacheDir }, 'path must be a list of directories'],
      [{ path: [], cacheDir: '' }, 'cacheDir must be a directory path'],
      [{ path: [], cacheDir: 7 }, 'cacheDir must be a directory path'],
      [{ path: [], cacheDir, env: null }, 'env must be an object'],
      [{ path: [], cacheDir, env: 'PATH=/bin' }, 'env must be an object'],
      [{ path: [], cacheDir, spawn: 'sh' }, 'spawn must be a function'],
    ];
    for (const [options, message] of cases) expect(() => new CniHarness(options as never), JSON.stringify(options)).toThrow(refused(message));
    expect(() => new CniHarness({ path: [], cacheDir, env: {}, spawn: () => undefined as never })).not.toThrow();
  });

  it('a runtime configuration', async () => {
    const harness = new CniHarness({ path: [], cacheDir });
    const cases: [unknown, string][] = [
      [null, 'the runtime configuration must be an object: { containerId, netns, ifname, args?, capabilityArgs? }'],
      ['c1', 'the runtime configuration must be an object: { containerId, netns, ifname, args?, capabilityArgs? }'],
      [{ ...rt, containerId: 'a/b' }, 'containerId and ifname must be non-empty strings without / (they name the cache file)'],
      [{ ...rt, ifname: '' }, 'containerId and ifname must be non-empty strings without / (they name the cache file)'],
      [{ ...rt, netns: undefined }, 'netns must be a string (empty for a namespace that is gone)'],
      [{ ...rt, args: [['K', 1]] }, 'args must be a list of [key, value] string pairs'],
      [{ ...rt, capabilityArgs: null }, 'capabilityArgs must be an object'],
      [{ ...rt, capabilityArgs: [] }, 'capabilityArgs must be an object'],
      [{ ...rt, capabilityArgs: 'portMappings' }, 'capabilityArgs must be an object'],
    ];
    for (const [given, message] of cases) await expect(harness.add(list, given as never), JSON.stringify(given)).rejects.toThrow(refused(message));
  });

  it("GC's list of the attachments still held", async () => {
    const harness = new CniHarness({ path: [], cacheDir });
    const message = 'GC takes { validAttachments: [{ containerID, ifname }, ...] }';
    for (const args of [null, 'c1', {}, { validAttachments: [null] }, { validAttachments: [{ containerID: 'c1' }] }, { validAttachments: [{ containerID: 'c1', ifname: 'eth0' }, { ifname: 'eth0' }] }]) {
      await expect(harness.gc(list, args as never), JSON.stringify(args)).rejects.toThrow(refused(message));
    }
  });

  it('a network list parseConfList did not make, naming the method', async () => {
    const harness = new CniHarness({ path: [], cacheDir });
    const fake = { name: 'net1', cniVersion: '1.1.0', plugins: [{ type: 'x' }] }; // no bytes
    const message = (method: string) => `${method} takes a network configuration list from parseConfList or loadConfList`;
    await expect(harness.add(fake as never, rt)).rejects.toThrow(refused(message('add')));
    await expect(harness.check(fake as never, rt)).rejects.toThrow(refused(message('check')));
    await expect(harness.del(fake as never, rt)).rejects.toThrow(refused(message('del')));
    await expect(harness.gc(fake as never)).rejects.toThrow(refused(message('gc')));
    await expect(harness.status(fake as never)).rejects.toThrow(refused(message('status')));
    await expect(harness.cachedResult(fake as never, rt)).rejects.toThrow(refused(message('cachedResult')));
  });

  it('a network list with one field changed by hand from what parseConfList made', async () => {
    const harness = new CniHarness({ path: [], cacheDir });
    const made = parseConfList({ name: 'net1', cniVersion: '1.1.0', plugins: [{ type: 'x' }] });
    for (const change of [{ name: 7 }, { name: 1 }, { name: '../net1' }, { cniVersion: 1 }, { plugins: [] }, { plugins: {} }, { bytes: 'text' }]) {
      await expect(harness.status({ ...made, ...change } as never), JSON.stringify(change)).rejects.toThrow(refused('status takes a network configuration list from parseConfList or loadConfList'));
    }
  });
});

describe('CniHarness passes on what a plugin says', () => {
  const bin = join(cacheDir, 'bin');
  mkdirSync(bin);
  const RESULT = '{"cniVersion":"1.1.0","ips":[]}';
  writeFileSync(join(bin, 'noisy'), `#!/bin/sh\ncat > /dev/null\necho "noisy says hi" >&2\n[ "$CNI_COMMAND" = ADD ] && echo '${RESULT}'\nexit 0\n`, { mode: 0o755 });
  writeFileSync(join(bin, 'quiet'), `#!/bin/sh\ncat > /dev/null\n[ "$CNI_COMMAND" = ADD ] && echo '${RESULT}'\nexit 0\n`, { mode: 0o755 });
  const harness = new CniHarness({ path: [bin], cacheDir: join(cacheDir, 'cache'), env: { PATH: process.env.PATH, CNI_NETNS_OVERRIDE: '1' } });

  it("writes a plugin's stderr to ours, as libcni does, and nothing for a quiet one", async () => {
    const write = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      await harness.add(parseConfList({ name: 'noisy-net', cniVersion: '1.1.0', plugins: [{ type: 'noisy' }] }), { ...rt, netns: '' });
      expect(write.mock.calls.map(([text]) => String(text))).toEqual(['noisy says hi\n']);
      write.mockClear();
      await harness.add(parseConfList({ name: 'quiet-net', cniVersion: '1.1.0', plugins: [{ type: 'quiet' }] }), { ...rt, netns: '' });
      expect(write).not.toHaveBeenCalled();
    } finally {
      write.mockRestore();
    }
  });

  it('names the cached result it cannot read', async () => {
    const quiet = parseConfList({ name: 'cached-net', cniVersion: '1.1.0', plugins: [{ type: 'quiet' }] });
    await new ResultCache(join(cacheDir, 'cache')).write('cached-net', { ...rt, netns: '' }, quiet.bytes, { cniVersion: '1.1.0', ips: 'x' } as never);
    await expect(harness.cachedResult(quiet, rt)).rejects.toMatchObject({ code: 6, message: 'the cached result.ips must be an array' });
  });
});
