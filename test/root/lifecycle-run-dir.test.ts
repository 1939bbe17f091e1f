// Named namespaces kept in a run directory of the caller's own ({ runDir }),
// out of /run/netns: made there exactly as `ip netns add` makes them in
// /run/netns, and listed in readdir order as `ip netns list` prints.
import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { NetNS } from '../../dist/index.js';
import { mountsAt, propagationAt } from '../helpers/mounts.js';
import { privileged } from '../helpers/privileges.js';
import { scratchRunDir, type ScratchRunDir } from '../helpers/scratch-run-dir.js';

const prefix = `nslife2-${process.pid}-`;
let scratches: ScratchRunDir[] = [];

function scratch(): string {
  const made = scratchRunDir(prefix);
  scratches.push(made);
  return made.dir;
}

const ip = (...args: string[]): string => execFileSync('ip', args, { encoding: 'utf8' });
const ipNetnsList = (): string[] => ip('netns', 'list').split('\n').map((line) => line.split(' ')[0]!).filter(Boolean);
const ours = (names: string[]): string[] => names.filter((name) => name.startsWith(prefix));
const invalidArg = expect.objectContaining({ code: 'ERR_NETNS_INVALID_ARG' });

describe.skipIf(!privileged)('named namespaces in a run directory of the caller', () => {
  afterEach(async () => {
    for (const made of scratches) await made.remove();
    scratches = [];
    if (existsSync('/run/netns')) for (const name of ours(readdirSync('/run/netns'))) ip('netns', 'del', name);
  });

  it('creates, lists, identifies, finds the pids of and deletes a namespace there, unseen by /run/netns and ip netns', async () => {
    const runDir = scratch();
    const name = `${prefix}kept-apart`;
    const ns = await NetNS.create(name, { runDir });
    const child = ns.spawn('sleep', ['30'], { stdio: 'ignore' });
    try {
      await once(child, 'spawn');
      expect([ns.path, ns.name]).toEqual([`${runDir}/${name}`, name]);
      // a real bind mount in a shared run directory, as ip netns add makes /run/netns/NAME
      expect(mountsAt(ns.path)).toHaveLength(1);
      expect(propagationAt(runDir)).toContainEqual(expect.stringMatching(/^shared:\d+$/));
      expect(propagationAt('/run/netns') ?? ['shared:']).toContainEqual(expect.stringMatching(/^shared:/));
      const entered = execFileSync('nsenter', [`--net=${ns.path}`, 'readlink', '/proc/self/ns/net'], { encoding: 'utf8' });
      expect(entered.trim()).toBe(`net:[${ns.inode}]`);

      expect(NetNS.list({ runDir })).toEqual([{ name, path: ns.path, inode: ns.inode, alive: true }]);
      expect(NetNS.list().map((entry) => entry.name)).not.toContain(name);
      expect(ipNetnsList()).not.toContain(name);
      expect(existsSync(`/run/netns/${name}`)).toBe(false);

      expect(NetNS.identify({ pid: child.pid! }, { runDir })).toEqual([name]);
      expect(NetNS.identify({ inode: ns.inode }, { runDir })).toEqual([name]);
      expect(NetNS.identify({ pid: child.pid! })).toEqual([]);
      expect(ip('netns', 'identify', String(child.pid)).trim()).toBe(''); // ip looks in /run/netns only, as the default does
      expect(NetNS.pids(name, { runDir })).toContain(child.pid);
      expect(() => NetNS.pids(name)).toThrow(expect.objectContaining({ code: 'ENOENT' }));

      using byName = NetNS.open(name, { runDir });
      using byPath = NetNS.open(ns.path);
      using byPathInRunDir = NetNS.open(ns.path, { runDir });
      expect([byName.equals(ns), byName.name, byName.path]).toEqual([true, name, ns.path]);
      expect([byPath.equals(ns), byPath.name]).toEqual([true, undefined]);
      expect(byPathInRunDir.name).toBe(name);
      await expect(NetNS.create(name, { runDir })).rejects.toMatchObject({ code: 'EEXIST', path: ns.path });
    } finally {
      child.kill();
      ns.close();
    }
    await NetNS.delete(name, { runDir });
    expect(readdirSync(runDir)).toEqual([]);
    expect(mountsAt(runDir, { under: true })).toEqual([runDir]); // the run directory alone
    await expect(NetNS.delete(name, { runDir })).rejects.toMatchObject({ code: 'ENOENT', syscall: 'unlink' });
  });

  it('makes the run directory a mount point once, however many create in it at once', async () => {
    const runDir = scratch();
    const names = Array.from({ length: 12 }, (_, i) => `${prefix}many-${i}`);
    const made = await Promise.all(names.map((name) => NetNS.create(name, { runDir })));
    for (const ns of made) ns.close();
    expect(mountsAt(runDir)).toHaveLength(1);
    expect(new Set(NetNS.list({ runDir }).map((entry) => entry.inode)).size).toBe(names.length);
    await Promise.all(names.map((name) => NetNS.delete(name, { runDir })));
    expect(mountsAt(runDir, { under: true })).toEqual([runDir]); // the run directory alone
  });

  it('lists in readdir order, as ip netns list prints, not sorted', async () => {
    const names = ['zeta', 'alpha', 'mu', 'beta', 'omega', 'kappa', 'delta', 'chi'].map((tag) => `${prefix}order-${tag}`);
    const runDir = scratch();
    for (const [i, name] of names.entries()) {
      if (i % 2 === 0) ip('netns', 'add', name);
      else (await NetNS.create(name)).close();
      (await NetNS.create(name, { runDir })).close();
    }
    expect(ours(NetNS.list().map((entry) => entry.name))).toEqual(ours(ipNetnsList()));
    const unsorted = execFileSync('ls', ['-AU', runDir], { encoding: 'utf8' }).split('\n').filter(Boolean);
    expect(NetNS.list({ runDir }).map((entry) => entry.name)).toEqual(unsorted);
  });

  it('spawns with { etc: true } in a namespace of another run directory, binding /etc/netns/NAME', async () => {
    const runDir = scratch();
    const name = `${prefix}etc`;
    const etcDir = `/etc/netns/${name}`;
    mkdirSync(etcDir, { recursive: true });
    writeFileSync(`${etcDir}/hosts`, '10.9.9.9 from-etc-netns\n');
    try {
      using ns = await NetNS.create(name, { runDir });
      expect((await ns.execFile('cat', ['/etc/hosts'], { etc: true })).stdout).toBe('10.9.9.9 from-etc-netns\n');
      using byPath = NetNS.open(ns.path);
      expect(() => byPath.spawn('true', [], { etc: true })).toThrow(invalidArg);
    } finally {
      rmSync(etcDir, { recursive: true, force: true });
    }
  });

  it('refuses a run directory that is not an absolute path, before anything is made', async () => {
    const name = `${prefix}refused`;
    for (const runDir of ['relative/dir', '', '/', '//', '/tmp/nul\0byte', 42, null]) {
      const options = { runDir } as unknown as { runDir: string };
      await expect(NetNS.create(name, options)).rejects.toEqual(invalidArg);
      await expect(NetNS.delete(name, options)).rejects.toEqual(invalidArg);
      expect(() => NetNS.list(options)).toThrow(invalidArg);
      expect(() => NetNS.identify({ pid: process.pid }, options)).toThrow(invalidArg);
      expect(() => NetNS.pids(name, options)).toThrow(invalidArg);
      expect(() => NetNS.open(name, options)).toThrow(invalidArg);
    }
    await expect(NetNS.create(name, 'runDir' as never)).rejects.toEqual(invalidArg);
    const file = `${scratch()}/file`;
    writeFileSync(file, '');
    expect(() => NetNS.list({ runDir: file })).toThrow(expect.objectContaining({ name: 'NetnsError', code: 'ENOTDIR', path: file }));
    expect(existsSync(`/run/netns/${name}`)).toBe(false);
  });

  it('refuses / spelled another way (/tmp/.., /.) or reached through a symlink, where create and attach would mount', async () => {
    const name = `${prefix}root`;
    const rootBefore = propagationAt('/');
    const link = `${scratch()}-to-root`;
    symlinkSync('/', link);
    try {
      for (const runDir of ['/tmp/..', '/.', '/tmp/../..//', link, `${link}/tmp/..`]) {
        await expect(NetNS.create(name, { runDir }), runDir).rejects.toEqual(invalidArg);
        await expect(NetNS.attach(name, process.pid, { runDir }), runDir).rejects.toEqual(invalidArg);
      }
    } finally {
      rmSync(link);
    }
    expect(existsSync(`/${name}`)).toBe(false);
    expect(propagationAt('/')).toEqual(rootBefore);
  });

  it('takes runDir only as an own property: a polluted Object.prototype redirects nothing', async () => {
    const runDir = scratch();
    const name = `${prefix}polluted`;
    Object.defineProperty(Object.prototype, 'runDir', { value: runDir, configurable: true, writable: true });
    try {
      (await NetNS.create(name, {})).close();
    } finally {
      delete (Object.prototype as { runDir?: string }).runDir;
    }
    expect(ipNetnsList()).toContain(name);
    expect(readdirSync(runDir)).toEqual([]);
  });
});
