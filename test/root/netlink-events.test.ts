// Netlink events in a namespace: what `ip` changes there is seen, what it
// changes elsewhere is not; `existing` comes first; an overflow is reported
// and followed by a fresh dump; closing leaves no descriptor and no loop ref.
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { NetNS } from '../../dist/index.js';
import { openNetlink, type Netlink, type NetlinkEvent, type NetlinkWatcher } from '../../dist/netlink/index.js';
import { distUrl, runNodeScript } from '../helpers/node-child.js';
import { openFdCount } from '../helpers/process-state.js';
import { privileged } from '../helpers/privileges.js';

const prefix = `nsev${randomBytes(2).toString('hex')}-${process.pid}-`;
let made: string[] = [];
let handles: (Netlink | NetlinkWatcher)[] = [];
let counter = 0;

async function namespace(): Promise<{ name: string; nl: Netlink }> {
  const name = `${prefix}${counter++}`;
  const ns = await NetNS.create(name);
  made.push(name);
  const nl = await openNetlink(ns);
  ns.close(); // the socket keeps its namespace
  handles.push(nl);
  return { name, nl };
}

const ip = (name: string, ...args: string[]): void => void execFileSync('ip', ['-n', name, ...args]);

/** Reads events until one matches; returns every event read, the match last. */
async function until(events: AsyncIterator<NetlinkEvent>, match: (e: NetlinkEvent) => boolean): Promise<NetlinkEvent[]> {
  const seen: NetlinkEvent[] = [];
  for (;;) {
    const { value, done } = await events.next();
    if (done) throw new Error(`the watcher ended before the event awaited; saw ${JSON.stringify(seen)}`);
    seen.push(value);
    if (match(value)) return seen;
  }
}

const linkNamed = (name: string, action: string) => (e: NetlinkEvent) => e.type === 'link' && e.action === action && e.link.name === name;
const names = (events: NetlinkEvent[]) =>
  events.map((e) =>
    e.type === 'link' ? e.link.name : e.type === 'address' ? e.address.address : e.type === 'route' ? e.route.destination : e.type === 'neighbour' ? e.neighbour.address : e.type,
  );

describe.skipIf(!privileged)('netlink events', () => {
  afterEach(async () => {
    for (const handle of handles) handle.close();
    for (const name of made) await NetNS.delete(name);
    handles = [];
    made = [];
  });

  it('sees link, address and route changes ip makes in its namespace, in order', async () => {
    const { name, nl } = await namespace();
    const watcher = await nl.watch({ links: true, addresses: true, routes: true });
    handles.push(watcher);
    const events = watcher[Symbol.asyncIterator]();

    ip(name, 'link', 'add', 'br0', 'type', 'bridge');
    expect((await until(events, linkNamed('br0', 'new'))).at(-1)).toMatchObject({ link: { name: 'br0', up: false } });
    ip(name, 'link', 'set', 'br0', 'up');
    await until(events, (e) => e.type === 'link' && e.link.name === 'br0' && e.link.up);

    ip(name, 'addr', 'add', '10.61.0.1/24', 'dev', 'br0');
    const added = await until(events, (e) => e.type === 'address' && e.action === 'new' && e.address.address === '10.61.0.1');
    expect(added.at(-1)).toMatchObject({ address: { prefixLength: 24 } });
    ip(name, 'route', 'add', '10.62.0.0/16', 'via', '10.61.0.254', 'dev', 'br0');
    const route = await until(events, (e) => e.type === 'route' && e.action === 'new' && e.route.destination === '10.62.0.0/16');
    expect(route.at(-1)).toMatchObject({ route: { gateway: '10.61.0.254', table: 254 } });

    ip(name, 'route', 'del', '10.62.0.0/16');
    await until(events, (e) => e.type === 'route' && e.action === 'delete' && e.route.destination === '10.62.0.0/16');
    ip(name, 'addr', 'del', '10.61.0.1/24', 'dev', 'br0');
    await until(events, (e) => e.type === 'address' && e.action === 'delete' && e.address.address === '10.61.0.1');
    ip(name, 'link', 'del', 'br0');
    await until(events, linkNamed('br0', 'delete'));
  });

  it('sees neighbour entries ip adds and deletes, and lists them with existing: true', async () => {
    const { name, nl } = await namespace();
    ip(name, 'link', 'add', 'br4', 'type', 'bridge');
    ip(name, 'neigh', 'add', '10.66.0.7', 'lladdr', '02:00:00:00:00:07', 'dev', 'br4', 'nud', 'permanent');
    const watcher = await nl.watch({ neighbours: true, existing: true });
    handles.push(watcher);
    const events = watcher[Symbol.asyncIterator]();
    expect(names(await until(events, (e) => e.type === 'synced'))).toEqual(['10.66.0.7', 'synced']);
    ip(name, 'neigh', 'add', '10.66.0.8', 'lladdr', '02:00:00:00:00:08', 'dev', 'br4', 'nud', 'permanent');
    const added = await until(events, (e) => e.type === 'neighbour' && e.action === 'new');
    expect(added).toEqual([expect.objectContaining({ neighbour: expect.objectContaining({ address: '10.66.0.8', lladdr: '02:00:00:00:00:08', state: 'permanent' }) })]);
    ip(name, 'neigh', 'del', '10.66.0.8', 'dev', 'br4');
    await until(events, (e) => e.type === 'neighbour' && e.action === 'delete' && e.neighbour.address === '10.66.0.8');
  });

  it('sees nothing of another namespace', async () => {
    const [a, b] = [await namespace(), await namespace()];
    const watcher = await a.nl.watch({ links: true, addresses: true, routes: true });
    handles.push(watcher);
    // The kernel delivers an event to its subscribers before `ip` returns, so
    // anything of b's would be queued ahead of a's marker.
    ip(b.name, 'link', 'add', 'elsewhere0', 'type', 'bridge');
    ip(b.name, 'link', 'set', 'elsewhere0', 'up');
    ip(b.name, 'addr', 'add', '10.63.0.1/24', 'dev', 'elsewhere0');
    ip(a.name, 'link', 'add', 'marker0', 'type', 'bridge');
    const seen = await until(watcher[Symbol.asyncIterator](), linkNamed('marker0', 'new'));
    expect(names(seen)).toEqual(['marker0']);
  });

  it("takes only the kernel's events: one forged by another socket in the namespace is dropped", async () => {
    const { name, nl } = await namespace();
    const watcher = await nl.watch({ links: true, addresses: true });
    handles.push(watcher);
    // To every other NETLINK_ROUTE socket of the namespace (the handle's and the
    // watcher's): RTM_NEWADDR 6.6.6.6/32 on lo, as the kernel would announce it.
    const forge = `
import os, socket, struct
s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
s.bind((0, 0))
me = s.getsockname()[0]
body = struct.pack('=BBBBI', 2, 32, 0x80, 0, 1) + struct.pack('=HH4s', 8, 1, bytes([6, 6, 6, 6])) + struct.pack('=HH4s', 8, 2, bytes([6, 6, 6, 6]))
event = struct.pack('=IHHII', 16 + len(body), 20, 0, 0, 0) + body
for line in open('/proc/net/netlink').read().splitlines()[1:]:
    fields = line.split()
    if fields[1] == '0' and int(fields[2]) not in (0, me):
        s.sendto(event, (int(fields[2]), 0))
`;
    execFileSync('ip', ['netns', 'exec', name, 'python3', '-c', forge]);
    ip(name, 'link', 'add', 'real0', 'type', 'bridge');
    const seen = await until(watcher[Symbol.asyncIterator](), linkNamed('real0', 'new'));
    expect(names(seen)).toEqual(['real0']);
  });

  it('with existing: true, yields what is there first, then synced, then changes', async () => {
    const { name, nl } = await namespace();
    ip(name, 'link', 'add', 'br1', 'type', 'bridge');
    ip(name, 'link', 'set', 'br1', 'up');
    ip(name, 'addr', 'add', '10.64.0.1/24', 'dev', 'br1');
    ip(name, 'route', 'add', '10.65.0.0/16', 'via', '10.64.0.2', 'dev', 'br1');
    const watcher = await nl.watch({ links: true, addresses: true, routes: true, existing: true });
    handles.push(watcher);
    const events = watcher[Symbol.asyncIterator]();
    const first = await until(events, (e) => e.type === 'synced');
    expect(first.slice(0, -1).every((e) => 'action' in e && e.action === 'existing')).toBe(true);
    expect(names(first)).toEqual(expect.arrayContaining(['lo', 'br1', '10.64.0.1', '10.65.0.0/16', '10.64.0.0/24']));
    ip(name, 'link', 'add', 'br2', 'type', 'bridge');
    await until(events, linkNamed('br2', 'new'));
  });

  it('reports an overflow with code ENOBUFS and dumps again', async () => {
    const { name, nl } = await namespace();
    ip(name, 'link', 'set', 'lo', 'up');
    const watcher = await nl.watch({ routes: true, existing: true });
    handles.push(watcher);
    const events = watcher[Symbol.asyncIterator]();
    await until(events, (e) => e.type === 'synced');
    // The loop never turns while these run (each round trip is synchronous), so
    // the watcher cannot read: the socket's receive buffer fills and the kernel
    // drops the rest.
    for (let i = 0; i < 12_000; i++) {
      await nl.routes.add({ destination: `10.${100 + (i >> 8)}.${i & 255}.0/24`, type: 'blackhole' });
    }
    const upToOverflow = await until(events, (e) => e.type === 'overflow');
    expect(upToOverflow.at(-1)).toMatchObject({ error: { code: 'ENOBUFS', syscall: 'recvmsg' } });
    const resync = await until(events, (e) => e.type === 'synced');
    expect(resync.filter((e) => e.type === 'route' && e.action === 'existing' && e.route.type === 'blackhole')).toHaveLength(12_000);
  });

  it('leaves descriptors where they began, over 1,000 watchers opened and closed', async () => {
    const { name, nl } = await namespace();
    const before = openFdCount();
    for (let i = 0; i < 1000; i++) (await nl.watch({ links: true, existing: i % 2 === 0 })).close();
    // An I/O thread the pool starts meanwhile holds its home namespace open: 2 at most; a leak would be 1,000.
    expect(Math.abs(openFdCount() - before)).toBeLessThanOrEqual(2);
    // and a watcher closed from inside its own callback stops there
    const watcher = await nl.watch({ links: true });
    const closedIn = new Promise<number>((resolve) => {
      let count = 0;
      watcher.on('data', () => {
        count++;
        watcher.close();
      });
      watcher.on('close', () => resolve(count));
    });
    ip(name, 'link', 'add', 'br3', 'type', 'bridge');
    expect(await closedIn).toBe(1);
  });

  it('lets the process exit once the watcher is unref()d or closed, and closes it when collected', async () => {
    const script = (end: string) =>
      runNodeScript(
        `
        import { readdirSync, readlinkSync } from 'node:fs';
        import { setFlagsFromString } from 'node:v8';
        import { runInNewContext } from 'node:vm';
        const { openNetlink } = await import(${JSON.stringify(distUrl('netlink/index.js'))});
        const nl = await openNetlink();
        // sockets only: an I/O thread started meanwhile holds its home namespace open
        const sockets = () => readdirSync('/proc/self/fd').filter((fd) => { try { return readlinkSync('/proc/self/fd/' + fd).startsWith('socket:'); } catch { return false; } }).length;
        const before = sockets();
        let watcher = await nl.watch({ links: true, addresses: true, existing: true });
        ${end}
        `,
      );
    const unrefd = await script(`watcher.unref(); console.log('open');`);
    expect(unrefd).toMatchObject({ code: 0, signal: null, stdout: 'open\n' });
    const closed = await script(`watcher.close(); nl.close(); console.log('closed');`);
    expect(closed).toMatchObject({ code: 0, signal: null, stdout: 'closed\n' });
    // Collected: finalizers run on a later turn of the loop after a gc.
    const collected = await script(
      `setFlagsFromString('--expose-gc');
       const gc = runInNewContext('gc');
       watcher.unref(); watcher = null;
       let turns = 0;
       while (sockets() > before && turns++ < 100) { gc(); await new Promise((r) => setImmediate(r)); }
       console.log(sockets() - before);`,
    );
    expect(collected).toMatchObject({ code: 0, signal: null, stdout: '0\n' });
  });

  it('keeps the process alive while it is open and ref()d: the child is still there to see a change made after it printed', async () => {
    const { name } = await namespace();
    const child = spawn(process.execPath, [
      '--input-type=module',
      '-e',
      `
      const { openNetlink } = await import(${JSON.stringify(distUrl('netlink/index.js'))});
      const nl = await openNetlink(${JSON.stringify(name)});
      const watcher = await nl.watch({ links: true });
      watcher.on('data', (event) => {
        if (event.type !== 'link' || event.link.name !== 'later0') return;
        console.log('seen');
        watcher.close();
        nl.close();
      });
      console.log('open');
      `,
    ]);
    let stdout = '';
    const printed = new Promise<void>((resolve) => child.stdout.on('data', (chunk) => (stdout += chunk) === 'open\n' && resolve()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    await Promise.race([printed, exited]);
    ip(name, 'link', 'add', 'later0', 'type', 'bridge');
    expect(await exited).toBe(0);
    expect(stdout).toBe('open\nseen\n');
  });

  it('is closed when a Worker that holds it open ends (its loop is closed with no handle left)', async () => {
    const result = await runNodeScript(`
      import { Worker } from 'node:worker_threads';
      const body = \`(async () => {
        const { openNetlink } = await import(${JSON.stringify(distUrl('netlink/index.js'))});
        const nl = await openNetlink();
        (await nl.watch({ links: true, existing: true })).on('data', () => {});
        (await import('node:worker_threads')).parentPort.postMessage('open');
      })();\`;
      for (let i = 0; i < 3; i++) {
        const worker = new Worker(body, { eval: true });
        await new Promise((resolve) => worker.once('message', resolve));
        await worker.terminate();
      }
      console.log('done');
    `);
    expect(result).toEqual({ code: 0, signal: null, stdout: 'done\n', stderr: '' });
  });
});
