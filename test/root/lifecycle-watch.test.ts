// NetNS.watch beside `ip netns monitor`: namespaces added and deleted in a run
// directory, from inotify, in the kernel's order.
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, readlinkSync, rmdirSync, unlinkSync, writeFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { NetNS, type NamespaceEvent, type NamespaceWatch } from '../../dist/index.js';
import { distUrl, packageRoot } from '../helpers/node-child.js';
import { fdCountOf } from '../helpers/process-state.js';
import { privileged } from '../helpers/privileges.js';
import { scratchRunDir, type ScratchRunDir } from '../helpers/scratch-run-dir.js';

const prefix = `nslife2-${process.pid}-`;
let cleanups: (() => unknown)[] = [];
let scratches: ScratchRunDir[] = [];

function scratch(): string {
  const made = scratchRunDir(prefix);
  scratches.push(made);
  return made.dir;
}

const ip = (...args: string[]): void => void execFileSync('ip', args);
const ours = (event: NamespaceEvent): boolean => event.name.startsWith(prefix);
const described = (events: NamespaceEvent[]): string[] => events.map(({ type, name }) => `${type} ${name}`);
const invalidArg = expect.objectContaining({ code: 'ERR_NETNS_INVALID_ARG' });

/** The next `count` events that pass `keep`, taken without ending the watch (a for-await `break` would close it). */
async function take(watch: NamespaceWatch, count: number, keep = ours): Promise<NamespaceEvent[]> {
  const iterator = watch[Symbol.asyncIterator]();
  const taken: NamespaceEvent[] = [];
  while (taken.length < count) {
    const next = await iterator.next();
    if (next.done) break;
    if (keep(next.value)) taken.push(next.value);
  }
  return taken;
}

/** Whether process `pid` holds an inotify descriptor with a watch added (fdinfo lists it as "inotify wd:"). */
function hasInotifyWatch(pid: number): boolean {
  return readdirSync(`/proc/${pid}/fd`).some(
    (fd) => readlinkSync(`/proc/${pid}/fd/${fd}`) === 'anon_inode:inotify' && readFileSync(`/proc/${pid}/fdinfo/${fd}`, 'utf8').includes('inotify wd:'),
  );
}

/**
 * `ip netns monitor`, once its watch is set; lines() gives the next lines
 * naming our namespaces. Line-buffered by stdbuf: ip printf()s into a pipe.
 */
async function ipMonitor(): Promise<{ lines(count: number): Promise<string[]> }> {
  const child = spawn('stdbuf', ['-oL', 'ip', 'netns', 'monitor'], { stdio: ['ignore', 'pipe', 'inherit'] });
  cleanups.push(() => child.kill());
  await once(child, 'spawn');
  await vi.waitFor(() => expect(hasInotifyWatch(child.pid!)).toBe(true), { timeout: 10_000, interval: 10 });
  const reader = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  return {
    async lines(count) {
      const taken: string[] = [];
      while (taken.length < count) {
        const line = (await reader.next()).value as string;
        if (line.split(' ')[1]?.startsWith(prefix)) taken.push(line);
      }
      return taken;
    },
  };
}

describe.skipIf(!privileged)('NetNS.watch, as ip netns monitor', () => {
  afterEach(async () => {
    for (const cleanup of cleanups) await cleanup();
    cleanups = [];
    for (const made of scratches) await made.remove();
    scratches = [];
    if (existsSync('/run/netns')) for (const name of readdirSync('/run/netns').filter((entry) => entry.startsWith(prefix))) ip('netns', 'del', name);
  });

  it('reports ip netns add/del and NetNS.create/delete as add and delete, line for line as ip netns monitor', async () => {
    const monitor = await ipMonitor();
    using watch = NetNS.watch();
    const [a, b] = [`${prefix}by-ip`, `${prefix}by-netns`];
    ip('netns', 'add', a);
    (await NetNS.create(b)).close();
    await NetNS.delete(a);
    ip('netns', 'del', b);
    const events = await take(watch, 4);
    expect(events).toEqual([
      { type: 'add', name: a },
      { type: 'add', name: b },
      { type: 'delete', name: a },
      { type: 'delete', name: b },
    ]);
    expect(await monitor.lines(4)).toEqual(described(events));
  });

  it('keeps the kernel order under a burst of concurrent creates and deletes, the same order ip netns monitor sees', async () => {
    const monitor = await ipMonitor();
    using watch = NetNS.watch();
    const names = Array.from({ length: 24 }, (_, i) => `${prefix}burst-${i}`);
    await Promise.all(
      names.map(async (name, i) => {
        if (i % 3 === 0) ip('netns', 'add', name);
        else (await NetNS.create(name)).close();
        await NetNS.delete(name);
      }),
    );
    const events = await take(watch, 2 * names.length);
    for (const name of names) {
      const seen = events.filter((event) => event.name === name).map((event) => event.type);
      expect(seen).toEqual(['add', 'delete']);
    }
    expect(await monitor.lines(events.length)).toEqual(described(events));
  });

  it('gives add then delete for a name added and deleted at once (a failed attach, a file made and removed)', async () => {
    const runDir = scratch();
    using watch = NetNS.watch({ runDir });
    const failed = `${prefix}attach-fails`;
    const pidMax = Number(readFileSync('/proc/sys/kernel/pid_max', 'utf8'));
    await expect(NetNS.attach(failed, pidMax, { runDir })).rejects.toMatchObject({ code: 'ENOENT' });
    const blink = `${prefix}blink`;
    closeSync(openSync(`${runDir}/${blink}`, 'w')); // both before the loop can read: one batch from the kernel
    unlinkSync(`${runDir}/${blink}`);
    expect(await take(watch, 4)).toEqual([
      { type: 'add', name: failed },
      { type: 'delete', name: failed },
      { type: 'add', name: blink },
      { type: 'delete', name: blink },
    ]);
  });

  it('ends the loop, without an error, on close(), on abort and on break, and leaves no descriptor', async () => {
    const runDir = scratch();
    const name = `${prefix}seen`;
    (await NetNS.create(name, { runDir })).close(); // first: the addon's I/O threads, started now, hold descriptors of their own
    // inotify descriptors only: a child process of an earlier test may still be closing its pipes.
    const watchFds = () => fdCountOf('anon_inode:inotify');
    const before = watchFds();
    const drain = async (watch: NamespaceWatch) => {
      const seen: NamespaceEvent[] = [];
      for await (const event of watch) seen.push(event);
      return seen;
    };

    const closed = NetNS.watch({ runDir });
    expect(watchFds()).toBe(before + 1);
    const closedLoop = drain(closed); // waiting for an event now
    closed.close();
    closed.close();
    expect(await closedLoop).toEqual([]);
    expect(watchFds()).toBe(before);

    const controller = new AbortController();
    const aborted = drain(NetNS.watch({ runDir, signal: controller.signal }));
    controller.abort();
    expect(await aborted).toEqual([]);
    expect(await drain(NetNS.watch({ runDir, signal: AbortSignal.abort() }))).toEqual([]);

    const broken = NetNS.watch({ runDir });
    await NetNS.delete(name, { runDir });
    for await (const event of broken) {
      expect(event).toEqual({ type: 'delete', name });
      break;
    }
    expect(await broken[Symbol.asyncIterator]().next()).toEqual({ value: undefined, done: true });

    for (let i = 0; i < 1000; i++) {
      using _watch = NetNS.watch({ runDir });
    }
    expect(watchFds()).toBe(before);
  });

  it('keeps the process alive while open, and lets it exit once the loop is left', async () => {
    const runDir = scratch();
    const name = `${prefix}awaited`;
    const script = `
      const { NetNS } = await import(${JSON.stringify(distUrl('index.js'))});
      const watch = NetNS.watch({ runDir: ${JSON.stringify(runDir)} });
      console.log('watching');
      for await (const event of watch) { console.log(event.type, event.name); break; }`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { cwd: packageRoot, stdio: ['ignore', 'pipe', 'inherit'] });
    cleanups.push(() => child.kill());
    const exited = once(child, 'exit');
    const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
    expect((await lines.next()).value).toBe('watching');
    (await NetNS.create(name, { runDir })).close(); // the child is still there to see it
    expect((await lines.next()).value).toBe(`add ${name}`);
    expect(await exited).toEqual([0, null]);
  });

  it('makes a missing run directory, as ip does, and refuses what it cannot watch', () => {
    const runDir = scratch();
    using _made = NetNS.watch({ runDir: `${runDir}/made` });
    expect(existsSync(`${runDir}/made`)).toBe(true);
    expect(() => NetNS.watch({ runDir: `${runDir}/no/parent` })).toThrow(expect.objectContaining({ code: 'ENOENT', syscall: 'mkdir' }));
    writeFileSync(`${runDir}/file`, '');
    expect(() => NetNS.watch({ runDir: `${runDir}/file` })).toThrow(expect.objectContaining({ code: 'ENOTDIR', path: `${runDir}/file` }));
    for (const bad of [{ runDir: 'relative' }, { runDir: '/' }, { signal: 'abort' }, 'options']) {
      expect(() => NetNS.watch(bad as never)).toThrow(invalidArg);
    }
  });

  it('ends when the run directory itself is removed: nothing more can come', async () => {
    const runDir = `${scratch()}/gone`;
    mkdirSync(runDir);
    const watch = NetNS.watch({ runDir });
    rmdirSync(runDir);
    expect(await watch[Symbol.asyncIterator]().next()).toEqual({ value: undefined, done: true });
  });

  it('loses nothing when the loop falls behind: past 1,024 events unread, the rest wait in the kernel', async () => {
    const runDir = scratch();
    using watch = NetNS.watch({ runDir });
    const names = Array.from({ length: 3000 }, (_, i) => `f${i}`);
    for (const name of names) await writeFile(`${runDir}/${name}`, ''); // the watch reads between these
    expect((await take(watch, names.length, () => true)).map((event) => event.name)).toEqual(names);
    for (const name of names) unlinkSync(`${runDir}/${name}`);
  });

  const maxQueued = Number(readFileSync('/proc/sys/fs/inotify/max_queued_events', 'utf8'));
  it.skipIf(maxQueued > 100_000)('ends the iteration with ENOBUFS when the inotify queue overflows, after the events before it', async () => {
    const runDir = scratch();
    using watch = NetNS.watch({ runDir });
    try {
      // synchronously: the loop cannot read until the kernel's queue is past full
      for (let i = 0; i <= maxQueued; i++) closeSync(openSync(`${runDir}/f${i}`, 'w'));
      const seen: NamespaceEvent[] = [];
      const error = await (async () => {
        for await (const event of watch) seen.push(event);
      })().catch((caught: unknown) => caught);
      expect(error).toMatchObject({ code: 'ENOBUFS', path: runDir });
      expect(seen.length).toBeLessThanOrEqual(maxQueued);
      expect(seen.slice(0, 3)).toEqual(['f0', 'f1', 'f2'].map((name) => ({ type: 'add', name })));
    } finally {
      for (const file of readdirSync(runDir)) unlinkSync(`${runDir}/${file}`);
    }
  });
});
