// A process that used the package ends by itself, on whichever Node.js runs
// the suite (.ci/run runs it on each supported major): after a normal end,
// process.exit() with work in flight, an uncaught exception, and in Worker
// threads that end or are terminated. On Node 24 and 26 the addon's teardown
// once deadlocked inside Node's own (a process that made a namespace never
// exited); runNodeScript kills a child that hangs, so a hang fails here
// rather than stalling the run.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { NetNS } from '../../dist/index.js';
import { CLI_PATH } from '../helpers/cli-path.js';
import { distUrl, runNodeScript, type ChildResult } from '../helpers/node-child.js';
import { privileged } from '../helpers/privileges.js';

const made: string[] = [];
let serial = 0;
function nsName(): string {
  const name = `nsexit-${process.pid}-${serial++}`;
  made.push(name);
  return name;
}

const importNetns = `const { NetNS, withNetNS } = await import(${JSON.stringify(distUrl('index.js'))});`;
const importTesting = `const testing = await import(${JSON.stringify(distUrl('testing.js'))});`;

// Far beyond what any of these takes; a hung child is killed at this point and reported.
const KILL_AFTER_MS = 15_000;
const run = (script: string): Promise<ChildResult> => runNodeScript(script, { killAfterMs: KILL_AFTER_MS });

function expectExited(result: ChildResult, code = 0): void {
  expect({ signal: result.signal, code: result.code }, `${process.version}: ${result.stderr}`).toEqual({ signal: null, code });
}

describe.skipIf(!privileged)(`a process that used netns exits by itself (${process.version})`, () => {
  afterEach(async () => {
    for (const name of made.splice(0)) {
      if (existsSync(`/run/netns/${name}`)) await NetNS.delete(name);
    }
  });

  it('after making and deleting a namespace', async () => {
    const name = nsName();
    const result = await run(`${importNetns}
      const ns = await NetNS.create(${JSON.stringify(name)});
      ns.close();
      await NetNS.delete(${JSON.stringify(name)});
      console.log('deleted');
    `);
    expectExited(result);
    expect(result.stdout.trim()).toBe('deleted');
    expect(existsSync(`/run/netns/${name}`)).toBe(false);
  });

  it('after namespace I/O and withNetNS', async () => {
    const result = await run(`${importNetns}
      const ns = await NetNS.create();
      const { createServer } = await import('node:net');
      const server = await ns.listen(createServer(), { host: '127.0.0.1', port: 0 });
      server.close();
      console.log(await withNetNS(ns, () => require('node:fs').existsSync('/proc/thread-self/ns/net')));
      ns.close();
    `);
    expectExited(result);
    expect(result.stdout.trim()).toBe('true');
  });

  it('under process.exit() while a namespace is being made', async () => {
    const name = nsName();
    const result = await run(`${importNetns}
      NetNS.create(${JSON.stringify(name)}).catch(() => {});
      process.exit(3);
    `);
    expectExited(result, 3);
  });

  it('after an uncaught exception', async () => {
    const name = nsName();
    const result = await run(`${importNetns}
      const ns = await NetNS.create(${JSON.stringify(name)});
      ns.close();
      await NetNS.delete(${JSON.stringify(name)});
      throw new Error('on purpose');
    `);
    expectExited(result, 1);
    expect(result.stderr).toContain('on purpose');
  });

  it('after a Worker thread made and deleted a namespace and ended', async () => {
    const name = nsName();
    const result = await run(`
      import { Worker } from 'node:worker_threads';
      const worker = new Worker(${JSON.stringify(`${importNetns}
        const ns = await NetNS.create(${JSON.stringify(name)});
        ns.close();
        await NetNS.delete(${JSON.stringify(name)});
        process.stdout.write('worker done\\n');
      `)}, { eval: true, type: 'module' });
      const [code] = await new Promise((resolve) => worker.on('exit', (...args) => resolve(args)));
      console.log('worker exit', code);
    `);
    expectExited(result);
    expect(result.stdout).toContain('worker done');
    expect(result.stdout).toContain('worker exit 0');
  });

  it('after a Worker thread was terminated with namespace work in flight', async () => {
    const result = await run(`
      import { Worker } from 'node:worker_threads';
      const worker = new Worker(${JSON.stringify(`${importNetns}
        const { parentPort } = await import('node:worker_threads');
        const ns = await NetNS.create();
        parentPort.postMessage('busy');
        // never ends by itself: terminate() always finds jobs in flight
        for (;;) await Promise.all(Array.from({ length: 8 }, () => ns.readFile('/proc/sys/net/ipv4/ip_forward')));
      `)}, { eval: true, type: 'module' });
      await new Promise((resolve) => worker.once('message', resolve));
      console.log('terminated', await worker.terminate());
    `);
    expectExited(result);
    expect(result.stdout.trim()).toBe('terminated 1');
  });

  // A watch's close callback must run before the Worker's teardown unloads the
  // addon: on Node 20-24 a netlink or namespace watch still open at a Worker's
  // end crashed the whole process (SIGSEGV) with the callback in unmapped code.
  const watchingWorker = (ending: string) => `${importNetns}
    const { openNetlink } = await import(${JSON.stringify(distUrl('netlink/index.js'))});
    const { parentPort } = await import('node:worker_threads');
    const links = await (await openNetlink()).watch({ links: true });
    const names = NetNS.watch();
    parentPort.postMessage('open');
    ${ending}
  `;

  it('after Worker threads ended with netlink and namespace watches open', async () => {
    const result = await run(`
      import { Worker } from 'node:worker_threads';
      const endings = {
        terminated: '',
        'process.exit': 'process.exit(0);',
        'threw': 'throw new Error("on purpose");',
      };
      for (const [how, ending] of Object.entries(endings)) {
        const worker = new Worker(${JSON.stringify(watchingWorker('__ENDING__'))}.replace('__ENDING__', ending), { eval: true, type: 'module' });
        worker.on('error', () => {});
        // Listening for the exit first: a Worker that ends with its message still queued emits both in one go.
        const exited = new Promise((resolve) => worker.once('exit', resolve));
        await new Promise((resolve) => worker.once('message', resolve));
        if (how === 'terminated') await worker.terminate();
        else await exited;
        console.log(how);
      }
    `);
    expectExited(result);
    expect(result.stdout.trim().split('\n')).toEqual(['terminated', 'process.exit', 'threw']);
  });

  it('under process.exit() while a Worker holds watches open', async () => {
    const result = await run(`
      import { Worker } from 'node:worker_threads';
      const worker = new Worker(${JSON.stringify(watchingWorker(''))}, { eval: true, type: 'module' });
      await new Promise((resolve) => worker.once('message', resolve));
      process.exit(4);
    `);
    expectExited(result, 4);
  });

  it('after createTestNetwork and createLab', async () => {
    const result = await run(`${importTesting}
      const network = await testing.createTestNetwork({ prefix: 'nsexit-', hosts: { a: {}, b: {} }, links: [['a', 'b']] });
      await network.delete();
      const lab = await testing.createLab({ prefix: 'nsexit-', hosts: { a: {}, b: {} }, switches: { s: {} }, links: [['a', 's'], ['b', 's']] });
      await lab.delete();
      console.log('both deleted');
    `);
    expectExited(result);
    expect(result.stdout.trim()).toBe('both deleted');
  });

  it('after the CLI made and deleted a namespace', async () => {
    const name = nsName();
    for (const command of ['add', 'del']) {
      const result = await new Promise<ChildResult>((resolve) => {
        execFile(process.execPath, [CLI_PATH, command, name], { timeout: KILL_AFTER_MS }, (error, stdout, stderr) => {
          const failed = error as (Error & { code?: number; signal?: string }) | null;
          resolve({ code: failed ? (failed.code ?? null) : 0, signal: failed?.signal ?? null, stdout, stderr });
        });
      });
      expectExited(result);
    }
    expect(existsSync(`/run/netns/${name}`)).toBe(false);
  });
});
