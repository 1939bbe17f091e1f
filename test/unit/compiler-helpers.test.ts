// Compiler helpers in fn's source text. Each case compiles a small module with
// the real compiler at a target that makes it emit the helper, loads it with
// Node's own loader (not Vite's), then rebuilds the exported fn from its
// source text the way the worker does and compares the two.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { EOL } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSync, transformSync, type TransformOptions } from 'esbuild';
import ts from 'typescript';
import { afterAll, describe, expect, it } from 'vitest';
import { explainToolchainName, helperBindings } from '../../dist/run/compiler-helpers/index.js';
import { esbuildHelpers } from '../../dist/run/compiler-helpers/esbuild.js';
import { SHARED_NAMES } from '../../dist/run/compiler-helpers/shared-names.js';
import { tslib as suppliedTslib, TSLIB_NAMES } from '../../dist/run/compiler-helpers/tslib.js';

type Fn = (...args: unknown[]) => unknown;

const require = createRequire(import.meta.url);
const tslib = require('tslib') as Record<string, unknown>;
// Under node_modules so that a compiled module's `import 'tslib'` resolves.
const cacheDir = fileURLToPath(new URL('../../node_modules/.cache/', import.meta.url));
mkdirSync(cacheDir, { recursive: true });
const dir = mkdtempSync(join(cacheDir, 'compiler-helpers-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let serial = 0;
// require() loads ES modules too (Node >= 20.19), natively.
function load(code: string, ext: 'mjs' | 'cjs'): Record<string, Fn> {
  const file = join(dir, `m${serial++}.${ext}`);
  writeFileSync(file, code);
  return require(file) as Record<string, Fn>;
}

const esbuild = (source: string, options: TransformOptions): string =>
  transformSync(source, { loader: 'ts', format: 'esm', ...options }).code;
// tsx 4 compiles with these settings, and users cannot turn keepNames off.
const tsx = (source: string): string => esbuild(source, { target: 'node20', keepNames: true, minifyWhitespace: true });
const tsc = (source: string, options: ts.CompilerOptions): string =>
  ts.transpileModule(source, { compilerOptions: { module: ts.ModuleKind.ESNext, ...options } }).outputText;

// What the worker does with fn's source: `require` is a parameter there too
// (and a method gets `function ` in front).
function rebuild(fn: Fn): { fn: Fn; names: string[]; values: unknown[]; source: string } {
  const text = fn.toString();
  const isMethod = /^(async\s+)?[\w$]+\s*\(/.test(text) && !/^(async\s+)?function\b/.test(text) && !/^async\s*\(/.test(text);
  const source = isMethod ? `function ${text}` : text;
  const { names, values } = helperBindings(source, require);
  const rebuilt = new Function('require', ...names, `return (${source});`)(require, ...values) as Fn;
  return { fn: rebuilt, names, values, source };
}

interface Case {
  title: string;
  code: string;
  helpers: string[];
  args?: unknown[];
}

async function expectSameResult({ code, helpers, args = [] }: Case, ext: 'mjs' | 'cjs' = 'mjs'): Promise<unknown> {
  const original = load(code, ext).f!;
  const source = original.toString();
  for (const helper of helpers) expect(source).toMatch(new RegExp(`(?<![\\w$])${helper}\\(`));
  const { fn } = rebuild(original);
  const expected = await original(...args);
  expect(await fn(...args)).toEqual(expected);
  return expected;
}

// The fixtures catch errors themselves, so a helper that throws the wrong
// error (or none) shows up as a different result.
const FEATURES = {
  names: `export function f() {
    const arrow = () => 1;
    function inner() { return 2; }
    class K { static { (this as any).seen = 1; } }
    const obj = { method() {} };
    return [arrow.name, inner.name, K.name, obj.method.name, (K as any).seen, arrow() + inner()];
  }`,
  fields: `export const f = () => {
    const key = Symbol('k');
    class Base { set x(v: number) { throw new Error('setter ran'); } }
    class A extends Base { x = 1; [key] = 2; static y = 3; static { (this as any).z = (this as any).y + 1; } }
    const a = new A();
    return [a.x, (a as any)[key], (A as any).y, (A as any).z, Object.keys(a)];
  }`,
  private: `export const f = () => {
    class A {
      #x = 1; static #count = 0; #m() { return this.#x * 10; }
      get #g() { return this.#x + 100; } set #g(v: number) { this.#x = v; }
      constructor() { A.#count++; }
      static has(o: object) { return #x in o; }
      static count() { return A.#count; }
      bump() { this.#x++; this.#g += 1; [this.#x] = [this.#x * 2]; return [this.#m(), this.#g]; }
    }
    const a = new A();
    const errors = [] as string[];
    try { A.prototype.bump.call({}); } catch (e: any) { errors.push(e.constructor.name + ': ' + e.message); }
    try { A.has(1 as any); } catch (e: any) { errors.push(e.constructor.name + ': ' + e.message); }
    return [a.bump(), A.has(a), A.has({}), A.count(), errors];
  }`,
  superAsync: `export const f = () => {
    class A { m() { return 1; } static s() { return 's'; } }
    class B extends A {
      static #p = 5;
      async m() { super.x = 2; return super.m() + this.x; }
      static async q() { super.n = 1; super.n++; return super.s() + this.n + B.#p; }
    }
    return Promise.all([new B().m(), B.q()]);
  }`,
  earlyAccess: `export const f = () => {
    try { class C { static [(C as any).x] = 1; } return 'no error'; } catch (e: any) { return e.constructor.name + ': ' + e.message; }
  }`,
  async: `export const f = async function (this: unknown, a: number) {
    const log = [a, arguments.length];
    log.push(await Promise.resolve(2), await 3);
    try { await Promise.reject(new Error('no')); } catch (e: any) { log.push(e.message); }
    const thrower = async () => { throw new Error('late'); };
    log.push(await thrower().catch((e) => e.message));
    return log;
  }`,
  asyncGenerator: `export const f = async () => {
    async function* inner(n: number) { for (let i = 0; i < n; i++) yield await Promise.resolve(i); return 'done'; }
    async function* outer() {
      const r = yield* inner(2);
      yield r;
      yield* [Promise.resolve('sync'), 'iterable'];
      try { yield 'before return'; yield 'never'; } finally { yield 'in finally'; }
    }
    const seen: unknown[] = [];
    for await (const v of outer()) { seen.push(v); if (v === 'before return') break; }
    for await (const v of [Promise.resolve(1), 2]) seen.push(v);
    const it = outer();
    seen.push(await Promise.all([it.next(), it.next(), it.next()]));
    seen.push(await it.return('early'), await it.next());
    async function* cleanup() { try { yield 1; } finally { await null; seen.push('finally ran on'); } }
    const c = cleanup();
    seen.push(await c.next(), await c.return('stop'), await c.next());
    async function* failing() { yield 1; throw new Error('gen failed'); }
    try { for await (const v of failing()) seen.push(v); } catch (e: any) { seen.push(e.message); }
    return seen;
  }`,
  spread: `export const f = (key: string) => {
    const s = Symbol('s');
    const hidden = Object.defineProperty({ a: 1, [s]: 2, b: 3 }, 'h', { value: 4, enumerable: false });
    const { a, [key]: picked, ...rest } = hidden as any;
    const copy = { ...rest, extra: 1, ...null, ...{ [Symbol.for('t')]: 't' } };
    return [a, picked, Object.keys(rest), rest[s], Object.keys(copy), copy[s], copy[Symbol.for('t')], rest.h];
  }`,
  pow: `export const f = (a: number) => { let x = a ** 2; x **= 3; return [x, 2 ** -1, (-2) ** 2]; }`,
  template: `export const f = () => {
    const tag = (s: TemplateStringsArray, ...v: unknown[]) => s;
    const site = () => tag\`a\${1}\\n\\unicode\`;
    const first = site();
    return [first === site(), [...first], [...first.raw], Object.isFrozen(first), String.raw\`x\\ty\${2}\`];
  }`,
  using: `export const f = async () => {
    const log: string[] = [];
    const res = (name: string, fail = false) => ({ [Symbol.dispose]() { log.push(name); if (fail) throw new Error(name); } });
    const ares = (name: string) => ({ async [Symbol.asyncDispose]() { await null; log.push(name); } });
    { using a = res('a'); using b = res('b'); log.push('body'); }
    try { using c = res('c', true); using d = res('d', true); throw new Error('body'); }
    catch (e: any) { log.push(e.name + ':' + e.error?.message + '/' + e.suppressed?.error?.message + '/' + e.suppressed?.suppressed?.message); }
    { await using e = ares('e'); await using g = res('g'); await using n = null; log.push('async body'); }
    try { using bad = 1 as any; } catch (e: any) { log.push(e.message); }
    return log;
  }`,
  tsDecorators: `export const f = () => {
    const log: unknown[] = [];
    const cls = (tag: string) => (c: any) => { log.push([tag, c.name]); };
    const member = (tag: string) => (t: any, k: string, d?: PropertyDescriptor) => { log.push([tag, k, typeof d]); };
    const param = (t: any, k: string, i: number) => { log.push(['param', k, i]); };
    @cls('outer') @cls('inner')
    class A { @member('field') x = 1; @member('m1') @member('m2') m(a: number, @param b: number) { return a + b; } static s(@param z: number) { return z; } }
    return [log, new A().m(1, 2), A.s(3)];
  }`,
  jsDecorators: `export const f = () => {
    const log: unknown[] = [];
    const look = (value: any, ctx: any) => {
      const shown = typeof value === 'function' ? 'function ' + value.name : typeof value;
      log.push([ctx.kind, String(ctx.name), ctx.static, ctx.private, shown, Object.keys(ctx.access ?? {})]);
      ctx.addInitializer(function (this: any) { log.push(['init', ctx.kind, String(ctx.name)]); });
      if (ctx.metadata) ctx.metadata[String(ctx.name)] = ctx.kind; // tsc: none without Symbol.metadata
      if (ctx.kind === 'field') return (v: number) => v * 10;
      if (ctx.kind === 'accessor') return { get(this: any) { return value.get.call(this) + 1; }, init: (v: number) => v + 5 };
    };
    let access: any;
    let closed: any;
    const grab = (_: any, ctx: any) => { access = ctx.access; closed = ctx; };
    @look class A {
      @look m() { return 'm'; }
      @look accessor acc = 1;
      @look @grab #p = 2;
      @look static s = 3;
      @look get g() { return 'g'; }
      @look #pm() { return 'pm'; }
      peek() { return this.#p; }
    }
    const a = new A();
    const late: string[] = [];
    try { closed.addInitializer(() => {}); } catch (e: any) { late.push(e.message); }
    return [log, a.m(), a.acc, a.peek(), (A as any).s, access.get(a), access.has(a), access.has({}),
      JSON.stringify((A as any)[Symbol.metadata ?? Symbol.for('Symbol.metadata')]), late];
  }`,
};

const CASES: Case[] = [
  { title: 'keepNames under tsx: __name', code: tsx(FEATURES.names), helpers: ['__name'] },
  { title: 'class fields below es2022: __publicField', code: esbuild(FEATURES.fields, { target: 'es2020' }), helpers: ['__publicField'] },
  {
    title: '#private members below es2022: __privateAdd/Get/Set/Method/In/Wrapper',
    code: esbuild(FEATURES.private, { target: 'es2021' }),
    helpers: ['__privateAdd', '__privateGet', '__privateSet', '__privateMethod', '__privateIn', '__privateWrapper'],
  },
  {
    title: 'super in lowered async methods: __superGet/Set/Wrapper, __async',
    code: esbuild(FEATURES.superAsync, { target: 'es2016' }),
    helpers: ['__superGet', '__superSet', '__superWrapper', '__async', '__privateAdd'],
  },
  {
    title: "a class's own name in its computed key: __earlyAccess",
    code: esbuild(FEATURES.earlyAccess, { target: 'es2020' }),
    helpers: ['__earlyAccess'],
  },
  { title: 'async below es2017: __async', code: esbuild(FEATURES.async, { target: 'es2016' }), helpers: ['__async'], args: [7] },
  {
    title: 'async generators and for await below es2018: __asyncGenerator, __await, __yieldStar, __forAwait',
    code: esbuild(FEATURES.asyncGenerator, { target: 'es2017' }),
    helpers: ['__asyncGenerator', '__await', '__yieldStar', '__forAwait'],
  },
  {
    title: 'object spread and rest below es2018: __spreadValues, __spreadProps, __objRest, __restKey',
    code: esbuild(FEATURES.spread, { target: 'es2017' }),
    helpers: ['__spreadValues', '__spreadProps', '__objRest', '__restKey'],
    args: ['b'],
  },
  { title: '** at es2015: __pow', code: esbuild(FEATURES.pow, { target: 'es2015' }), helpers: ['__pow'], args: [3] },
  { title: 'tagged templates at node8: __template and its cache', code: esbuild(FEATURES.template, { target: 'node8' }), helpers: ['__template'] },
  { title: 'using below esnext: __using, __callDispose', code: esbuild(FEATURES.using, { target: 'es2022' }), helpers: ['__using', '__callDispose'] },
  {
    title: 'TS experimentalDecorators: __decorateClass, __decorateParam',
    code: esbuild(FEATURES.tsDecorators, { target: 'es2022', tsconfigRaw: { compilerOptions: { experimentalDecorators: true } } }),
    helpers: ['__decorateClass', '__decorateParam'],
  },
  {
    title: 'JS decorators: __decoratorStart, __decorateElement, __runInitializers, __decoratorMetadata',
    code: esbuild(FEATURES.jsDecorators, { target: 'es2022' }),
    helpers: ['__decoratorStart', '__decorateElement', '__runInitializers'],
  },
  {
    title: 'every feature at once under tsx keepNames (helpers and __name together)',
    code: esbuild(FEATURES.jsDecorators, { target: 'es2016', keepNames: true, minifyWhitespace: true }),
    helpers: ['__name', '__decorateElement', '__privateAdd', '__publicField'],
  },
];

describe('esbuild helpers rebuilt from fn.toString()', () => {
  for (const testCase of CASES) it(testCase.title, () => expectSameResult(testCase));

  it('__decoratorMetadata: class metadata is the object decorators wrote to', async () => {
    const code = esbuild(FEATURES.jsDecorators, { target: 'es2022' });
    expect(code).toContain('__decoratorMetadata(');
    const result = (await expectSameResult({ title: '', code, helpers: [] })) as unknown[];
    expect(JSON.parse(result[8] as string)).toMatchObject({ A: 'class', m: 'method', acc: 'accessor', '#p': 'field' });
  });

  it('__require in an ESM bundle is the require the worker gives fn', () => {
    const entry = join(dir, 'require-entry.mjs');
    writeFileSync(entry, "export const f = () => require('node:os').EOL;");
    const code = buildSync({ entryPoints: [entry], bundle: true, write: false, format: 'esm', platform: 'node' }).outputFiles[0]!.text;
    const original = load(code, 'mjs').f!;
    expect(original.toString()).toContain('__require(');
    // An ES module has no require: the bundle's own __require throws there.
    expect(() => original()).toThrow('Dynamic require of "node:os" is not supported');
    const { fn, names, values } = rebuild(original);
    expect(values[names.indexOf('__require')]).toBe(require);
    expect(fn()).toBe(EOL);
  });

  it('__toESM: import() lowered to require() (node12)', async () => {
    const code = esbuild('export const f = async (m: string) => Object.keys(await import(m)).includes("default");', {
      target: 'node12',
      format: 'cjs',
    });
    await expectSameResult({ title: '', code, helpers: ['__toESM'], args: ['node:path'] }, 'cjs');
  });

  it('__name2: the renamed helper is bound, the global it avoided is not', () => {
    const code = esbuild('export function f() { const g = () => 1; return [g.name, typeof __name]; }', {
      target: 'es2022',
      keepNames: true,
    });
    const original = load(code, 'mjs').f!;
    expect(original.toString()).toContain('__name2(');
    const { fn, names } = rebuild(original);
    expect(names).toContain('__name2');
    expect(names).not.toContain('__name');
    expect(fn()).toEqual(original());
  });

  it('a minified helper is explained', async () => {
    const original = load(esbuild(FEATURES.async, { target: 'es2016', minify: true }), 'mjs').f!;
    const source = original.toString();
    const missing = await Promise.resolve()
      .then(() => rebuild(original).fn(1))
      .then(
        () => null,
        (error: Error) => /^(\S+) is not defined$/.exec(error.message)?.[1],
      );
    expect(missing).toMatch(/^[\w$]{1,2}$/);
    expect(explainToolchainName(missing!, source)).toMatch(/minif/);
  });
});

const TSC_FEATURES = {
  es5: `export const f = async (o: { a: number; b: number }, ...more: number[]) => {
    class Base { greet() { return 'base'; } }
    class Derived extends Base { greet() { return 'derived/' + super.greet(); } }
    const { a, ...rest } = o;
    const tag = (s: TemplateStringsArray) => s.raw[0];
    const site = () => tag\`x\\ny\`;
    function* count() { yield 1; yield 2; }
    return [a, { ...rest, c: 3 }, [...more, ...count()], new Derived().greet(), site(), await Promise.resolve('awaited')];
  }`,
  tsDecorators: `export const f = () => {
    const log: unknown[] = [];
    const dec = (...args: any[]) => { log.push(args.length); };
    @dec class A { @dec m(@dec x: number) { return x; } }
    return [log, new A().m(1)];
  }`,
};

describe('tslib helpers rebuilt from fn.toString()', () => {
  const { ES5, ES2016, ES2017, ES2020, ES2022 } = ts.ScriptTarget;
  const tscCases: Case[] = [
    {
      title: 'ES5: __awaiter, __generator, __extends, __rest, __assign, __spreadArray, __read, __makeTemplateObject',
      code: tsc(TSC_FEATURES.es5, { target: ES5, downlevelIteration: true }),
      helpers: ['__awaiter', '__generator', '__extends', '__rest', '__assign', '__spreadArray', '__read', '__makeTemplateObject'],
      args: [{ a: 1, b: 2 }, 4, 5],
    },
    { title: 'ES2016 async: __awaiter', code: tsc(FEATURES.async, { target: ES2016 }), helpers: ['__awaiter'], args: [7] },
    {
      title: 'ES2017 async generators: __asyncGenerator, __await, __asyncValues, __asyncDelegator',
      code: tsc(FEATURES.asyncGenerator, { target: ES2017 }),
      helpers: ['__asyncGenerator', '__await', '__asyncValues', '__asyncDelegator'],
    },
    {
      title: 'ES2020 #private: __classPrivateFieldGet/Set/In',
      code: tsc(FEATURES.private, { target: ES2020 }),
      helpers: ['__classPrivateFieldGet', '__classPrivateFieldSet', '__classPrivateFieldIn'],
    },
    {
      title: 'ES2022 using: __addDisposableResource, __disposeResources',
      code: tsc(FEATURES.using, { target: ES2022 }),
      helpers: ['__addDisposableResource', '__disposeResources'],
    },
    {
      title: 'ES decorators: __esDecorate, __runInitializers',
      code: tsc(FEATURES.jsDecorators, { target: ES2022 }),
      helpers: ['__esDecorate', '__runInitializers'],
    },
    {
      title: 'experimentalDecorators: __decorate, __param, __metadata',
      code: tsc(TSC_FEATURES.tsDecorators, { target: ES2022, experimentalDecorators: true, emitDecoratorMetadata: true }),
      helpers: ['__decorate', '__param', '__metadata'],
    },
  ];
  for (const testCase of tscCases) it(testCase.title, () => expectSameResult(testCase));

  it('importHelpers + CommonJS: tslib_1 is the tslib namespace', async () => {
    const code = tsc(FEATURES.asyncGenerator, { target: ES2017, module: ts.ModuleKind.CommonJS, importHelpers: true });
    await expectSameResult({ title: '', code, helpers: ['tslib_1.__asyncGenerator', 'tslib_1.__await'] }, 'cjs');
    const { names, values } = helperBindings(load(code, 'cjs').f!.toString(), require);
    expect(values[names.indexOf('tslib_1')]).toBe(suppliedTslib);
  });

  it('importHelpers + ESM: bare names imported from tslib', () =>
    expectSameResult({ title: '', code: tsc(FEATURES.async, { target: ES2016, importHelpers: true }), helpers: ['__awaiter'], args: [1] }));
});

describe('names both toolchains define', () => {
  it('are exactly the ones disambiguated', () => {
    const shared = Object.keys(esbuildHelpers).filter((name) => name in tslib);
    expect([...SHARED_NAMES].sort()).toEqual(shared.sort());
  });

  it('tslib exports are all known', () => {
    expect([...TSLIB_NAMES].sort()).toEqual(Object.keys(tslib).sort());
  });

  it('an async generator gets its own compiler’s __await and __asyncGenerator', () => {
    const fromTsc = load(tsc(FEATURES.asyncGenerator, { target: ts.ScriptTarget.ES2017 }), 'mjs').f!.toString();
    const fromEsbuild = load(esbuild(FEATURES.asyncGenerator, { target: 'es2017' }), 'mjs').f!.toString();
    for (const name of ['__await', '__asyncGenerator']) {
      const tscSide = helperBindings(fromTsc, require);
      const esbuildSide = helperBindings(fromEsbuild, require);
      expect(tscSide.values[tscSide.names.indexOf(name)]).toBe(tslib[name]);
      expect(esbuildSide.values[esbuildSide.names.indexOf(name)]).toBe(esbuildHelpers[name]);
    }
  });

  it('__runInitializers follows the decorator helpers next to it', () => {
    const fromTsc = load(tsc(FEATURES.jsDecorators, { target: ts.ScriptTarget.ES2022 }), 'mjs').f!.toString();
    const fromEsbuild = load(esbuild(FEATURES.jsDecorators, { target: 'es2022' }), 'mjs').f!.toString();
    const pick = (source: string): unknown => {
      const { names, values } = helperBindings(source, require);
      return values[names.indexOf('__runInitializers')];
    };
    expect(pick(fromTsc)).toBe(tslib.__runInitializers);
    expect(pick(fromEsbuild)).toBe(esbuildHelpers.__runInitializers);
  });
});

describe('helperBindings', () => {
  it('binds nothing for plain source, without looking further', () => {
    expect(helperBindings('(a, b) => a + b', require)).toEqual({ names: [], values: [] });
  });

  it('leaves alone a name that is not called, and a user name that merely looks like a helper', () => {
    expect(helperBindings('() => [typeof __name, __pow, __mine(1)]', require).names).toEqual([]);
  });
});

// Runs fn rebuilt as the worker would and returns the name it missed.
async function missingName(fn: Fn, ...args: unknown[]): Promise<{ name: string; source: string }> {
  const rebuilt = rebuild(fn);
  const error = await Promise.resolve()
    .then(() => rebuilt.fn(...args))
    .then(
      () => new Error('fn ran'),
      (thrown: Error) => thrown,
    );
  expect(error).toBeInstanceOf(ReferenceError);
  return { name: /^(\S+) is not defined$/.exec(error.message)![1]!, source: rebuilt.source };
}

describe('explainToolchainName on real output', () => {
  const outerPrivate = `export class Outer { #s = 1; static peek(o: Outer) { return o.#s; } }
    export const f = (o: Outer) => Outer.peek(o);`;

  it('esbuild: the WeakMap of a #private class declared outside fn', async () => {
    const module = load(esbuild(outerPrivate, { target: 'es2020' }), 'mjs');
    const Outer = module.Outer as unknown as { new (): object; peek: Fn };
    const { name, source } = await missingName(Outer.peek, new Outer());
    expect(source).toContain(`__privateGet(o, ${name})`);
    expect(explainToolchainName(name, source)).toMatch(/Define the class inside the function or pass plain data/);
  });

  it('tsc: the WeakMap of a #private class declared outside fn', async () => {
    const module = load(tsc(outerPrivate, { target: ts.ScriptTarget.ES2020 }), 'mjs');
    const Outer = module.Outer as unknown as { new (): object; peek: Fn };
    const { name, source } = await missingName(Outer.peek, new Outer());
    expect(name).toBe('_Outer_s');
    expect(explainToolchainName(name, source)).toMatch(/Define the class inside the function/);
  });

  it('esbuild CommonJS: a top-level import used in fn (import_node_fs)', async () => {
    const code = esbuild("import { readFileSync } from 'node:fs'; export const f = () => typeof readFileSync;", {
      format: 'cjs',
      target: 'node20',
    });
    const { name, source } = await missingName(load(code, 'cjs').f!);
    expect(name).toBe('import_node_fs');
    expect(explainToolchainName(name, source)).toMatch(/Import the module inside fn.*workerModule\(\)/);
  });

  it('esbuild CommonJS: import.meta (import_meta), and tsx (define_import_meta_default)', async () => {
    const code = esbuild('export const f = () => import.meta.url;', { format: 'cjs', target: 'node20', logLevel: 'silent' });
    const { name, source } = await missingName(load(code, 'cjs').f!);
    expect(name).toBe('import_meta');
    expect(explainToolchainName(name, source)).toMatch(/import\.meta/);
    expect(explainToolchainName('define_import_meta_default', 'x => define_import_meta_default.url')).toMatch(/import\.meta/);
  });

  it('esbuild bundle: wrappers of inlined modules (require_x, init_x, x_exports)', async () => {
    writeFileSync(join(dir, 'dep.cjs'), 'module.exports = { v: 1 };');
    writeFileSync(join(dir, 'dep-esm.mjs'), 'export const w = 2; console.log("side effect");');
    const entry = join(dir, 'bundle-entry.mjs');
    writeFileSync(
      entry,
      "export const f = () => require('./dep.cjs').v;\nexport const g = () => import('./dep-esm.mjs').then((m) => m.w);",
    );
    const code = buildSync({ entryPoints: [entry], bundle: true, write: false, format: 'esm', platform: 'node' }).outputFiles[0]!.text;
    const module = load(code, 'mjs');
    const viaRequire = await missingName(module.f!);
    expect(viaRequire.name).toMatch(/^require_dep/);
    const viaImport = await missingName(module.g!);
    expect(viaImport.name).toMatch(/^init_dep_esm/);
    for (const { name, source } of [viaRequire, viaImport]) {
      expect(explainToolchainName(name, source)).toMatch(/Mark that module external/);
    }
    expect(explainToolchainName('dep_esm_exports', viaImport.source)).toMatch(/bundle plumbing/);
  });

  it('tsc CommonJS: a top-level import used in fn (node_fs_1)', async () => {
    const code = tsc("import { readFileSync } from 'node:fs';\nexport const f = () => typeof readFileSync;", {
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.CommonJS,
    });
    const { name, source } = await missingName(load(code, 'cjs').f!);
    expect(name).toBe('node_fs_1');
    expect(explainToolchainName(name, source)).toMatch(/tsc's CommonJS binding.*Import the module inside fn/);
  });

  it("minified esbuild output: a short fn calling the renamed __require (o(\"node:fs\"))", () => {
    const code = buildSync({
      stdin: { contents: "export const f = () => require('node:fs').statSync('/').ino;", loader: 'js' },
      bundle: true,
      write: false,
      format: 'esm',
      platform: 'node',
      minify: true,
    }).outputFiles[0]!.text;
    const source = load(code, 'mjs').f!.toString();
    const name = /^\(\)=>([\w$]{1,2})\("node:fs"\)/.exec(source)?.[1];
    expect(name, source).toBeDefined();
    expect(explainToolchainName(name!, source)).toMatch(/may be a compiler helper .* minifier renamed/);
  });

  it('Vite/Vitest names', () => {
    expect(explainToolchainName('__vite_ssr_import_3__', '() => __vite_ssr_import_3__.readFileSync')).toMatch(/Vite\/Vitest/);
    expect(explainToolchainName('__vi_import_0__', '() => __vi_import_0__.x')).toMatch(/Vite\/Vitest/);
    expect(explainToolchainName('__vite_ssr_import_meta__', '() => __vite_ssr_import_meta__.url')).toMatch(/import\.meta/);
  });

  it('is null for an ordinary variable, and never tells anyone to pass a helper', () => {
    expect(explainToolchainName('config', '() => config.port')).toBeNull();
    expect(explainToolchainName('init_db', '() => init_db(pool)')).toBeNull();
    expect(explainToolchainName('x', '(a) => x(a)')).toBeNull();
    expect(explainToolchainName('__toCommonJS', '() => (init_x(), __toCommonJS(x_exports))')).not.toMatch(/argument/);
  });
});
