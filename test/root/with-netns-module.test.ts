import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closePool, configurePool, NetNS, poolIdle, poolStats, withNetNS, workerModule } from '../../dist/index.js';
import { createTestNetwork, type TestNetwork } from '../../dist/testing.js';
import { inodeOf } from '../helpers/process-state.js';
import { privileged } from '../helpers/privileges.js';

type Work = typeof import('../fixtures/netns-work.mjs');
const workUrl = new URL('../fixtures/netns-work.mjs', import.meta.url);
const home = inodeOf('/proc/thread-self/ns/net');

describe.skipIf(!privileged)('withNetNS with a worker module', () => {
  let network: TestNetwork<'a'>;
  let ns: NetNS;
  const work = workerModule<Work>(workUrl);

  beforeAll(async () => {
    configurePool({ maxWorkers: 1 }); // one thread: module state is visible across calls
    network = await createTestNetwork({ hosts: { a: {} } });
    ns = NetNS.open(network.names.a);
  });

  afterAll(async () => {
    ns?.close();
    await closePool();
    await network?.delete();
    rmSync(scratch, { recursive: true, force: true });
  });

  const scratch = mkdtempSync(join(tmpdir(), 'netns-modules-'));
  const moduleFile = (name: string, text: string): string => {
    const path = join(scratch, name);
    writeFileSync(path, text);
    return path;
  };

  it('runs a named export inside the namespace, after importing the module at home', async () => {
    const result = await withNetNS(ns, work.whereAmI, 'ab', 2);
    expect(result).toMatchObject({ label: 'abab', namespace: ns.inode, importedIn: home });
  });

  it('imports the module once per thread and keeps its state between calls', async () => {
    const first = await withNetNS(ns, work.whereAmI, 'x', 1);
    const second = await withNetNS(ns, work.whereAmI, 'x', 1);
    expect(second.calls).toBe(first.calls + 1);
    expect(poolStats().threadsDiscarded).toBe(0);
  });

  it('names the module by path, file: URL string or URL alike', async () => {
    const path = fileURLToPath(workUrl);
    const byPath = workerModule<Work>(path);
    const byString = workerModule<Work>(pathToFileURL(path).href);
    const [a, b] = await Promise.all([withNetNS(ns, byPath.later, 1), withNetNS(ns, byString.later, 2)]);
    expect([a, b]).toEqual([
      { value: 1, namespace: ns.inode },
      { value: 2, namespace: ns.inode },
    ]);
  });

  it('takes options and an abort signal like fn does', async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(withNetNS(ns, { signal: controller.signal }, work.later, 'x')).rejects.toMatchObject({ name: 'AbortError' });
    await expect(withNetNS(ns, { signal: new AbortController().signal }, work.later, 'y')).resolves.toEqual({ value: 'y', namespace: ns.inode });
  });

  it("rejects with the export's own error", async () => {
    await expect(withNetNS(ns, work.fails, 'bad')).rejects.toMatchObject({ name: 'RangeError', message: 'bad', code: 'E_WORK' });
  });

  it('runs a nested call to a module export from inside one', async () => {
    const result = await withNetNS(ns, work.nested, network.names.a);
    expect(result).toMatchObject({ label: 'nested', namespace: ns.inode });
  });

  it('says which function exports a module has when the name is not one of them', async () => {
    const loose = workerModule(workUrl);
    await expect(withNetNS(ns, loose.missing!)).rejects.toMatchObject({
      code: 'ERR_NETNS_INVALID_ARG',
      message: expect.stringMatching(/no function export named "missing".*fails, later, nested, whereAmI$/),
    });
    await expect(withNetNS(ns, loose.notAFunction!)).rejects.toThrow(/\(it is number\)/);
  });

  it('rejects with the import error of a module that cannot be loaded, then loads it once it can', async () => {
    const absent = workerModule(new URL('../fixtures/no-such-module.mjs', import.meta.url));
    await expect(withNetNS(ns, absent.run!)).rejects.toMatchObject({ code: 'ERR_MODULE_NOT_FOUND' });
    await expect(withNetNS(ns, work.later, 'after')).resolves.toMatchObject({ value: 'after' });
  });

  it('gives a failed import a fresh thread next time, so a module fixed on disk loads', async () => {
    const path = join(scratch, 'later.mjs');
    const later = workerModule(path);
    await expect(withNetNS(ns, later.run!)).rejects.toMatchObject({ code: 'ERR_MODULE_NOT_FOUND' });
    moduleFile('later.mjs', 'throw new Error("not yet");\n');
    await expect(withNetNS(ns, later.run!)).rejects.toThrow('not yet');
    moduleFile('later.mjs', 'export const run = () => "loaded";\n');
    await expect(withNetNS(ns, later.run!)).resolves.toBe('loaded');
  });

  it("calls a CommonJS module's functions, named or in module.exports", async () => {
    const cjs = workerModule(moduleFile('work.cjs', 'module.exports = { twice: (x) => x * 2 };\nexports.unused = 1;\n'));
    await expect(withNetNS(ns, cjs.twice!, 21)).resolves.toBe(42);
  });

  it("counts a module's top-level code as the first call's: an exit there rejects that call only", async () => {
    const exits = workerModule(moduleFile('exits.mjs', 'process.exit(3);\nexport const run = () => 1;\n'));
    await expect(withNetNS(ns, exits.run!)).rejects.toMatchObject({ code: 'ERR_NETNS_WORKER_EXITED' });
    await expect(withNetNS(ns, work.later, 'still serving')).resolves.toMatchObject({ value: 'still serving' });
  });

  it('ends the thread of an aborted call whose module never finishes loading', async () => {
    // The module says it started loading by connecting here (the import runs in the pool thread's home namespace, this one).
    const server = createServer((socket) => socket.destroy()).listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    const hangs = workerModule(
      moduleFile('hangs.mjs', `import { connect } from 'node:net';\nconnect(${port}, '127.0.0.1');\nawait new Promise(() => {});\nexport const run = () => 1;\n`),
    );
    const controller = new AbortController();
    const call = withNetNS(ns, { signal: controller.signal }, hangs.run!);
    await once(server, 'connection');
    server.close();
    controller.abort();
    await expect(call).rejects.toMatchObject({ name: 'AbortError' });
    await expect(withNetNS(ns, work.later, 'next')).resolves.toMatchObject({ value: 'next' }); // one thread: it was replaced
  });

  it("retires the thread of a module whose top level leaves a timer: it never ticks in another call's namespace", async () => {
    const ticking = workerModule(
      moduleFile('ticking.mjs', 'setInterval(() => {}, 60_000).unref();\nexport const run = () => "ran";\n'),
    );
    const discardedBefore = poolStats().threadsDiscarded;
    await expect(withNetNS(ns, ticking.run!)).resolves.toBe('ran');
    await poolIdle();
    expect(poolStats().threadsDiscarded).toBe(discardedBefore + 1);
  });

  it("takes only a module's own exports: Object.prototype's methods are none", async () => {
    const defaults = workerModule(moduleFile('defaults.mjs', 'export default { run: () => "ran" };\n'));
    await expect(withNetNS(ns, defaults.run!)).resolves.toBe('ran');
    for (const inherited of ['constructor', 'toString', 'hasOwnProperty']) {
      await expect(withNetNS(ns, defaults[inherited]!)).rejects.toMatchObject({ code: 'ERR_NETNS_INVALID_ARG', message: expect.stringMatching(/no function export named/) });
    }
  });

  it('reads a look-alike export once, and refuses a module path with control characters', async () => {
    let reads = 0;
    const shifty = {
      module: workUrl.href,
      get exportName(): unknown {
        return reads++ < 2 ? 'later' : Symbol('changed');
      },
    };
    await expect(withNetNS(ns, shifty as never)).rejects.toMatchObject({ code: 'ERR_NETNS_INVALID_ARG' });
    expect(() => workerModule(`${fileURLToPath(workUrl)}\u0007`)).toThrow(expect.objectContaining({ code: 'ERR_NETNS_INVALID_ARG' }));
    await expect(withNetNS(ns, undefined as never)).rejects.toThrow(/fn must be a function, got undefined/);
  });

  it('refuses a relative path or a URL that is not a file', () => {
    expect(() => workerModule('./work.js')).toThrow(expect.objectContaining({ code: 'ERR_NETNS_INVALID_ARG', message: expect.stringMatching(/import\.meta\.url/) }));
    expect(() => workerModule(new URL('https://example.com/work.js'))).toThrow(/file: URL/);
  });

  it('type-checks the arguments of each export', () => {
    // These lines are checked by `npm run typecheck` (tsconfig includes test/): each must be an error.
    const wrongTypes = () => {
      // @ts-expect-error times must be a number
      void withNetNS(ns, work.whereAmI, 'x', 'twice');
      // @ts-expect-error an argument is missing
      void withNetNS(ns, work.whereAmI, 'x');
      // @ts-expect-error notAFunction is not a function export
      void work.notAFunction;
    };
    const typed: Promise<{ label: string }> = withNetNS(ns, work.whereAmI, 'x', 1);
    const untyped = workerModule(workUrl);
    const anyArguments = () => withNetNS(ns, untyped.whereAmI!, 'x', 1); // without the module's type: allowed
    expect([typeof wrongTypes, typeof anyArguments]).toEqual(['function', 'function']);
    return typed;
  });
});
