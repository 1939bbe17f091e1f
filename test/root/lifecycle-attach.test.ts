// NetNS.attach(name, pid), beside `ip netns attach NAME PID` on the same
// processes: a name for the namespace a live process is in.
import { execFileSync, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { NetNS } from '../../dist/index.js';
import { native } from '../../dist/core/native.js';
import { mountsAt } from '../helpers/mounts.js';
import { inodeOf, threadsAwayFrom } from '../helpers/process-state.js';
import { privileged } from '../helpers/privileges.js';
import { scratchRunDir, type ScratchRunDir } from '../helpers/scratch-run-dir.js';

const prefix = `nslife2-${process.pid}-`;
const home = inodeOf('/proc/thread-self/ns/net');
let cleanups: (() => unknown)[] = [];
let scratches: ScratchRunDir[] = [];

const ip = (...args: string[]) => spawnSync('ip', args, { encoding: 'utf8' });
const lines = (text: string): string[] => text.split('\n').filter(Boolean);

/** A `sleep` in a namespace of its own (anonymous: only the sleep keeps it), killed after the test. */
async function sleeper(): Promise<{ pid: number; inode: number }> {
  using ns = await NetNS.create();
  const child = ns.spawn('sleep', ['60'], { stdio: 'ignore' });
  cleanups.push(() => child.kill());
  await once(child, 'spawn');
  return { pid: child.pid!, inode: ns.inode };
}

/** A pid no process has: pids stay below pid_max. */
const missingPid = (): number => Number(readFileSync('/proc/sys/kernel/pid_max', 'utf8'));

describe.skipIf(!privileged)('NetNS.attach, as ip netns attach', () => {
  afterEach(async () => {
    for (const cleanup of cleanups) await cleanup();
    cleanups = [];
    for (const made of scratches) await made.remove();
    scratches = [];
    if (existsSync('/run/netns')) {
      for (const name of readdirSync('/run/netns').filter((entry) => entry.startsWith(prefix))) ip('netns', 'del', name);
    }
  });

  it("names a live process's namespace as ip does: the same inode, found by both, deleted by either", async () => {
    const { pid, inode } = await sleeper();
    const [ours, theirs] = [`${prefix}attached`, `${prefix}attached-by-ip`];
    const ns = await NetNS.attach(ours, pid);
    cleanups.push(() => ns.close());
    expect(ip('netns', 'attach', theirs, String(pid)).status).toBe(0);

    expect([ns.inode, ns.name, ns.path]).toEqual([inode, ours, `/run/netns/${ours}`]);
    expect(statSync(`/run/netns/${theirs}`).ino).toBe(inode);
    expect(mountsAt(ns.path)).toHaveLength(1);
    expect(NetNS.list().find((entry) => entry.name === ours)).toEqual({ name: ours, path: ns.path, inode, alive: true });
    const names = NetNS.identify({ pid });
    expect([...names].sort()).toEqual([ours, theirs].sort());
    // ip 6.1 prints one name: the last match in readdir order, which identify lists in
    expect(lines(ip('netns', 'identify', String(pid)).stdout)).toEqual([names.at(-1)]);
    expect(NetNS.pids(ours)).toEqual(lines(ip('netns', 'pids', ours).stdout).map(Number));
    expect(NetNS.pids(ours)).toContain(pid);
    expect(threadsAwayFrom(home)).toEqual([]);

    expect(ip('netns', 'del', ours).status).toBe(0);
    await NetNS.delete(theirs);
    expect([existsSync(ns.path), existsSync(`/run/netns/${theirs}`)]).toEqual([false, false]);
    expect(mountsAt('/run/netns', { under: true }).filter((point) => point.includes(prefix))).toEqual([]);
  });

  it('attaches in a run directory of the caller, out of /run/netns', async () => {
    const { pid, inode } = await sleeper();
    const scratch = scratchRunDir(prefix);
    scratches.push(scratch);
    const name = `${prefix}attached-apart`;
    using ns = await NetNS.attach(name, pid, { runDir: scratch.dir });
    expect([ns.inode, ns.path]).toEqual([inode, `${scratch.dir}/${name}`]);
    expect(NetNS.identify({ pid }, { runDir: scratch.dir })).toEqual([name]);
    expect(NetNS.identify({ pid })).toEqual([]);
    expect(existsSync(`/run/netns/${name}`)).toBe(false);
    const entered = execFileSync('nsenter', [`--net=${ns.path}`, 'readlink', '/proc/self/ns/net'], { encoding: 'utf8' });
    expect(entered.trim()).toBe(`net:[${inode}]`);
  });

  it('refuses a taken name with EEXIST, as ip does, and leaves the namespace there alone', async () => {
    const { pid } = await sleeper();
    const name = `${prefix}taken`;
    expect(ip('netns', 'add', name).status).toBe(0);
    const before = statSync(`/run/netns/${name}`).ino;
    const error = await NetNS.attach(name, pid).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'EEXIST', syscall: 'open', path: `/run/netns/${name}` });
    const byIp = ip('netns', 'attach', name, String(pid));
    expect(byIp.status).not.toBe(0);
    expect(byIp.stderr).toContain(`"${(error as { path: string }).path}": ${native().strerror((error as { errno: number }).errno)}`);
    expect(statSync(`/run/netns/${name}`).ino).toBe(before);
    expect(mountsAt(`/run/netns/${name}`)).toHaveLength(1);
  });

  it('reports a missing process as ENOENT naming its /proc source, as ip does, and leaves no file and no mount', async () => {
    const pid = missingPid();
    const name = `${prefix}no-such-pid`;
    const error = await NetNS.attach(name, pid).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'ENOENT', errno: -2, path: `/proc/${pid}/ns/net` });
    expect(existsSync(`/run/netns/${name}`)).toBe(false);
    expect(mountsAt(`/run/netns/${name}`)).toEqual([]);
    const byIp = ip('netns', 'attach', name, String(pid));
    expect(byIp.status).not.toBe(0);
    expect(byIp.stderr).toContain(`Bind ${(error as { path: string }).path} -> /run/netns/${name} failed: ${native().strerror(-2)}`);
    expect(existsSync(`/run/netns/${name}`)).toBe(false);
  });

  it('refuses a bad pid, name or run directory before anything is made', async () => {
    const { pid } = await sleeper();
    const name = `${prefix}refused`;
    for (const bad of [0, -1, 1.5, Number.NaN, 2 ** 53, '12', null]) {
      await expect(NetNS.attach(name, bad as number)).rejects.toMatchObject({ code: 'ERR_NETNS_INVALID_ARG' });
    }
    for (const bad of ['', '..', 'a/b', `${prefix}new\nline`, 42]) {
      await expect(NetNS.attach(bad as string, pid)).rejects.toMatchObject({ code: 'ERR_NETNS_INVALID_NAME' });
    }
    await expect(NetNS.attach(name, pid, { runDir: 'relative' })).rejects.toMatchObject({ code: 'ERR_NETNS_INVALID_ARG' });
    expect(existsSync(`/run/netns/${name}`)).toBe(false);
  });
});
