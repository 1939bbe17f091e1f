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
});
