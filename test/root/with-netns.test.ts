import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closePool, configurePool, NetNS, poolIdle, poolStats, withNetNS } from '../../dist/index.js';
import { createTestNetwork, type TestNetwork } from '../../dist/testing.js';
import { inodeOf, threadsAwayFrom } from '../helpers/process-state.js';
import { privileged } from '../helpers/privileges.js';

const home = inodeOf('/proc/thread-self/ns/net');
const packageRoot = fileURLToPath(new URL('../..', import.meta.url));

describe.skipIf(!privileged)('withNetNS', () => {
  let network: TestNetwork<'a' | 'b' | 'c'>;
  let names: string[];
  let blue: NetNS;

  beforeAll(async () => {
    network = await createTestNetwork({ hosts: { a: {}, b: {}, c: {} } });
    names = [network.names.a, network.names.b, network.names.c];
    blue = NetNS.open(names[0]!);
  });

  afterAll(async () => {
    blue?.close();
    await closePool();
    await network?.delete();
  });

  it('runs fn inside the target namespace', async () => {
    const seen = await withNetNS(blue, () => require('node:fs').statSync('/proc/thread-self/ns/net').ino);
    expect(seen).toBe(blue.inode);
    expect(seen).not.toBe(home);
  });

  it('accepts a bare name and a path as target', async () => {
    const byName = await withNetNS(names[1]!, () => require('node:fs').statSync('/proc/thread-self/ns/net').ino);
    const byPath = await withNetNS(`/var/run/netns/${names[1]}`, () =>
      require('node:fs').statSync('/proc/thread-self/ns/net').ino,
    );
    expect(byName).toBe(inodeOf(`/run/netns/${names[1]}`));
    expect(byPath).toBe(byName);
  });

  it('never moves the main thread, while fn runs or after', async () => {
    const gate = new Int32Array(new SharedArrayBuffer(8));
    const running = withNetNS(
      blue,
      async (gate: Int32Array) => {
        Atomics.store(gate, 1, 1);
        Atomics.notify(gate, 1);
        const waited = Atomics.waitAsync(gate, 0, 0);
        if (waited.async) await waited.value;
        return require('node:fs').statSync('/proc/thread-self/ns/net').ino;
      },
      gate,
    );
    const started = Atomics.waitAsync(gate, 1, 0);
    if (started.async) await started.value;
    expect(inodeOf('/proc/thread-self/ns/net')).toBe(home);
    expect(inodeOf('/proc/self/ns/net')).toBe(home);
    Atomics.store(gate, 0, 1);
    Atomics.notify(gate, 0);
    expect(await running).toBe(blue.inode);
    expect(inodeOf('/proc/thread-self/ns/net')).toBe(home);
  });

  it('keeps 200 concurrent calls over three namespaces apart', async () => {
    const expected = names.map((name) => inodeOf(`/run/netns/${name}`));
    const calls = Array.from({ length: 200 }, (_, i) =>
      withNetNS(names[i % 3]!, (i: number) => [i, require('node:fs').statSync('/proc/thread-self/ns/net').ino], i),
    );
    for (const [i, inode] of await Promise.all(calls)) expect(inode).toBe(expected[i % 3]);
  });

  it('rejects with the error fn threw, and the pool keeps working', async () => {
    const failing = withNetNS(blue, () => {
      const error = new RangeError('no route to the moon');
      Object.assign(error, { code: 'EMOON', detail: 42 });
      throw error;
    });
    await expect(failing).rejects.toThrow(RangeError);
    await failing.catch((error: RangeError & { code: string; detail: number }) => {
      expect(error.message).toBe('no route to the moon');
      expect(error.code).toBe('EMOON');
      expect(error.detail).toBe(42);
      expect(error.stack).toContain('no route to the moon');
    });
    await expect(withNetNS(blue, async () => Promise.reject(new Error('later')))).rejects.toThrow('later');
    expect(await withNetNS(blue, () => 'still fine')).toBe('still fine');
  });

  it('explains a variable fn cannot see', async () => {
    const outside = 5;
    const error = await withNetNS(blue, () => outside + 1).catch((e: Error) => e);
    expect(error).toBeInstanceOf(ReferenceError);
    expect((error as Error).message).toMatch(/outside is not defined: .*Pass outside as an argument/);
  });

  it('runs fn as vitest compiled it: inner named function, arrow const, #private class, async, require, import()', async () => {
    const seen = await withNetNS(blue, async (base: number) => {
      function named() {
        return 'named';
      }
      const twice = (x: number) => x * 2;
      class Counter {
        #n = base;
        bump() {
          return ++this.#n;
        }
      }
      const { basename } = await import('node:path');
      return [named(), twice.name, twice(base), new Counter().bump(), basename('/a/b'), require('node:fs').statSync('/proc/thread-self/ns/net').ino];
    }, 20);
    expect(seen).toEqual(['named', 'twice', 40, 21, 'b', blue.inode]);
  });

  it('explains a fn whose text does not compile on its own (a method with a quoted name)', async () => {
    const methods = { 'x-y'() {
      return 1;
    } };
    const error = await withNetNS(blue, methods['x-y']).catch((e: Error) => e);
    expect(error).toBeInstanceOf(SyntaxError);
    expect((error as Error).message).toMatch(/^fn's source text does not compile on its own \(.*\)\. .*arrow function/);
  });

  it('passes arguments and results by structured clone', async () => {
    const input = { when: new Date(0), tags: new Set(['a']), bytes: new Uint8Array([1, 2]) };
    const output = await withNetNS(blue, (value: typeof input) => ({ ...value, size: value.tags.size }), input);
    expect(output).toEqual({ ...input, size: 1 });
    await expect(withNetNS(blue, (f: unknown) => f, () => 1)).rejects.toMatchObject({ code: 'ERR_NETNS_NOT_CLONEABLE' });
    await expect(withNetNS(blue, () => () => 1)).rejects.toMatchObject({ code: 'ERR_NETNS_NOT_CLONEABLE' });
  });

  it('runs nested calls, even with a single worker', async () => {
    configurePool({ maxWorkers: 1 });
    try {
      const [outerBefore, inner, outerAfter] = await withNetNS(
        blue,
        async (other: string) => {
          const { withNetNS } = await import('netns');
          const ino = () => require('node:fs').statSync('/proc/thread-self/ns/net').ino;
          const before = ino();
          const nested = await withNetNS(other, () => require('node:fs').statSync('/proc/thread-self/ns/net').ino);
          return [before, nested, ino()];
        },
        names[1]!,
      );
      expect(outerBefore).toBe(blue.inode);
      expect(inner).toBe(inodeOf(`/run/netns/${names[1]}`));
      expect(outerAfter).toBe(blue.inode);
    } finally {
      configurePool({ maxWorkers: 2 });
    }
  });

  it('puts child processes and sockets made in fn inside the namespace', async () => {
    const child = await withNetNS(blue, () =>
      require('node:child_process').execFileSync('readlink', ['/proc/self/ns/net'], { encoding: 'utf8' }).trim(),
    );
    expect(child).toBe(`net:[${blue.inode}]`);

    const { port, echoed, listed } = await withNetNS(blue, async () => {
      const net = require('node:net');
      const server = net.createServer((socket: import('node:net').Socket) => socket.pipe(socket));
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const port = server.address().port as number;
      const tcp = require('node:fs').readFileSync('/proc/thread-self/net/tcp', 'utf8') as string;
      const echoed = await new Promise<string>((resolve, reject) => {
        const socket = net.connect(port, '127.0.0.1', () => socket.end('ping'));
        socket.setEncoding('utf8').on('data', resolve).on('error', reject);
      });
      server.close();
      const hex = port.toString(16).toUpperCase().padStart(4, '0');
      return { port, echoed, listed: tcp.includes(`:${hex} 00000000:0000 0A`) };
    });
    expect(echoed).toBe('ping');
    expect(listed).toBe(true);
    const hex = port.toString(16).toUpperCase().padStart(4, '0');
    expect(readFileSync('/proc/self/net/tcp', 'utf8')).not.toContain(`:${hex} 00000000:0000 0A`);
  });

  it('aborts a call whose fn never settles by discarding its worker', async () => {
    const before = poolStats().threadsDiscarded;
    const controller = new AbortController();
    const started = new Int32Array(new SharedArrayBuffer(4));
    const stuck = withNetNS(
      blue,
      { signal: controller.signal },
      (started: Int32Array) => {
        Atomics.store(started, 0, 1);
        Atomics.notify(started, 0);
        return new Promise(() => {});
      },
      started,
    );
    const running = Atomics.waitAsync(started, 0, 0);
    if (running.async) await running.value;
    controller.abort();
    await expect(stuck).rejects.toMatchObject({ name: 'AbortError' });
    expect(poolStats().threadsDiscarded).toBe(before + 1);
    await expect(withNetNS(blue, { signal: AbortSignal.abort() }, () => 1)).rejects.toMatchObject({ name: 'AbortError' });
    expect(await withNetNS(blue, { signal: new AbortController().signal }, () => 2)).toBe(2);
  });

  it('leaves every thread of the process at home once calls settle', async () => {
    await Promise.all(Array.from({ length: 50 }, (_, i) => withNetNS(names[i % 3]!, () => 0)));
    await poolIdle(); // threads discarded by earlier tests may still be on their way out
    expect(threadsAwayFrom(home)).toEqual([]);
  });

  it('discards a thread whose restore fails, warns, and carries on', async () => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    const before = poolStats();
    try {
      const result = await withNetNS(blue, () => {
        require('netns/testing').dropThreadCapability('CAP_SYS_ADMIN');
        return 'done before the failed restore';
      });
      expect(result).toBe('done before the failed restore');
      const after = poolStats();
      expect(after.restoreFailures).toBe(before.restoreFailures + 1);
      expect(after.threadsDiscarded).toBe(before.threadsDiscarded + 1);
      expect(warnings.map((w) => (w as Error & { code?: string }).code)).toContain('NETNS_RESTORE_FAILED');
      const next = await withNetNS(names[2]!, () => require('node:fs').statSync('/proc/thread-self/ns/net').ino);
      expect(next).toBe(inodeOf(`/run/netns/${names[2]}`));
      await poolIdle();
      expect(threadsAwayFrom(home)).toEqual([]);
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('runs the calls batched behind a call that breaks its restore on another thread, each with its own value', async () => {
    configurePool({ maxWorkers: 1 }); // the twenty are queued on, or sent with, the thread that is about to be lost
    try {
      const breaker = withNetNS(blue, () => {
        require('netns/testing').dropThreadCapability('CAP_SYS_ADMIN');
        return 'broken';
      });
      const queued = Array.from({ length: 20 }, (_, i) => withNetNS(blue, (n: number) => n, i));
      expect(await Promise.all([breaker, ...queued])).toEqual(['broken', ...Array.from({ length: 20 }, (_, i) => i)]);
      await poolIdle();
      expect(threadsAwayFrom(home)).toEqual([]);
    } finally {
      configurePool({ maxWorkers: 2 });
    }
  });

  it('lets a script that makes one call exit by itself', async () => {
    const script = `import('netns').then((m) => m.withNetNS(${JSON.stringify(names[0])}, () => 7)).then((v) => console.log('got', v))`;
    const { code, stdout } = await new Promise<{ code: number | null; stdout: string }>((resolve) => {
      const child = execFile(process.execPath, ['-e', script], { cwd: packageRoot }, (error, stdout) =>
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout }),
      );
      child.stdin?.end();
    });
    expect(stdout.trim()).toBe('got 7');
    expect(code).toBe(0);
  });
});
