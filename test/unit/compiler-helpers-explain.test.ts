// Which missing names withNetNS blames on a toolchain, and which it leaves to
// the user as their own variable: the rules one by one, on hand-written text
// (compiler-helpers.test.ts checks them on real compiler output). A name
// wrongly blamed sends a user after a compiler setting for a variable they
// should have passed as an argument.
import { describe, expect, it } from 'vitest';
import { explainToolchainName } from '../../dist/run/compiler-helpers/index.js';

describe('explainToolchainName, rule by rule', () => {
  it('calls esbuild’s module plumbing by its names, and a bare call of init_/require_ only', () => {
    expect(explainToolchainName('globRequire_src', '() => globRequire_src("./x")')).toMatch(/esbuild's bundle plumbing/);
    expect(explainToolchainName('init_config', '() => (init_config(), config)')).toMatch(/esbuild's bundle plumbing/);
    expect(explainToolchainName('helper', '() => helper()')).toBeNull(); // called bare, but any user's name
  });

  it('blames a module’s *_exports on esbuild when fn inits that module or converts it to CommonJS', () => {
    expect(explainToolchainName('util_exports', '() => (init_util(), util_exports)')).toMatch(/esbuild's bundle plumbing/);
    expect(explainToolchainName('util_exports', '() => __toCommonJS(util_exports)')).toMatch(/esbuild's bundle plumbing/);
    expect(explainToolchainName('util_exports', '() => util_exports.x')).toBeNull();
  });

  it('names an import binding’s compiler only where fn reads a property of it', () => {
    expect(explainToolchainName('import_node_fs', '() => import_node_fs.readFileSync("/x")')).toMatch(/^import_node_fs is esbuild's CommonJS binding/);
    expect(explainToolchainName('fs_1', '() => fs_1 . readFileSync("/x")')).toMatch(/^fs_1 is tsc's CommonJS binding/);
    expect(explainToolchainName('import_node_fs', '() => typeof import_node_fs')).toBeNull();
    expect(explainToolchainName('my_import_node_fs', '() => my_import_node_fs.x')).toBeNull();
  });

  it('blames #private state only on a name passed to a private-field helper', () => {
    const source = '(o) => __privateGet(o, _count) + other';
    expect(explainToolchainName('_count', source)).toMatch(/#private state of a class declared outside fn/);
    expect(explainToolchainName('other', source)).toBeNull();
    expect(explainToolchainName('_count', '(o) => __privateGet(o, (0, _count)')).toMatch(/#private state/); // text cut short
  });

  it('suspects a minifier only in one-line text, and is sure only of a helper’s shape', () => {
    const padded = (text: string, length: number): string => `() => {${' '.repeat(length - text.length - 8)}${text}}`;
    const certain = explainToolchainName('e', '()=>e(this,null,function*(){return 1})')!;
    expect(certain).toMatch(/^e is a compiler helper/);
    expect(certain).not.toContain('if e is your own variable');
    expect(explainToolchainName('e', padded('e(1)', 200))).toMatch(/^e may be a compiler helper .*; if e is your own variable, pass it as an argument$/);
    expect(explainToolchainName('e', padded('e(1)', 199))).toBeNull();
    expect(explainToolchainName('e', `${padded('e(1)', 300)}\n`)).toBeNull(); // lines: not minified
  });

  it('blames only the whole name of a toolchain’s pattern, not one that ends like it', () => {
    expect(explainToolchainName('myinit_x', '() => myinit_x()')).toBeNull();
    expect(explainToolchainName('myglobRequire_x', '() => myglobRequire_x')).toBeNull();
    expect(explainToolchainName('my__vi_import_0__', '() => my__vi_import_0__')).toBeNull();
    expect(explainToolchainName('__vi_import_0__x', '() => __vi_import_0__x')).toBeNull();
    const long = `() => {${' '.repeat(300)}abc(1); ab(2)}`;
    expect(explainToolchainName('abc', long)).toBeNull(); // three letters: not a minifier's name
    expect(explainToolchainName('ab', long)).toMatch(/^ab may be a compiler helper/);
  });

  it('reads a private-field helper’s own arguments, nested calls included, and nothing before them', () => {
    expect(explainToolchainName('_a', '(o) => __privateGet(o, f(x), _a)')).toMatch(/#private state/);
    expect(explainToolchainName('_a', '(_a) => __privateGet(o, x')).toBeNull();
  });

  it('says what to do, whole', () => {
    const form = 'or use the module form, workerModule(), which works with every toolchain';
    expect(explainToolchainName('__toCommonJS', '() => __toCommonJS(x)')).toBe(
      "__toCommonJS is esbuild's bundle plumbing for a module the bundle inlined (fn require()s or import()s a file that esbuild bundled), " +
        "and it lives in the bundle's module scope. Mark that module external (esbuild `external` / `packages: \"external\"`) so that fn loads it when it runs, " +
        form,
    );
    expect(explainToolchainName('import_meta', '() => import_meta.url')).toBe(
      "import_meta is how the compiler spelled import.meta of fn's module; fn runs as a plain function, where import.meta does not exist. " +
        `Read what you need (import.meta.url, ...) outside fn and pass that string as an argument, ${form}`,
    );
    expect(explainToolchainName('fs_1', '() => fs_1.readFileSync')).toBe(
      "fs_1 is tsc's CommonJS binding of a module that fn's file imports at the top; it lives in that file's module scope. " +
        `Import the module inside fn (require('node:fs') or await import('node:fs')), ${form}`,
    );
    expect(explainToolchainName('__vi_import_0__', '() => __vi_import_0__.x')).toBe(
      "__vi_import_0__ is how Vite/Vitest rewrote an import (or export) of fn's file; it is per-module state of the test runner. " +
        `Import inside fn (await import('node:fs')), ${form}`,
    );
    expect(explainToolchainName('_s', '(o) => __privateGet(o, _s)')).toBe(
      '_s holds the #private state of a class declared outside fn: the compiler turned its #private members into a WeakMap/WeakSet ' +
        'in that module, which fn cannot reach from another thread. Define the class inside the function or pass plain data',
    );
    expect(explainToolchainName('e', '()=>e(this,null,function*(){return 1})')).toBe(
      "e is a compiler helper or a module variable that a minifier renamed (fn's source is minified), which cannot be supplied under that name. " +
        `Do not minify the code that calls withNetNS (esbuild: no minify / minifyIdentifiers), ${form}`,
    );
  });
});
