// The pool's promises to callers: work one call leaves behind never runs in
// another call's namespace; one bad fn never fails the calls around it; nested
// calls and aborts cost bounded threads and no descriptors; closePool means it.
import { execFile } from 'node:child_process';
import { getEventListeners } from 'node:events';
import { readdirSync, readlinkSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { closePool, configurePool, NetNS, poolIdle, poolStats, withNetNS } from '../../dist/index.js';
import { createTestNetwork, type TestNetwork } from '../../dist/testing.js';
import { inodeOf, openFdCount, threadCount, threadsAwayFrom } from '../helpers/process-state.js';
import { privileged } from '../helpers/privileges.js';

const home = inodeOf('/proc/thread-self/ns/net');
const packageRoot = fileURLToPath(new URL('../..', import.meta.url));

/** Resolves once fn running in a worker has set `gate[0]` to 1. */
async function startedSignal(gate: Int32Array): Promise<void> {
  const waited = Atomics.waitAsync(gate, 0, 0);
  if (waited.async) await waited.value;
}

function descriptorsOf(inode: number): string[] {
  return readdirSync('/proc/self/fd').filter((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`) === `net:[${inode}]`;
    } catch {
      return false;
    }
  });
}

describe.skipIf(!privileged)('the withNetNS pool', () => {
  let network: TestNetwork<'a' | 'b'>;
  let a: string;
  let b: string;

  beforeAll(async () => {
    network = await createTestNetwork({ hosts: { a: {}, b: {} } });
    a = network.names.a;
    b = network.names.b;
  });

  afterEach(async () => {
    await closePool();
    configurePool({ maxWorkers: 2 });
  });

  afterAll(async () => {
    await closePool();
    await network?.delete();
  });

  describe('work left behind', () => {
    for (const unref of [false, true]) {
      it(`never runs inside a later call's namespace (${unref ? 'unref\'d' : 'ref\'d'} timer)`, async () => {
        configurePool({ maxWorkers: 1 });
        const bInode = inodeOf(`/run/netns/${b}`);
        const ticksInB = new Int32Array(new SharedArrayBuffer(8));
        await withNetNS(
          a,
          (ticks: Int32Array, bInode: number, unref: boolean) => {
            const timer = setInterval(() => {
              Atomics.add(ticks, 1, 1);
              if (require('node:fs').statSync('/proc/thread-self/ns/net').ino === bInode) Atomics.add(ticks, 0, 1);
            }, 1);
            if (unref) timer.unref();
          },
          ticksInB,
          bInode,
          unref,
        );
        const seenInB = await withNetNS(b, async () => {
          for (let i = 0; i < 30; i++) await new Promise((resolve) => setTimeout(resolve, 1));
          return require('node:fs').statSync('/proc/thread-self/ns/net').ino;
        });
        expect(seenInB).toBe(bInode);
        expect(Atomics.load(ticksInB, 0)).toBe(0);
      });
    }

    const continuations: [string, string][] = [
      ['a promise reaction', 'Promise.resolve().then(record)'],
      ['a tick', 'process.nextTick(record)'],
      ['a zlib callback', "require('node:zlib').gzip(Buffer.alloc(1000), record)"],
      ['a crypto callback', "require('node:crypto').pbkdf2('a', 'b', 1, 8, 'sha1', record)"],
    ];
    for (const [what, leave] of continuations) {
      it(`never runs ${what} a call left inside the next call's namespace`, async () => {
        configurePool({ maxWorkers: 1 });
        const bInode = inodeOf(`/run/netns/${b}`);
        const inB = new Int32Array(new SharedArrayBuffer(4));
        const leaving = new Function('ticks', 'bInode', `
          const record = () => { if (require('node:fs').statSync('/proc/thread-self/ns/net').ino === bInode) Atomics.add(ticks, 0, 1); };
          ${leave};
          return 1;`) as (ticks: Int32Array, bInode: number) => number;
        for (let round = 0; round < 20; round++) {
          await Promise.all([
            withNetNS(a, leaving, inB, bInode),
            withNetNS(b, async () => {
              await new Promise((resolve) => setTimeout(resolve, 2));
              return 2;
            }),
          ]);
        }
        expect(Atomics.load(inB, 0)).toBe(0);
      });
    }

    it('counts a nested call fn did not await as work left behind', async () => {
      configurePool({ maxWorkers: 1 });
      await withNetNS(a, () => 0);
      const before = poolStats().threadsDiscarded;
      await withNetNS(a, async (b: string) => {
        const { withNetNS } = await import('netns');
        void withNetNS(b, () => new Promise((resolve) => setTimeout(resolve, 50)));
        return 1;
      }, b);
      await poolIdle();
      expect(poolStats().threadsDiscarded).toBe(before + 1);
    });

    it('does not hold back the next call behind an endless microtask loop it left', async () => {
      configurePool({ maxWorkers: 2 });
      expect(await withNetNS(a, () => {
        const spin = () => queueMicrotask(spin);
        spin();
        return 'left spinning';
      })).toBe('left spinning');
      expect(await withNetNS(b, () => 'served')).toBe('served');
    });

    it('retires the worker that left it, and the pool carries on', async () => {
      configurePool({ maxWorkers: 1 });
      await withNetNS(a, () => 0);
      const before = poolStats().threadsDiscarded;
      await withNetNS(a, () => void setInterval(() => {}, 1000));
      await poolIdle(); // the verdict on what the call left follows its result
      expect(poolStats().threadsDiscarded).toBe(before + 1);
      expect(await withNetNS(b, () => 2)).toBe(2);
    });
  });

  describe('one bad fn', () => {
    it('does not fail calls batched with it when it calls process.exit()', async () => {
      configurePool({ maxWorkers: 1 });
      const calls = Array.from({ length: 30 }, (_, i) => withNetNS(a, (i: number) => i, i));
      const exiting = withNetNS(a, () => process.exit(3));
      const after = Array.from({ length: 10 }, (_, i) => withNetNS(a, (i: number) => i + 100, i));
      expect(await Promise.all(calls)).toEqual(Array.from({ length: 30 }, (_, i) => i));
      await expect(exiting).rejects.toMatchObject({ code: 'ERR_NETNS_WORKER_EXITED' });
      expect(await Promise.all(after)).toEqual(Array.from({ length: 10 }, (_, i) => i + 100));
    });

    it('does not fail calls sent with it when it leaks a rejection', async () => {
      configurePool({ maxWorkers: 1 });
      const results = await Promise.allSettled(
        Array.from({ length: 20 }, (_, i) =>
          withNetNS(
            a,
            async (i: number) => {
              if (i === 5) void Promise.reject(new Error('leaked'));
              await new Promise((resolve) => setImmediate(resolve));
              return i;
            },
            i,
          ),
        ),
      );
      // The leak ends the worker while the leaking call is running: that call
      // fails with the leaked error as cause; every other call is served.
      const values = results.map((r) => (r.status === 'fulfilled' ? r.value : 'rejected'));
      expect(values).toEqual(Array.from({ length: 20 }, (_, i) => (i === 5 ? 'rejected' : i)));
      expect(results[5]).toMatchObject({ reason: { code: 'ERR_NETNS_WORKER_EXITED', message: expect.stringContaining('leaked') } });
      expect(await withNetNS(a, () => 'still serving')).toBe('still serving');
    });

    it('does not fail the call after it when it leaks a rejection', async () => {
      configurePool({ maxWorkers: 1 });
      const [bad, good] = await Promise.allSettled([
        withNetNS(a, () => {
          void Promise.reject(new Error('leaked'));
          return 'bad returned';
        }),
        withNetNS(b, async () => {
          await new Promise((resolve) => setTimeout(resolve, 2));
          return 'good';
        }),
      ]);
      expect([bad, good]).toEqual([
        { status: 'fulfilled', value: 'bad returned' },
        { status: 'fulfilled', value: 'good' },
      ]);
    });

    it('does not hold back calls queued behind it when it never returns', async () => {
      configurePool({ maxWorkers: 2 });
      const gate = new Int32Array(new SharedArrayBuffer(4));
      const looping = withNetNS(
        a,
        (gate: Int32Array) => {
          Atomics.store(gate, 0, 1);
          Atomics.notify(gate, 0);
          for (;;);
        },
        gate,
      );
      const ended = expect(looping).rejects.toMatchObject({ code: 'ERR_NETNS_POOL_CLOSED' });
      const others = Array.from({ length: 100 }, (_, i) => withNetNS(i % 2 ? a : b, (i: number) => i, i));
      await startedSignal(gate);
      expect(await Promise.all(others)).toEqual(Array.from({ length: 100 }, (_, i) => i));
      await closePool(); // the only way to end a fn that never returns, short of an abort
      await ended;
    });

    it('gets a coded error for a thrown value that cannot be sent back, without losing its worker', async () => {
      configurePool({ maxWorkers: 1 });
      await withNetNS(a, () => 0);
      const discarded = poolStats().threadsDiscarded;
      await expect(
        withNetNS(a, () => {
          throw Object.create(null);
        }),
        // String() of it throws, but it clones: a non-Error with its value, as {}.
      ).rejects.toMatchObject({ name: 'NetnsError', code: 'ERR_NETNS_NON_ERROR_THROWN', value: {} });
      await expect(
        withNetNS(a, () => {
          const error = new Error('with a bad getter');
          Object.defineProperty(error, 'detail', { enumerable: true, get: () => { throw new Error('getter'); } });
          throw error;
        }),
      ).rejects.toMatchObject({ name: 'NetnsError', code: 'ERR_NETNS_NOT_CLONEABLE' });
      await expect(withNetNS(a, () => ({ fn: () => 1 }))).rejects.toMatchObject({ code: 'ERR_NETNS_NOT_CLONEABLE' });
      await expect(
        withNetNS(a, () => {
          throw new Proxy({}, { getPrototypeOf: () => { throw new Error('trap'); } });
        }),
      ).rejects.toMatchObject({ code: 'ERR_NETNS_NOT_CLONEABLE' });
      expect(poolStats().threadsDiscarded).toBe(discarded);
      expect(await withNetNS(a, () => 1)).toBe(1);
    });

    it('cannot keep its thread in the namespace through a throwing `then` getter', async () => {
      configurePool({ maxWorkers: 1 });
      const outcome = withNetNS(a, () => {
        process.on('uncaughtException', () => {});
        return {
          get then() {
            throw new Error('then getter');
          },
        };
      });
      await expect(outcome).rejects.toThrow('then getter');
      expect(threadsAwayFrom(home)).toEqual([]);
      expect(await withNetNS(b, () => require('node:fs').statSync('/proc/thread-self/ns/net').ino)).toBe(inodeOf(`/run/netns/${b}`));
    });
  });

  describe('nested calls', () => {
    it('exceed the bound only by the workers waiting, and shrink back when idle', async () => {
      configurePool({ maxWorkers: 2 });
      let peak = 0;
      let sampling = true;
      const sample = () => {
        peak = Math.max(peak, poolStats().workers);
        if (sampling) setImmediate(sample);
      };
      sample();
      const calls = Array.from({ length: 200 }, (_, i) =>
        withNetNS(a, async (b: string, i: number) => {
          const { withNetNS } = await import('netns');
          return withNetNS(b, (i: number) => i * 2, i);
        }, b, i),
      );
      expect(await Promise.all(calls)).toEqual(Array.from({ length: 200 }, (_, i) => i * 2));
      sampling = false;
      await poolIdle();
      expect(peak).toBeLessThanOrEqual(4); // two waiting top-level workers, one extra each
      expect(poolStats().workers).toBeLessThanOrEqual(2);
    });
  });

  describe('aborts', () => {
    it('leak no namespace descriptor of a nested call the aborted fn waits on', async () => {
      const victim = await NetNS.create(`${a}-nested`);
      const victimInode = victim.inode;
      try {
        for (let round = 0; round < 10; round++) {
          const controller = new AbortController();
          const gate = new Int32Array(new SharedArrayBuffer(4));
          const call = withNetNS(
            a,
            { signal: controller.signal },
            async (name: string, gate: Int32Array) => {
              const { withNetNS } = await import('netns');
              return withNetNS(name, (gate: Int32Array) => {
                Atomics.store(gate, 0, 1);
                Atomics.notify(gate, 0);
                return new Promise(() => {});
              }, gate);
            },
            victim.path,
            gate,
          );
          await startedSignal(gate);
          controller.abort();
          await expect(call).rejects.toMatchObject({ name: 'AbortError' });
        }
      } finally {
        victim.close();
        await NetNS.delete(`${a}-nested`);
      }
      await poolIdle(); // the nested calls were aborted with their parents
      expect(descriptorsOf(victimInode)).toEqual([]);
      expect(threadsAwayFrom(home)).toEqual([]);
    });

    it("leak no descriptor of a nested call into the fn's own namespace (/proc/thread-self)", async () => {
      const aInode = inodeOf(`/run/netns/${a}`);
      const before = descriptorsOf(aInode).length;
      for (let round = 0; round < 5; round++) {
        const controller = new AbortController();
        const gate = new Int32Array(new SharedArrayBuffer(4));
        const call = withNetNS(
          a,
          { signal: controller.signal },
          async (gate: Int32Array) => {
            const { withNetNS } = await import('netns');
            return withNetNS('/proc/thread-self/ns/net', (gate: Int32Array) => {
              Atomics.store(gate, 0, 1);
              Atomics.notify(gate, 0);
              return new Promise(() => {});
            }, gate);
          },
          gate,
        );
        await startedSignal(gate);
        controller.abort();
        await expect(call).rejects.toMatchObject({ name: 'AbortError' });
      }
      await poolIdle();
      expect(descriptorsOf(aInode).length).toBe(before);
    });

    it('that come after their call finished end nothing (the worker already runs another call)', async () => {
      configurePool({ maxWorkers: 1 });
      await withNetNS(a, () => 0);
      const controller = new AbortController();
      const gate = new Int32Array(new SharedArrayBuffer(8));
      const finished = withNetNS(a, { signal: controller.signal }, () => 1);
      const next = withNetNS(b, async (gate: Int32Array) => {
        Atomics.store(gate, 0, 1);
        Atomics.notify(gate, 0);
        const released = Atomics.waitAsync(gate, 1, 0);
        if (released.async) await released.value;
        return 2;
      }, gate);
      await new Promise((resolve) => setImmediate(resolve)); // both are sent
      Atomics.wait(gate, 0, 0, 10_000); // block, so that the first result is not read yet
      controller.abort();
      Atomics.store(gate, 1, 1);
      Atomics.notify(gate, 1);
      expect(await Promise.allSettled([finished, next])).toEqual([
        { status: 'fulfilled', value: 1 },
        { status: 'fulfilled', value: 2 },
      ]);
    });

    it('of a nested call, by its own signal, reach the nested call', async () => {
      const outcome = await withNetNS(a, async (b: string) => {
        const { withNetNS } = await import('netns');
        const ran = new Int32Array(new SharedArrayBuffer(4));
        const timedOut = await withNetNS(b, { signal: AbortSignal.timeout(20) }, () => new Promise(() => {})).catch((e: Error & { code?: string }) => e.code);
        const early = await withNetNS(b, { signal: AbortSignal.abort() }, (ran: Int32Array) => void Atomics.store(ran, 0, 1), ran).catch((e: Error & { code?: string }) => e.code);
        return { timedOut, early, ran: Atomics.load(ran, 0) };
      }, b);
      expect(outcome).toEqual({ timedOut: 'ABORT_ERR', early: 'ABORT_ERR', ran: 0 });
      await poolIdle();
      expect(threadsAwayFrom(home)).toEqual([]);
    });

    it('through one signal shared by many calls hold one listener, and none once they settle', async () => {
      const warnings: string[] = [];
      const onWarning = (warning: Error) => warnings.push(warning.name);
      process.on('warning', onWarning);
      try {
        const kept = new AbortController();
        await Promise.all(Array.from({ length: 50 }, (_, i) => withNetNS(a, { signal: kept.signal }, (i: number) => i, i)));
        expect(getEventListeners(kept.signal, 'abort')).toHaveLength(0);
        const shared = new AbortController();
        const calls = Array.from({ length: 50 }, () => withNetNS(a, { signal: shared.signal }, () => new Promise(() => {})));
        expect(getEventListeners(shared.signal, 'abort')).toHaveLength(1);
        shared.abort();
        const outcomes = await Promise.allSettled(calls);
        expect(outcomes.every((o) => o.status === 'rejected' && (o.reason as { code?: string }).code === 'ABORT_ERR')).toBe(true);
        const nestedListeners = await withNetNS(a, async (b: string) => {
          const { withNetNS } = await import('netns');
          const signal = new AbortController().signal;
          for (let i = 0; i < 20; i++) await withNetNS(b, { signal }, () => 1);
          return require('node:events').getEventListeners(signal, 'abort').length as number;
        }, b);
        expect(nestedListeners).toBe(0);
        await new Promise((resolve) => setImmediate(resolve)); // warnings are emitted on the next tick
        expect(warnings).not.toContain('MaxListenersExceededWarning');
      } finally {
        process.off('warning', onWarning);
      }
    });

    it('of calls not started take back the call without ending a thread or leaking descriptors', async () => {
      configurePool({ maxWorkers: 1 });
      await withNetNS(a, () => 0);
      const fds = openFdCount();
      const discarded = poolStats().threadsDiscarded;
      for (let round = 0; round < 200; round++) {
        const controller = new AbortController();
        const call = withNetNS(a, { signal: controller.signal }, () => 1);
        controller.abort('changed my mind');
        await expect(call).rejects.toMatchObject({ name: 'AbortError', code: 'ABORT_ERR', cause: 'changed my mind' });
      }
      await poolIdle();
      expect(poolStats().threadsDiscarded).toBe(discarded);
      expect(openFdCount()).toBe(fds);
    });
  });

  describe('closePool()', () => {
    it('rejects calls not started with its own code and starts no worker', async () => {
      configurePool({ maxWorkers: 1 });
      const threads = threadCount();
      const first = withNetNS(a, () => 1);
      const second = withNetNS(a, () => 2);
      const closing = closePool();
      await expect(first).rejects.toMatchObject({ code: 'ERR_NETNS_POOL_CLOSED' });
      await expect(second).rejects.toMatchObject({ code: 'ERR_NETNS_POOL_CLOSED' });
      await closing;
      expect(threadCount()).toBe(threads);
      expect(await withNetNS(a, () => 3)).toBe(3); // the next call starts a new pool
    });

    it('resolves, when called twice, only once the threads are gone', async () => {
      await withNetNS(a, () => 1);
      const threads = threadCount();
      const first = closePool();
      await closePool();
      expect(threadCount()).toBeLessThan(threads);
      await first;
    });

    it('rejects running calls with its own code', async () => {
      const gate = new Int32Array(new SharedArrayBuffer(4));
      const running = withNetNS(a, (gate: Int32Array) => {
        Atomics.store(gate, 0, 1);
        Atomics.notify(gate, 0);
        return new Promise(() => {});
      }, gate);
      await startedSignal(gate);
      const rejected = expect(running).rejects.toMatchObject({ code: 'ERR_NETNS_POOL_CLOSED' });
      await closePool();
      await rejected;
      expect(threadsAwayFrom(home)).toEqual([]);
    });
  });

  it('keeps a script alive while its calls wait for a worker to be judged', async () => {
    // Async calls leave reactions a worker drains before it takes more: a call
    // queued meanwhile must hold the process open, or the script exits early.
    const script = `const { withNetNS, poolIdle } = await import('netns');
      for (let i = 0; i < 300; i++) await withNetNS(${JSON.stringify(a)}, () => 1);
      for (let i = 0; i < 300; i++) await withNetNS(${JSON.stringify(a)}, async () => 1);
      await Promise.all(Array.from({ length: 100 }, () => withNetNS(${JSON.stringify(a)}, async () => 1)));
      await withNetNS(${JSON.stringify(a)}, () => void setTimeout(() => {}, 1e6));
      await poolIdle(); // waits for that worker's verdict, holding the process open
      console.log('done');`;
    const { code, stdout } = await new Promise<{ code: number | null; stdout: string }>((resolve) => {
      const child = execFile(process.execPath, ['--input-type=module', '-e', script], { cwd: packageRoot }, (error, stdout) =>
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout }),
      );
      child.stdin?.end();
    });
    expect({ code, stdout: stdout.trim() }).toEqual({ code: 0, stdout: 'done' });
  });

  it('trims workers when the pool is made smaller', async () => {
    configurePool({ maxWorkers: 4 });
    const gate = new Int32Array(new SharedArrayBuffer(4));
    const calls = Array.from({ length: 4 }, () =>
      withNetNS(a, async (gate: Int32Array) => {
        const waited = Atomics.waitAsync(gate, 0, 0);
        if (waited.async) await waited.value;
      }, gate),
    );
    while (poolStats().busy < 4) await new Promise((resolve) => setImmediate(resolve));
    configurePool({ maxWorkers: 1 });
    Atomics.store(gate, 0, 1);
    Atomics.notify(gate, 0);
    await Promise.all(calls);
    await poolIdle();
    expect(poolStats().workers).toBe(1);
    expect(poolStats().threadsDiscarded).toBe(0);
  });
});
