// Which compiler helpers a function's source calls, and the values to give
// it for them. A token scan, not a parse: binding a name the source does not
// really use is harmless, and a declaration of the same name inside fn shadows
// the parameter, so only speed matters here (this runs for every new fn).
import { esbuildHelpers } from './esbuild.js';
import { isTslibsHere, SHARED_NAMES } from './shared-names.js';
import { TSLIB_NAMES, TSLIB_NAMESPACE, tslib } from './tslib.js';

export interface HelperBindings {
  names: string[];
  values: unknown[];
}

// Identifiers starting with `__`, and tsc's tslib namespace variables.
const HELPER_TOKEN = /(?<![\w$])(?:__[\w$]+|tslib_\d+)(?![\w$])/g;

// A tagged template's object is cached in a variable the compiler declares at
// module scope: `_a || (_a = __template(...))` (esbuild) or `templateObject_1
// || (templateObject_1 = __makeTemplateObject(...))` (tsc). A fresh variable
// per rebuilt fn keeps the spec's once-per-site identity.
const TEMPLATE_CACHE =
  /(?<![\w$.])([\w$]+)\s*\|\|\s*\(\s*\1\s*=\s*(?:tslib_\d+\s*\.\s*)?(?:__template|__makeTemplateObject)\d*\s*\(/g;

function isCalled(source: string, token: string): boolean {
  for (let at = source.indexOf(token); at >= 0; at = source.indexOf(token, at + 1)) {
    if (at > 0 && /[\w$]/.test(source[at - 1]!)) continue;
    if (/^\s*\(/.test(source.slice(at + token.length, at + token.length + 20))) return true;
  }
  return false;
}

function helperValue(name: string, source: string, require: NodeJS.Require): unknown {
  if (name === '__require') return require;
  const fromTslib = SHARED_NAMES.includes(name) ? isTslibsHere(name, source) : !(name in esbuildHelpers);
  return fromTslib ? tslib[name] : esbuildHelpers[name];
}

const isHelper = (name: string): boolean => name === '__require' || name in esbuildHelpers || TSLIB_NAMES.has(name);

function hasCalledRename(name: string, tokens: ReadonlySet<string>, source: string): boolean {
  for (const other of tokens) {
    if (other.startsWith(name) && /^\d+$/.test(other.slice(name.length)) && isCalled(source, other)) return true;
  }
  return false;
}

// The helper a token names: itself, or with a numeric suffix a bundler added
// because the name was taken (`__name2`). Compiled code only ever calls a
// helper, so a token that is not called is the user's (`typeof __name`), and
// so is a bare name whose suffixed form is the called helper.
function helperFor(token: string, tokens: ReadonlySet<string>, source: string): string | undefined {
  if (!isCalled(source, token)) return undefined;
  if (isHelper(token)) return hasCalledRename(token, tokens, source) ? undefined : token;
  const base = /^(__\D[\w$]*?)\d+$/.exec(token)?.[1];
  return base !== undefined && isHelper(base) ? base : undefined;
}

/**
 * The extra parameters for `new Function(...names, 'return (' + source + ')')`
 * that supply the compiler helpers `source` calls; `require` is the one the
 * rebuilt fn gets, and backs esbuild's `__require`.
 */
export function helperBindings(source: string, require: NodeJS.Require): HelperBindings {
  const names: string[] = [];
  const values: unknown[] = [];
  if (!source.includes('__') && !source.includes('tslib')) return { names, values };
  const tokens = new Set(source.match(HELPER_TOKEN));
  for (const token of tokens) {
    if (TSLIB_NAMESPACE.test(token)) {
      names.push(token);
      values.push(tslib);
      continue;
    }
    const helper = helperFor(token, tokens, source);
    if (helper === undefined) continue;
    names.push(token);
    values.push(helperValue(helper, source, require));
  }
  for (const [, cache] of source.matchAll(TEMPLATE_CACHE)) {
    if (names.includes(cache!)) continue;
    names.push(cache!);
    values.push(undefined);
  }
  return { names, values };
}
