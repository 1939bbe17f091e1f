// The worker's side of workerModule(), run in the test's own thread: a module
// is imported once, its export found whether it is ESM or CommonJS, and a
// module Node refuses is told apart from a module whose own code throws.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportOf, importFailure, importModule } from '../../dist/run/module-export.js';
import { distUrl, runNodeScript } from '../helpers/node-child.js';

let dir: string;
const href = (name: string): string => pathToFileURL(join(dir, name)).href;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'netns-module-export-'));
  writeFileSync(join(dir, 'esm.mjs'), 'globalThis.esmLoads = (globalThis.esmLoads ?? 0) + 1;\nexport const run = () => "esm";\nexport const port = 80;\nexport function other() {}\n');
  writeFileSync(join(dir, 'cjs.cjs'), 'module.exports = { run: () => "cjs", setup() {}, port: 80 };\n');
  writeFileSync(join(dir, 'throws.mjs'), 'throw new TypeError("the module’s own failure");\n');
  writeFileSync(join(dir, 'hooked.weird'), 'module.exports = { run: () => "required" };\n');
  writeFileSync(join(dir, 'empty.mjs'), 'export const version = 1;\n');
  writeFileSync(join(dir, 'throws.cjs'), 'globalThis.cjsThrows = (globalThis.cjsThrows ?? 0) + 1;\nthrow new RangeError("a CommonJS module’s own failure");\n');
  writeFileSync(join(dir, 'throws-null.mjs'), 'throw null;\n');
  mkdirSync(join(dir, 'folder'));
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('importModule', () => {
  it('imports a module once per thread', async () => {
    const [first, second] = await Promise.all([importModule(href('esm.mjs')), importModule(href('esm.mjs'))]);
    expect(first).toBe(second);
    expect(await importModule(href('esm.mjs'))).toBe(first);
    expect((globalThis as { esmLoads?: number }).esmLoads).toBe(1);
    expect(importModule(href('esm.mjs'))).toBe(importModule(href('esm.mjs'))); // one import, every call awaits it
  });

  it('requires a module of a kind only a require hook knows (the import hooks of a loader such as tsx stay on the main thread)', async () => {
    // In Node itself: vitest's module runner imports a file of any extension, so in this thread the import never fails.
    const script = `
      const { importModule } = await import(${JSON.stringify(distUrl('run/module-export.js'))});
      const required = await importModule(${JSON.stringify(href('hooked.weird'))});
      console.log(required.run());`;
    expect(await runNodeScript(script)).toMatchObject({ code: 0, stdout: 'required\n', stderr: '' });
  });

  it('passes on an import failure that is not about the file’s kind', async () => {
    await expect(importModule(href('throws.mjs'))).rejects.toThrow('the module’s own failure');
  });

  it('runs a failing module once: its failure is not taken as a reason to require it again', async () => {
    await expect(importModule(href('throws.cjs'))).rejects.toThrow(RangeError);
    expect((globalThis as { cjsThrows?: number }).cjsThrows).toBe(1);
  });

  it('passes on whatever a module throws, null included', async () => {
    await expect(importModule(href('throws-null.mjs'))).rejects.toBeNull();
  });
});

describe('exportOf', () => {
  const spec = (exportName: string) => ({ module: 'mod.mjs', exportName });

  it('finds an ES module’s named export and a CommonJS module’s property', async () => {
    expect(exportOf(await importModule(href('esm.mjs')), spec('run'))()).toBe('esm');
    expect(exportOf(await importModule(href('cjs.cjs')), spec('run'))()).toBe('cjs');
  });

  it('refuses a name that is not a function, saying what it is and which functions there are', async () => {
    const esm = await importModule(href('esm.mjs'));
    expect(() => exportOf(esm, spec('port'))).toThrow(
      expect.objectContaining({ code: 'ERR_NETNS_INVALID_ARG', message: 'mod.mjs has no function export named "port" (it is number); its function exports: run, other' }),
    );
    const cjs = await importModule(href('cjs.cjs'));
    expect(() => exportOf(cjs, spec('missing'))).toThrow(
      expect.objectContaining({ message: 'mod.mjs has no function export named "missing"; its function exports: run, setup' }),
    );
    const empty = await importModule(href('empty.mjs'));
    expect(() => exportOf(empty, spec('run'))).toThrow(/its function exports: none$/);
  });

  it('finds a CommonJS export held by the default export only, and names it among the functions', () => {
    // What Node's import gives for exports made at run time, which it cannot find names in.
    const built = { default: { run: () => 'run', stop: () => 'stop', port: 80 } };
    expect(exportOf(built, spec('stop'))()).toBe('stop');
    expect(() => exportOf(built, spec('start'))).toThrow(expect.objectContaining({ message: 'mod.mjs has no function export named "start"; its function exports: run, stop' }));
  });

  it('never takes Object.prototype’s methods for a CommonJS module’s exports', async () => {
    const cjs = await importModule(href('cjs.cjs'));
    expect(() => exportOf(cjs, spec('toString'))).toThrow(expect.objectContaining({ code: 'ERR_NETNS_INVALID_ARG' }));
    expect(() => exportOf({ default: null }, spec('run'))).toThrow(/its function exports: none$/);
    expect(() => exportOf({ default: 'text' }, spec('run'))).toThrow(/its function exports: none$/);
  });
});

describe('importFailure', () => {
  async function failureOf(target: string): Promise<unknown> {
    try {
      await importModule(target);
    } catch (error) {
      return error;
    }
    throw new Error(`${target} imported`);
  }

  it('codes a module Node cannot find as ERR_MODULE_NOT_FOUND, keeping Node’s error as cause', async () => {
    const target = href('absent.mjs');
    const node = await failureOf(target);
    const error = importFailure(target, node) as Error & { code: string };
    expect(error.constructor.name).toBe('NetnsError');
    expect(error.code).toBe('ERR_MODULE_NOT_FOUND');
    expect(error.message).toContain(`(importing worker module ${target})`);
    expect(error.cause).toBe(node);
  });

  it('reads require’s MODULE_NOT_FOUND as import’s code', () => {
    const required = Object.assign(new Error("Cannot find module '/x.cjs'"), { code: 'MODULE_NOT_FOUND' });
    expect((importFailure('file:///x.cjs', required) as { code: string }).code).toBe('ERR_MODULE_NOT_FOUND');
  });

  it('codes Node’s other refusals with Node’s code: a folder, an unknown scheme', async () => {
    for (const target of [href('folder'), 'data:text/plain,hello']) {
      const node = (await failureOf(target)) as { code: string };
      const error = importFailure(target, node) as { code: string; cause: unknown };
      expect(error.code).toBe(node.code);
      expect(error.cause).toBe(node);
    }
  });

  it('codes a system error about the module’s own file, and passes on one about another file', () => {
    const target = href('esm.mjs');
    const own = Object.assign(new Error('EACCES: permission denied'), { code: 'EACCES', path: join(dir, 'esm.mjs') });
    expect((importFailure(target, own) as { code: string; cause: unknown }).cause).toBe(own);
    const another = Object.assign(new Error('EACCES: permission denied'), { code: 'EACCES', path: '/etc/shadow' });
    expect(importFailure(target, another)).toBe(another);
    const notFile = Object.assign(new Error('EACCES: permission denied'), { code: 'EACCES', path: '/x' });
    expect(importFailure('data:text/javascript,export default 1', notFile)).toBe(notFile);
  });

  it('passes on the module’s own failures as fn’s errors are: thrown, coded or not', async () => {
    const target = href('throws.mjs');
    const own = await failureOf(target);
    expect(importFailure(target, own)).toBe(own);
    const path = join(dir, 'throws.mjs'); // even when it names the module's own file
    for (const code of ['ERR_APP_CONFIG', 'APP_FAILED']) {
      const coded = Object.assign(new Error('the module’s own code'), { code, path });
      expect(importFailure(target, coded)).toBe(coded);
    }
    const plain = { code: 'ERR_MODULE_NOT_FOUND', message: 'thrown as a plain object' };
    expect(importFailure(target, plain)).toBe(plain);
    const numbered = Object.assign(new Error('numbered'), { code: 42 });
    expect(importFailure(target, numbered)).toBe(numbered);
    expect(importFailure(target, 'a string')).toBe('a string');
  });
});
