// The module form of withNetNS: a named export of a module file, which each
// pool thread imports once (outside any namespace) and then calls again and
// again. Nothing travels as source text, so whatever a compiler or bundler
// did to the module, and whatever state it keeps at its top level, holds.
import { isAbsolute } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ErrorCodes, netnsError } from '../core/errors.js';
import type { FnSpec } from './wire.js';

declare const exportType: unique symbol;

/** One export of a worker module, to pass to withNetNS in place of fn. */
export interface ModuleExport<A extends unknown[] = unknown[], R = unknown> {
  /** The module's URL, as the worker imports it. */
  readonly module: string;
  /** The name of the function export each pool thread calls. */
  readonly exportName: string;
  /** Carries the export's type for withNetNS; never set. */
  readonly [exportType]?: (...args: A) => R;
}

/**
 * Any function: never[] parameters accept a function of any arguments.
 * @inline
 */
type Callable = (...args: never[]) => unknown;
/**
 * Without the module's type, any arguments are allowed (never[] would allow none).
 * @inline
 */
type AnyExports = Record<string, (...args: any[]) => unknown>;

/** The function exports of module type `M` (e.g. `typeof import('./work.js')`). */
export type WorkerModule<M> = {
  readonly [K in keyof M as K extends string ? (M[K] extends Callable ? K : never) : never]: M[K] extends (
    ...args: infer A
  ) => infer R
    ? ModuleExport<A, R>
    : never;
};

/**
 * Names a module whose exports withNetNS can run: `module` is a URL (`new
 * URL('./work.js', import.meta.url)`), a file: URL string, or an absolute
 * path. Give the module's type to check the arguments of each call:
 * `workerModule<typeof import('./work.js')>(url)`.
 */
export function workerModule<M = AnyExports>(module: URL | string): WorkerModule<M> {
  const href = moduleHref(module);
  const exports = new Map<string, ModuleExport>();
  return new Proxy(Object.create(null) as WorkerModule<M>, {
    get(_target, name) {
      // Not a thenable: awaiting the module object must not call an export named then.
      if (typeof name !== 'string' || name === 'then') return undefined;
      let found = exports.get(name);
      if (!found) {
        found = Object.freeze({ module: href, exportName: name });
        exports.set(name, found);
      }
      return found;
    },
  });
}

function moduleHref(module: unknown): string {
  if (module instanceof URL) return checkedFileUrl(module.href);
  if (typeof module !== 'string' || module === '') {
    throw netnsError(ErrorCodes.INVALID_ARG, 'module must be a URL, a file: URL string or an absolute path');
  }
  // Node drops some control characters from paths and URLs: another file would load.
  if (/[\u0000-\u001f\u007f]/.test(module)) {
    throw netnsError(ErrorCodes.INVALID_ARG, `module must not contain control characters, got ${JSON.stringify(module)}`);
  }
  if (module.startsWith('file:')) return checkedFileUrl(module);
  if (!isAbsolute(module)) {
    throw netnsError(
      ErrorCodes.INVALID_ARG,
      `module must be an absolute path or a URL, got ${JSON.stringify(module)}: ` +
        "name it relative to your file with new URL('./work.js', import.meta.url)",
    );
  }
  return pathToFileURL(module).href;
}

function checkedFileUrl(href: string): string {
  let url: URL;
  try {
    url = new URL(href);
  } catch {
    throw netnsError(ErrorCodes.INVALID_ARG, `module is not a valid URL: ${JSON.stringify(href)}`);
  }
  if (url.protocol !== 'file:') throw netnsError(ErrorCodes.INVALID_ARG, `module must be a file: URL, got ${url.protocol}`);
  return url.href;
}

/** The export as the worker gets it; a look-alike object is checked as workerModule() would. */
export function checkedModuleExport(fn: ModuleExport): FnSpec {
  const { module, exportName } = fn; // read once: a getter may answer differently each time
  if (typeof module !== 'string' || typeof exportName !== 'string') {
    throw netnsError(ErrorCodes.INVALID_ARG, 'a module export needs a string module and exportName');
  }
  return { module: checkedFileUrl(module), exportName };
}

/** Whether withNetNS was given a module export instead of fn. */
export function isModuleExport(value: unknown): value is ModuleExport {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as ModuleExport).module === 'string' &&
    typeof (value as ModuleExport).exportName === 'string'
  );
}
