import { execFile, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NetNS } from '../../dist/index.js';
import { nodeSpawnError } from '../helpers/missing-command.js';
import { privileged } from '../helpers/privileges.js';

const EVENTS = ['spawn', 'exit', 'close', 'error'] as const;

/** Every lifecycle event of a child, in the order they were emitted, once 'close' has come. */
function eventOrder(child: ChildProcess): Promise<string[]> {
  const seen: string[] = [];
  return new Promise((resolve) => {
    for (const event of EVENTS) {
      child.on(event, () => {
        seen.push(event);
        if (event === 'close') resolve(seen);
      });
    }
  });
}

describe.skipIf(!privileged)('NetNS.spawn events and options', () => {
  let ns: NetNS;

  beforeAll(async () => {
    ns = await NetNS.create(); // anonymous: gone when closed
  });

  afterAll(() => {
    ns?.close();
  });

  it("emits spawn, exit, close in Node's order, every time (400 runs)", async () => {
    const orders = new Map<string, number>();
    for (let batch = 0; batch < 20; batch++) {
      const runs = await Promise.all(Array.from({ length: 20 }, () => eventOrder(ns.spawn('true', [], { stdio: 'ignore' }))));
      for (const order of runs) orders.set(order.join(','), (orders.get(order.join(',')) ?? 0) + 1);
    }
    expect(Object.fromEntries(orders)).toEqual({ 'spawn,exit,close': 400 });
  }, 120_000);

  it('emits error then close (code -errno), and no spawn or exit, when exec fails, as Node does', async () => {
    const orders = new Map<string, number>();
    const codes = new Set<unknown>();
    for (let batch = 0; batch < 5; batch++) {
      const runs = await Promise.all(
        Array.from({ length: 20 }, async () => {
          const child = ns.spawn('surely-no-such-command', [], { stdio: 'ignore' });
          const close = new Promise((resolve) => child.once('close', (code) => resolve(code)));
          const order = await eventOrder(child);
          codes.add(await close);
          return order;
        }),
      );
      for (const order of runs) orders.set(order.join(','), (orders.get(order.join(',')) ?? 0) + 1);
    }
    expect(Object.fromEntries(orders)).toEqual({ 'error,close': 100 });
    expect([...codes]).toEqual([nodeSpawnError('surely-no-such-command').errno]);
  });

  it('refuses a timeout past 2^31-1 ms, which Node would set to 1 ms and so kill the command at once', async () => {
    for (const timeout of [2 ** 31, 2 ** 53, -1]) {
      expect(() => ns.spawn('true', [], { timeout })).toThrow(expect.objectContaining({ code: 'ERR_NETNS_INVALID_ARG', message: expect.stringContaining('timeout') }));
      await expect(ns.execFile('true', [], { timeout })).rejects.toMatchObject({ code: 'ERR_NETNS_INVALID_ARG' });
    }
    expect(await ns.execFile('sh', ['-c', 'echo still here'], { timeout: 2 ** 31 - 1 })).toMatchObject({ stdout: 'still here\n' });
  });

  it('refuses { shell } and { argv0 }, which would run in the host or be lost, in spawn and execFile', async () => {
    const probe = '$(readlink /proc/self/ns/net)';
    for (const shell of [true, '/bin/sh']) {
      const options = { shell } as object;
      expect(() => ns.spawn('echo', [probe], options)).toThrow(expect.objectContaining({ code: 'ERR_NETNS_INVALID_ARG' }));
      await expect(ns.execFile('echo', [probe], options)).rejects.toMatchObject({ code: 'ERR_NETNS_INVALID_ARG' });
    }
    const argv0 = { argv0: 'renamed' } as object;
    expect(() => ns.spawn('true', [], argv0)).toThrow(expect.objectContaining({ code: 'ERR_NETNS_INVALID_ARG' }));
    await expect(ns.execFile('true', [], argv0)).rejects.toMatchObject({ code: 'ERR_NETNS_INVALID_ARG' });
    // shell: false is what Node does anyway
    expect((await ns.execFile('echo', [probe], { shell: false } as object)).stdout).toBe(`${probe}\n`);
  });

  it('refuses dirs (the lab\'s option, not in the types, which JavaScript passes anyway) that are not absolute or would split an overlay\'s options', async () => {
    const refused = expect.objectContaining({ code: 'ERR_NETNS_INVALID_ARG' });
    const bad = [
      'not an array',
      [{ kind: 'bind', source: 'relative', path: '/mnt' }],
      [{ kind: 'tmpfs', source: '/tmp', path: '/mnt' }],
      [{ kind: 'overlay', source: '/tmp/x', path: '/etc,upperdir=/tmp/y' }],
      [{ kind: 'overlay', source: '/tmp/x:/tmp/z', path: '/etc' }],
      [{ kind: 'bind', source: '/tmp', path: '/mnt\0' }],
      [null],
    ];
    for (const dirs of bad) {
      expect(() => ns.spawn('true', [], { dirs } as object), JSON.stringify(dirs)).toThrow(refused);
      await expect(ns.execFile('true', [], { dirs } as object)).rejects.toMatchObject({ code: 'ERR_NETNS_INVALID_ARG' });
    }
  });

  it('runs a { detached } child in its own session, still inside the namespace', async () => {
    // the session id is field 6 of /proc/PID/stat (sh's command name has no spaces)
    const { stdout } = await ns.execFile('sh', ['-c', "readlink /proc/self/ns/net; cut -d' ' -f6 /proc/$$/stat; echo $$"], { detached: true });
    const [link, sid, pid] = stdout.trim().split(/\s+/);
    expect(link).toBe(`net:[${ns.inode}]`);
    expect(sid).toBe(pid);
  });
});

describe.skipIf(!privileged)('NetNS.spawn with { etc: true }, as ip netns exec', () => {
  const name = `nsio-etc-${process.pid}-${randomBytes(3).toString('hex')}`;
  const etcDir = `/etc/netns/${name}`;
  let ns: NetNS;

  beforeAll(async () => {
    ns = await NetNS.create(name);
  });

  afterAll(async () => {
    rmSync(etcDir, { recursive: true, force: true });
    ns?.close();
    await NetNS.delete(name).catch(() => {});
  });

  it('warns about an /etc/netns entry it cannot bind and still runs the command, binding the others', async () => {
    mkdirSync(etcDir, { recursive: true });
    writeFileSync(`${etcDir}/hosts`, '10.1.2.3 only-in-netns\n');
    // /etc has no such file, so the bind mount fails with ENOENT
    writeFileSync(`${etcDir}/nsio-not-in-etc-${process.pid}`, 'x\n');
    const script = 'cat /etc/hosts; readlink /proc/self/ns/net';
    const ours = await ns.execFile('sh', ['-c', script], { etc: true });
    const theirs = await new Promise<{ stdout: string; stderr: string }>((resolve, reject) =>
      execFile('ip', ['netns', 'exec', name, 'sh', '-c', script], (error, stdout, stderr) => (error ? reject(error) : resolve({ stdout, stderr }))),
    );
    expect(ours.stdout).toBe(`10.1.2.3 only-in-netns\nnet:[${ns.inode}]\n`);
    expect(ours.stdout).toBe(theirs.stdout);
    expect(ours.stderr).toMatch(new RegExp(`^Bind ${etcDir}/nsio-not-in-etc-${process.pid} -> /etc/nsio-not-in-etc-${process.pid} failed: No such file or directory\n$`));
    expect(ours.stderr).toBe(theirs.stderr);
  });
});
