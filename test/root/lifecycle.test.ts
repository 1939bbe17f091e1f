import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readlinkSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { NetNS, withNetNS } from '../../dist/index.js';
import { mountsAt } from '../helpers/mounts.js';
import { inodeOf, threadsAwayFrom } from '../helpers/process-state.js';
import { privileged } from '../helpers/privileges.js';

const prefix = `nsio-life-${process.pid}-${randomBytes(3).toString('hex')}-`;
const home = inodeOf('/proc/thread-self/ns/net');

function ipNetnsList(): string[] {
  return execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' })
    .split('\n')
    .map((line) => line.split(' ')[0]!)
    .filter(Boolean);
}

function ours(): string[] {
  return existsSync('/run/netns') ? readdirSync('/run/netns').filter((name) => name.startsWith(prefix)) : [];
}

/** Whether any process still refers to a namespace inode (threads or fds). */
function reachable(inode: number): boolean {
  const target = `net:[${inode}]`;
  for (const pid of readdirSync('/proc').filter((entry) => /^\d+$/.test(entry))) {
    try {
      for (const tid of readdirSync(`/proc/${pid}/task`)) if (readlinkSync(`/proc/${pid}/task/${tid}/ns/net`) === target) return true;
      for (const fd of readdirSync(`/proc/${pid}/fd`)) if (readlinkSync(`/proc/${pid}/fd/${fd}`) === target) return true;
    } catch {
      // the process went away
    }
  }
  return false;
}

describe.skipIf(!privileged)('namespace lifecycle, interoperable with ip netns', () => {
  afterEach(() => {
    for (const name of ours()) execFileSync('ip', ['netns', 'del', name]);
  });

  it('creates a namespace that ip netns lists, enters and deletes', async () => {
    const name = `${prefix}made-here`;
    const ns = await NetNS.create(name);
    try {
      expect(ns.path).toBe(`/run/netns/${name}`);
      expect(ipNetnsList()).toContain(name);
      const seen = execFileSync('ip', ['netns', 'exec', name, 'readlink', '/proc/self/ns/net'], { encoding: 'utf8' });
      expect(seen.trim()).toBe(`net:[${ns.inode}]`);
      expect(NetNS.list()).toContainEqual({ name, path: ns.path, inode: ns.inode, alive: true });
      await expect(NetNS.create(name)).rejects.toMatchObject({ code: 'EEXIST', path: ns.path });
    } finally {
      ns.close();
    }
    execFileSync('ip', ['netns', 'del', name]);
    expect(ours()).toEqual([]);
    expect(mountsAt(`/run/netns/${name}`)).toEqual([]);
  });

  it('opens, lists and deletes a namespace that ip netns added', async () => {
    const name = `${prefix}made-by-ip`;
    execFileSync('ip', ['netns', 'add', name]);
    using ns = NetNS.open(name);
    expect(NetNS.list().find((entry) => entry.name === name)).toMatchObject({ alive: true, inode: ns.inode });
    expect(await withNetNS(ns, () => require('node:fs').statSync('/proc/thread-self/ns/net').ino)).toBe(ns.inode);
    await NetNS.delete(name);
    expect(ipNetnsList()).not.toContain(name);
    expect(existsSync(`/run/netns/${name}`)).toBe(false);
    expect(mountsAt(`/run/netns/${name}`)).toEqual([]);
    await expect(NetNS.delete(name)).rejects.toMatchObject({ code: 'ENOENT', syscall: 'unlink' });
  });

  it('survives 50 concurrent creates with a single /run/netns mount, and leaves nothing after deletes', async () => {
    const mountsBefore = mountsAt('/run/netns').length;
    expect(mountsBefore).toBeLessThanOrEqual(1);
    const names = Array.from({ length: 50 }, (_, i) => `${prefix}many-${i}`);
    const created = await Promise.all(names.map((name) => NetNS.create(name)));
    try {
      expect(new Set(created.map((ns) => ns.inode)).size).toBe(50);
      expect(mountsAt('/run/netns')).toHaveLength(1);
      expect(ours().sort()).toEqual([...names].sort());
    } finally {
      for (const ns of created) ns.close();
    }
    await Promise.all(names.map((name) => NetNS.delete(name)));
    expect(ours()).toEqual([]);
    expect(mountsAt('/run/netns', { under: true }).filter((point) => point.includes(prefix))).toEqual([]);
    expect(mountsAt('/run/netns')).toHaveLength(1);
    expect(threadsAwayFrom(home)).toEqual([]);
  });

  it('makes an anonymous namespace that lives only as long as its handle', async () => {
    const ns = await NetNS.create();
    const inode = ns.inode;
    expect(inode).not.toBe(home);
    expect(NetNS.list().map((entry) => entry.inode)).not.toContain(inode);
    expect(await withNetNS(ns, () => require('node:fs').statSync('/proc/thread-self/ns/net').ino)).toBe(inode);
    expect(reachable(inode)).toBe(true);
    ns.close();
    expect(reachable(inode)).toBe(false);
    expect(threadsAwayFrom(home)).toEqual([]);
  });

  it('refuses names ip netns would refuse', async () => {
    for (const bad of ['', '.', '..', 'a/b', 'x'.repeat(256), 'nul\0byte', `${prefix}new\nline`, `${prefix}del\x7f`]) {
      await expect(NetNS.create(bad)).rejects.toMatchObject({ code: 'ERR_NETNS_INVALID_NAME' });
      await expect(NetNS.delete(bad)).rejects.toMatchObject({ code: 'ERR_NETNS_INVALID_NAME' });
    }
    expect(ours()).toEqual([]);
  });

  it('takes names of up to 255 bytes, counted in UTF-8 as the kernel counts them, and refuses longer ones', async () => {
    // 'é' is one UTF-16 unit and two bytes: a count of units would let the long ones through.
    const ofBytes = (bytes: number, letter: string): string => {
      const room = bytes - Buffer.byteLength(prefix);
      const letters = Math.floor(room / Buffer.byteLength(letter));
      return `${prefix}${letter.repeat(letters)}${'x'.repeat(room - letters * Buffer.byteLength(letter))}`;
    };
    for (const letter of ['x', 'é']) {
      const longest = ofBytes(255, letter);
      const ns = await NetNS.create(longest);
      ns.close();
      expect(ipNetnsList()).toContain(longest);
      await NetNS.delete(longest);
      await expect(NetNS.create(ofBytes(256, letter))).rejects.toMatchObject({ code: 'ERR_NETNS_INVALID_NAME' });
    }
    const fewUnitsManyBytes = ofBytes(257, 'é');
    expect(fewUnitsManyBytes.length).toBeLessThan(200);
    await expect(NetNS.create(fewUnitsManyBytes)).rejects.toMatchObject({ code: 'ERR_NETNS_INVALID_NAME' });
    expect(ours()).toEqual([]);
  });

  it('identifies the namespace of a process and lists its pids', async () => {
    const name = `${prefix}identify`;
    using ns = await NetNS.create(name);
    const child = ns.spawn('sleep', ['30'], { stdio: 'ignore' });
    try {
      await new Promise((resolve) => child.once('spawn', resolve));
      // the helper execs sleep in place, so its pid is sleep's pid
      expect(NetNS.identify({ pid: child.pid! })).toEqual([name]);
      expect(NetNS.identify({ inode: ns.inode })).toEqual([name]);
      expect(NetNS.identify({ pid: process.pid })).not.toContain(name);
      expect(NetNS.pids(name)).toContain(child.pid);
    } finally {
      child.kill();
    }
    expect(() => NetNS.identify({ pid: -4 })).toThrow(expect.objectContaining({ code: 'ERR_NETNS_INVALID_ARG' }));
  });
});
