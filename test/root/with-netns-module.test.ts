import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closePool, configurePool, NetNS, poolStats, withNetNS, workerModule } from '../../dist/index.js';
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
    await network?.close();
  });

  it('runs a named export inside the namespace, after importing the module at home', async () => {
    const result = await withNetNS(ns, work.whereAmI, 'ab', 2);
    expect(result).toMatchObject({ label: 'abab', namespace: ns.inode, importedIn: home });
  });

  it('imports the module once per thread and keeps its state between calls', async () => {
    const first = await withNetNS(ns, work.whereAmI, 'x', 1);
    const second = await withNetNS(ns, work.whereAmI, 'x', 1);
    expect(second.calls).toBe(first.calls + 1);
    // the module's own timer, made at import, is module state: it does not retire the thread
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
    expect(typeof wrongTypes).toBe('function');
    return typed;
  });
});
