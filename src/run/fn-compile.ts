// Turns fn's source text back into a function, in the pool worker that runs
// it (fn-source.ts made the text on the calling side).
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import vm from 'node:vm';
import { pathToFileURL } from 'node:url';
import { explainToolchainName, helperBindings } from './compiler-helpers/index.js';

// Method shorthand (`run() {}`) is not an expression on its own.
function asExpression(source: string): string {
  return /^(async\s+)?(\*\s*)?[\p{L}_$][\p{L}\p{N}_$]*\s*\(/u.test(source) &&
    !/^(async\s+)?function\b/.test(source) &&
    !/^async\s*\(/.test(source)
    ? source.replace(/^(async\s+)?/, (m) => `${m}function `)
    : source;
}

// Test runners built on Vite rewrite `import()` in the caller's source to this
// helper; providing it lets fn written in a vitest test use import() too.
const VITEST_DYNAMIC_IMPORT = '__vite_ssr_dynamic_import__';

function resolveForImport(require: NodeJS.Require, specifier: string): string {
  if (specifier.startsWith('node:') || specifier.startsWith('file:')) return specifier;
  // Vite hands over ids it resolved itself, relative to its root (the cwd).
  if (specifier.startsWith('/') && !existsSync(specifier)) specifier = join(process.cwd(), specifier);
  return pathToFileURL(require.resolve(specifier)).href;
}

// Node 20 and 22 call the loader option experimental and warn once per
// thread when fn first uses import(); the warning names our choice, not the
// user's, so this thread drops that one warning and passes on all others.
const LOADER_WARNING = 'vm.USE_MAIN_CONTEXT_DEFAULT_LOADER';
let loaderWarningMuted = false;

function muteLoaderWarning(): void {
  if (loaderWarningMuted) return;
  loaderWarningMuted = true;
  const emitWarning = process.emitWarning;
  process.emitWarning = function (warning: string | Error, ...rest: unknown[]) {
    const text = typeof warning === 'string' ? warning : warning?.message;
    if (typeof text === 'string' && text.startsWith(LOADER_WARNING)) return;
    return (emitWarning as (...args: unknown[]) => void).call(process, warning, ...rest);
  } as typeof process.emitWarning;
}

const MAX_CACHED = 1000;
const compiled = new Map<string, (...args: unknown[]) => unknown>();

/**
 * Rebuilds fn in this thread, with `require` and `import()` resolving from
 * `caller`, and the compiler helpers its text calls supplied. The function is named after the caller's file with a marker, so
 * stack traces say where fn came from, while source maps of that file (whose
 * lines are not fn's) are not applied to it.
 */
export function compileFunction(source: string, caller: string | null): (...args: unknown[]) => unknown {
  const key = `${caller ?? ''}\0${source}`;
  const hit = compiled.get(key);
  if (hit) return hit;
  muteLoaderWarning();
  const require = createRequire(caller ?? `${process.cwd()}/`);
  const dynamicImport = (specifier: string) => import(resolveForImport(require, specifier));
  const helpers = helperBindings(source, require);
  const factory = vm.compileFunction(`return (${asExpression(source)});`, ['require', VITEST_DYNAMIC_IMPORT, ...helpers.names], {
    filename: `${pathToFileURL(caller ?? `${process.cwd()}/[withNetNS fn]`).href}?netns-fn`,
    importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  });
  const fn = factory(require, dynamicImport, ...helpers.values) as (...args: unknown[]) => unknown;
  // Stryker disable next-line ConditionalExpression,EqualityOperator: when the cache starts over changes memory, never what a call runs
  if (compiled.size >= MAX_CACHED) compiled.clear();
  compiled.set(key, fn);
  return fn;
}

/**
 * Says why a free variable is missing, since the message alone misleads: a
 * name a compiler made gets what it is and which setting avoids it; any other
 * is a variable of fn's enclosing scope, which fn never sees.
 */
export function explainReferenceError(error: unknown, source: string): unknown {
  if (!(error instanceof ReferenceError)) return error;
  const match = /^(\S+) is not defined$/.exec(error.message);
  if (!match) return error;
  const name = match[1]!;
  const madeByToolchain = explainToolchainName(name, source);
  error.message = madeByToolchain
    ? `${name} is not defined: withNetNS sends fn to a worker thread as source text. ${madeByToolchain}.`
    : `${name} is not defined: withNetNS sends fn to a worker thread as source text, so fn cannot ` +
      `see variables of its enclosing scope. Pass ${name} as an argument instead: ` +
      `withNetNS(target, (${name}) => ..., ${name}), use require()/import() inside fn, or run a module's ` +
      'export with workerModule().';
  return error;
}

/**
 * A fn whose text does not compile on its own: a method with a computed,
 * quoted or escaped name, a getter, or code naming an outer class's `#x`.
 */
export function explainedSyntaxError(error: unknown): unknown {
  if (!(error instanceof SyntaxError)) return error;
  error.message =
    `fn's source text does not compile on its own (${error.message}). withNetNS sends fn as text: pass an ` +
    'arrow function or a function expression, define any class whose #private members fn uses inside fn, ' +
    'or run a module export with workerModule().';
  return error;
}
