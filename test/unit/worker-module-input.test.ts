// workerModule() on the calling side: which module names it takes, what its
// exports look like, and how a hand-made module export is checked. No thread
// runs here; with-netns-module.test.ts runs the exports.
import { describe, expect, it } from 'vitest';
import { workerModule } from '../../dist/index.js';
import { checkedModuleExport, isModuleExport } from '../../dist/run/worker-module.js';

const invalid = (message: string | RegExp) =>
  expect.objectContaining({ code: 'ERR_NETNS_INVALID_ARG', message: typeof message === 'string' ? message : expect.stringMatching(message) });

describe('workerModule', () => {
  it('takes a file: URL, its text, or an absolute path, all as one href', () => {
    type Work = { run: () => void };
    const href = 'file:///opt/work%20dir/work.mjs';
    expect(workerModule<Work>(new URL(href)).run.module).toBe(href);
    expect(workerModule<Work>(href).run.module).toBe(href);
    expect(workerModule<Work>('/opt/work dir/work.mjs').run.module).toBe(href);
  });

  it.each([
    ['', 'module must be a URL, a file: URL string or an absolute path'],
    [42, 'module must be a URL, a file: URL string or an absolute path'],
    ['work.mjs', /^module must be an absolute path or a URL, got "work.mjs": name it relative to your file with new URL/],
    ['/opt/work\n.mjs', 'module must not contain control characters, got "/opt/work\\n.mjs"'],
    ['file://[bad', 'module is not a valid URL: "file://[bad"'],
    [new URL('https://example.com/work.mjs'), 'module must be a file: URL, got https:'],
  ])('refuses %j', (module, message) => {
    expect(() => workerModule(module as string)).toThrow(invalid(message));
  });

  it('gives each export once, frozen, naming the module and the export', () => {
    const work = workerModule<{ run: () => number }>('/opt/work.mjs');
    expect(work.run).toBe(work.run);
    expect(work.run).toEqual({ module: 'file:///opt/work.mjs', exportName: 'run' });
    expect(Object.isFrozen(work.run)).toBe(true);
  });

  it('is no thenable and has no symbol keys, so awaiting or inspecting it calls no export', async () => {
    const work = workerModule('/opt/work.mjs') as Record<string | symbol, unknown>;
    expect(work.then).toBeUndefined();
    expect(await work).toBe(work);
    expect(work[Symbol.iterator]).toBeUndefined();
    expect(work[Symbol.toPrimitive]).toBeUndefined();
  });
});

describe('a module export made by hand', () => {
  it('is one with a string module and exportName', () => {
    expect(isModuleExport({ module: 'file:///w.mjs', exportName: 'run' })).toBe(true);
    for (const value of [null, undefined, () => 1, { module: 1, exportName: 'run' }, { module: 'file:///w.mjs' }]) {
      expect(isModuleExport(value)).toBe(false);
    }
  });

  it('is checked as workerModule checks its module, each field read once', () => {
    let reads = 0;
    const moving = {
      get module() {
        reads++;
        return reads === 1 ? 'file:///w.mjs' : 'https://example.com/w.mjs';
      },
      exportName: 'run',
    };
    expect(checkedModuleExport(moving)).toEqual({ module: 'file:///w.mjs', exportName: 'run' });
    expect(() => checkedModuleExport({ module: 'https://example.com/w.mjs', exportName: 'run' })).toThrow(invalid('module must be a file: URL, got https:'));
    expect(() => checkedModuleExport({ module: 42, exportName: 'run' } as never)).toThrow(invalid('a module export needs a string module and exportName'));
    expect(() => checkedModuleExport({ module: 'file:///w.mjs', exportName: 7 } as never)).toThrow(invalid('a module export needs a string module and exportName'));
  });
});
