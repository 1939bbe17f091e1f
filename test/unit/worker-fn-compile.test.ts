// A pool worker rebuilds fn from its source text (compileFunction); these run
// it in the test's own thread so that each rule is checked where it is made:
// which texts are functions, where require and import() resolve from, what
// stack traces name, and what fn's missing variables are explained as.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileFunction, explainedSyntaxError, explainReferenceError } from '../../dist/run/fn-compile.js';

let dir: string;
let caller: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'netns-fn-compile-'));
  mkdirSync(join(dir, 'lib'));
  writeFileSync(join(dir, 'lib', 'local.cjs'), 'module.exports = { where: "next to the caller" };');
  writeFileSync(join(dir, 'lib', 'local.mjs'), 'export const where = "imported next to the caller";');
  caller = join(dir, 'caller.mjs');
  writeFileSync(caller, '');
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('compileFunction', () => {
  // First in the file: only the first compile wraps process.emitWarning, so
  // only the test that makes it can see a wrapper made again at each compile.
  it('drops Node’s warning about the loader it chose, and only that one, wrapping emitWarning once', async () => {
    compileFunction('() => 1', caller);
    const wrapped = process.emitWarning;
    compileFunction('() => 2', caller);
    expect(process.emitWarning).toBe(wrapped);
    const seen: string[] = [];
    const listener = (warning: Error): void => void seen.push(warning.message);
    process.on('warning', listener);
    try {
      process.emitWarning('vm.USE_MAIN_CONTEXT_DEFAULT_LOADER is an experimental feature');
      process.emitWarning(new Error('vm.USE_MAIN_CONTEXT_DEFAULT_LOADER again'));
      process.emitWarning('a warning of the user’s own');
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off('warning', listener);
    }
    expect(seen).toEqual(['a warning of the user’s own']);
    expect(() => process.emitWarning(42 as unknown as string)).toThrow(expect.objectContaining({ code: 'ERR_INVALID_ARG_TYPE' }));
  });

  it.each([
    ['an arrow function', '(a, b) => a + b', [2, 3], 5],
    ['an async arrow function', 'async (a) => a * 2', [4], 8],
    ['a function expression', 'function add(a, b) { return a + b; }', [1, 1], 2],
    ['an anonymous function expression', 'function (a) { return a + 1; }', [1], 2],
    ['an anonymous async function expression', 'async function(a) { return a + 2; }', [1], 3],
    ['an async function', 'async function twice(a) { return a * 2; }', [5], 10],
    ['a method', 'sum(a, b) { return a + b; }', [3, 4], 7],
    ['an async method', 'async half(a) { return a / 2; }', [8], 4],
    ['a method named in another script', 'größe(a) { return a.length; }', ['abc'], 3],
    ['a method named with digits', 'run2(a) { return a + 2; }', [1], 3],
    ['a method spaced before its parenthesis', 'sum (a, b) { return a + b; }', [1, 2], 3],
    ['an async method spaced twice', 'async  twice(a) { return a * 2; }', [2], 4],
    ['a method holding a function expression', 'wrap(a) { return (function () { return a; })(); }', [5], 5],
    ['a method holding an async arrow', 'later(a) { return (async (b) => b)(a); }', [6], 6],
    ['an async arrow with no space', 'async(a) => a * 2', [4], 8],
  ])('turns %s back into a function', async (_what, source, args, expected) => {
    const fn = compileFunction(source, caller);
    expect(await fn(...args)).toBe(expected);
  });

  it('turns generator methods back into generators', async () => {
    expect([...(compileFunction('*count(n) { for (let i = 0; i < n; i++) yield i; }', caller)(3) as Iterable<number>)]).toEqual([0, 1, 2]);
    expect([...(compileFunction('* spaced(n) { yield n; }', caller)(1) as Iterable<number>)]).toEqual([1]);
    const values: number[] = [];
    for await (const v of compileFunction('async *tick(n) { yield n; yield n + 1; }', caller)(5) as AsyncIterable<number>) values.push(v);
    expect(values).toEqual([5, 6]);
  });

  it('lets require resolve from the caller’s file, and from the cwd when there is none', () => {
    expect(compileFunction("() => require('./lib/local.cjs').where", caller)()).toBe('next to the caller');
    expect(() => compileFunction("() => require('./lib/local.cjs').where", null)()).toThrow(/Cannot find module/);
    expect(compileFunction("() => require('./package.json').name", null)()).toBe('netns');
  });

  it('lets import() resolve from the caller’s file, node: and file: URLs as given', async () => {
    const fn = compileFunction('async (href) => [(await import("./lib/local.mjs")).where, (await import("node:path")).sep, (await import(href)).where]', caller);
    expect(await fn(`file://${join(dir, 'lib', 'local.mjs')}`)).toEqual(['imported next to the caller', '/', 'imported next to the caller']);
  });

  it('gives the import() vitest rewrites a test’s import() to, ids rooted at the cwd included', async () => {
    const fn = compileFunction("async () => (await __vite_ssr_dynamic_import__('/package.json', { with: { type: 'json' } })).default.name", null);
    expect(await fn()).toBe('netns');
    const local = join(dir, 'lib', 'local.mjs');
    const from = compileFunction('async (spec) => (await __vite_ssr_dynamic_import__(spec)).where ?? (await __vite_ssr_dynamic_import__(spec)).sep', caller);
    for (const spec of ['./lib/local.mjs', local, `file://${local}`]) expect(await from(spec)).toBe('imported next to the caller');
    expect(await from('node:path')).toBe('/');
  });

  it('names the caller’s file, marked, in stack traces', () => {
    const stack = compileFunction("() => new Error('where').stack", caller)() as string;
    expect(stack).toContain(`file://${caller}?netns-fn`);
    expect(compileFunction("() => new Error('where').stack", null)()).toContain(`file://${process.cwd()}/%5BwithNetNS%20fn%5D?netns-fn`);
  });

  it('compiles a text once per caller', () => {
    const source = '() => Math.random()';
    expect(compileFunction(source, caller)).toBe(compileFunction(source, caller));
    expect(compileFunction(source, caller)).not.toBe(compileFunction(source, null));
    expect(compileFunction(source, caller)).not.toBe(compileFunction(source, join(dir, 'lib', 'other.mjs')));
  });

});

describe('explainReferenceError', () => {
  it('says a missing variable belongs to the enclosing scope and how to pass it', () => {
    const error = explainReferenceError(new ReferenceError('port is not defined'), '() => port') as Error;
    expect(error.message).toBe(
      'port is not defined: withNetNS sends fn to a worker thread as source text, so fn cannot see variables of its enclosing scope. ' +
        "Pass port as an argument instead: withNetNS(target, (port) => ..., port), use require()/import() inside fn, or run a module's export with workerModule().",
    );
  });

  it('names a compiler’s helper as the compiler’s', () => {
    const error = explainReferenceError(new ReferenceError('import_node_fs is not defined'), "() => import_node_fs.readFileSync('/etc/hostname')") as Error;
    expect(error.message).toMatch(/^import_node_fs is not defined: withNetNS sends fn to a worker thread as source text\. .*esbuild/);
    expect(error.message).not.toContain('enclosing scope');
  });

  it('leaves other errors as they are', () => {
    for (const own of ['config.port is not defined in the environment', 'the value x is not defined']) {
      expect((explainReferenceError(new ReferenceError(own), '() => x') as Error).message).toBe(own); // fn's own words
    }
    const other = new ReferenceError('Cannot access x before initialization');
    expect(explainReferenceError(other, '() => x')).toBe(other);
    expect((other as Error).message).toBe('Cannot access x before initialization');
    const type = new TypeError('x is not defined');
    expect((explainReferenceError(type, '() => x') as Error).message).toBe('x is not defined');
    expect(explainReferenceError('x is not defined', '() => x')).toBe('x is not defined');
  });
});

describe('explainedSyntaxError', () => {
  it('says why fn’s text does not compile alone, keeping the parser’s reason', () => {
    const error = explainedSyntaxError(new SyntaxError('Unexpected token')) as Error;
    expect(error.message).toBe(
      "fn's source text does not compile on its own (Unexpected token). withNetNS sends fn as text: pass an arrow function or a function expression, " +
        'define any class whose #private members fn uses inside fn, or run a module export with workerModule().',
    );
  });

  it('leaves other errors as they are', () => {
    const other = new TypeError('not syntax');
    expect(explainedSyntaxError(other)).toBe(other);
    expect(other.message).toBe('not syntax');
  });
});
