// Names a toolchain writes into a function body that no helper can supply:
// they stand for state of the module fn was compiled in (bundle wrappers,
// import bindings, a class's private storage, test-runner plumbing). A
// ReferenceError for one of them should say what it is and which setting or
// form avoids it; telling the user to pass it as an argument would be wrong.

const MODULE_FORM = 'or use the module form, workerModule(), which works with every toolchain';

// Whether `name` is called with no arguments, as esbuild calls its wrappers.
function calledBare(name: string, source: string): boolean {
  return source.includes(`${name}()`);
}

// esbuild's bundle plumbing: it calls these at module scope, or in fn next to
// a module-scope wrapper (`(init_x(), __toCommonJS(x_exports))`).
const BUNDLE_PLUMBING = new Set([
  '__toCommonJS',
  '__export',
  '__reExport',
  '__esm',
  '__esmMin',
  '__commonJS',
  '__commonJSMin',
  '__glob',
  '__toBinary',
  '__toBinaryNode',
]);

function bundleWrapper(name: string, source: string): string | null {
  const inlined =
    `${name} is esbuild's bundle plumbing for a module the bundle inlined (fn require()s or import()s ` +
    'a file that esbuild bundled), and it lives in the bundle\'s module scope. Mark that module external ' +
    '(esbuild `external` / `packages: "external"`) so that fn loads it when it runs, ' +
    MODULE_FORM;
  if (BUNDLE_PLUMBING.has(name)) return inlined;
  if (/^(?:require|init)_[\w$]+$/.test(name) && calledBare(name, source)) return inlined;
  if (/^glob(?:Require|Import)_[\w$]+$/.test(name)) return inlined;
  const exported = /^([\w$]+)_exports\d*$/.exec(name);
  if (exported && (source.includes(`init_${exported[1]}`) || /__toCommonJS\d*\s*\(/.test(source))) return inlined;
  return null;
}

function importMeta(name: string): string | null {
  if (name !== 'import_meta' && name !== 'define_import_meta_default' && name !== '__vite_ssr_import_meta__') return null;
  return (
    `${name} is how the compiler spelled import.meta of fn's module; fn runs as a plain function, where ` +
    'import.meta does not exist. Read what you need (import.meta.url, ...) outside fn and pass that ' +
    `string as an argument, ${MODULE_FORM}`
  );
}

// `import { readFileSync } from 'node:fs'` in CommonJS output: esbuild writes
// `var import_node_fs = require("node:fs")`, tsc `const node_fs_1 = require("node:fs")`;
// fn then uses `import_node_fs.readFileSync` or `(0, node_fs_1.readFileSync)`.
const IMPORT_BINDINGS: [RegExp, string][] = [
  [/^import_[\w$]+$/, 'esbuild'],
  [/^[\w$]+_\d+$/, 'tsc'],
];

function importBinding(name: string, source: string): string | null {
  const compiler = IMPORT_BINDINGS.find(([pattern]) => pattern.test(name))?.[1];
  if (!compiler || !new RegExp(`(?<![\\w$])${name.replace(/\$/g, '\\$')}\\s*\\.`).test(source)) return null;
  return (
    `${name} is ${compiler}'s CommonJS binding of a module that fn's file imports at the top; it lives in ` +
    "that file's module scope. Import the module inside fn (require('node:fs') or await import('node:fs')), " +
    MODULE_FORM
  );
}

function viteName(name: string): string | null {
  if (!/^__(?:vite_ssr|vi)_\w+__$/.test(name)) return null;
  return (
    `${name} is how Vite/Vitest rewrote an import (or export) of fn's file; it is per-module state of ` +
    "the test runner. Import inside fn (await import('node:fs')), " +
    MODULE_FORM
  );
}

// The argument lists of private-member helper calls, where esbuild and tsc
// pass the WeakMap/WeakSet that holds a class's #private state.
const PRIVATE_CALL = /(?<![\w$])(?:__private(?:Add|Get|Set|Method|In|Wrapper)|__classPrivateField(?:Get|Set|In))\d*\s*\(/g;

function argumentsAt(source: string, open: number): string {
  let depth = 0;
  for (let at = open; at < source.length; at++) {
    const char = source[at];
    if (char === '(') depth++;
    // Stryker disable next-line EqualityOperator: depth starts at 1 on the opening parenthesis and falls one at a time: it is 0 before it could be less
    else if (char === ')' && --depth === 0) return source.slice(open + 1, at);
  }
  return source.slice(open + 1);
}

function privateState(name: string, source: string): string | null {
  const token = new RegExp(`(?<![\\w$])${name.replace(/\$/g, '\\$')}(?![\\w$])`);
  for (const call of source.matchAll(PRIVATE_CALL)) {
    if (!token.test(argumentsAt(source, call.index + call[0].length - 1))) continue;
    return (
      `${name} holds the #private state of a class declared outside fn: the compiler turned its #private ` +
      'members into a WeakMap/WeakSet in that module, which fn cannot reach from another thread. Define ' +
      'the class inside the function or pass plain data'
    );
  }
  return null;
}

// A minifier renames helpers (and everything else) to one or two letters.
// Some call shapes only compiled helpers take (async bodies, keepNames,
// object spread) make it certain; in other one-line code it is likely.
const MINIFIED_LENGTH = 200;

function minifiedHelper(name: string, source: string): string | null {
  if (!/^[\w$]{1,2}$/.test(name) || source.includes('\n')) return null;
  const callee = `(?<![\\w$.])${name.replace(/\$/g, '\\$')}\\(`;
  const shapes = [
    `${callee}(?:this|[\\w$]+),(?:null|arguments|void 0),(?:void 0,(?:void 0,)?)?function\\*`,
    `${callee}[\\w$]+,"[^"]*"\\)`,
    `${callee}(?:[\\w$]{1,2}\\()?\\{\\},`,
  ];
  const certain = shapes.some((shape) => new RegExp(shape).test(source));
  // esbuild's __require, renamed: `o("node:fs")`; a short one-liner otherwise is as likely the user's own.
  const likely = certain || source.length >= MINIFIED_LENGTH || new RegExp(`${callee}"[^"]*"\\)`).test(source);
  if (!likely) return null;
  return (
    `${name} ${certain ? 'is' : 'may be'} a compiler helper or a module variable that a minifier renamed (fn's ` +
    'source is minified), which cannot be supplied under that name. Do not minify the code that calls ' +
    `withNetNS (esbuild: no minify / minifyIdentifiers), ${MODULE_FORM}` +
    (certain ? '' : `; if ${name} is your own variable, pass it as an argument`)
  );
}

const EXPLAINERS = [bundleWrapper, importMeta, importBinding, viteName, privateState, minifiedHelper];

/**
 * For the name in a ReferenceError raised by fn: what the toolchain made it
 * for and how to avoid it, or null when it looks like the user's own variable.
 */
export function explainToolchainName(name: string, source: string): string | null {
  for (const explain of EXPLAINERS) {
    const text = explain(name, source);
    if (text !== null) return text;
  }
  return null;
}
