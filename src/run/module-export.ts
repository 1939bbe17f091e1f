// The worker's side of workerModule(): each module is imported once per
// thread (see importThenRun in worker.ts for when), and its export is then
// called like any fn.
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { ErrorCodes, fromNodeError, netnsError } from '../core/errors.js';

type Namespace = Record<string, unknown>;
type Callable = (...args: unknown[]) => unknown;

const imported = new Map<string, Promise<Namespace>>();

/**
 * On Node 20 a loader such as tsx registers its import hooks on the main
 * thread only, while its require hook reaches worker threads too: a module
 * of a kind only the loader knows (`.ts`) is required instead (which loads
 * ES modules as well, from Node 20.19).
 */
async function importOrRequire(href: string): Promise<Namespace> {
  try {
    return (await import(href)) as Namespace;
  } catch (error) {
    if ((error as { code?: unknown } | null)?.code !== 'ERR_UNKNOWN_FILE_EXTENSION') throw error;
    return createRequire(href)(fileURLToPath(href)) as Namespace;
  }
}

export function importModule(href: string): Promise<Namespace> {
  let loading = imported.get(href);
  if (!loading) {
    loading = importOrRequire(href);
    imported.set(href, loading);
  }
  return loading;
}

/** Codes of Node's module loaders refusing a module (rather than its code throwing). */
const LOADER_CODES = new Set([
  'ERR_MODULE_NOT_FOUND',
  'MODULE_NOT_FOUND',
  'ERR_UNKNOWN_FILE_EXTENSION',
  'ERR_UNKNOWN_MODULE_FORMAT',
  'ERR_UNSUPPORTED_DIR_IMPORT',
  'ERR_UNSUPPORTED_ESM_URL_SCHEME',
  'ERR_INVALID_MODULE_SPECIFIER',
  'ERR_INVALID_PACKAGE_CONFIG',
  'ERR_INVALID_PACKAGE_TARGET',
  'ERR_PACKAGE_PATH_NOT_EXPORTED',
  'ERR_PACKAGE_IMPORT_NOT_DEFINED',
  'ERR_REQUIRE_ESM',
]);

// Node's refusal: a loader code, or a system error about the module's own file (EACCES reading it).
function loaderRefusal(href: string, error: Error & { code?: unknown; path?: unknown }): boolean {
  if (typeof error.code !== 'string') return false;
  if (LOADER_CODES.has(error.code)) return true;
  return error.code.startsWith('E') && !error.code.startsWith('ERR_') && href.startsWith('file:') && error.path === fileURLToPath(href);
}

/**
 * What a failed import rejects withNetNS with. Node's own refusals (a module
 * not found, an unknown extension, a module file it cannot read) become a
 * NetnsError keeping Node's code (require's MODULE_NOT_FOUND read as import's
 * ERR_MODULE_NOT_FOUND, so both loaders say the same), Node's error as cause.
 * Anything else is the module's own code throwing (or not parsing), coded or
 * not, and passes through as fn's errors do.
 */
export function importFailure(href: string, error: unknown): unknown {
  if (!(error instanceof Error) || !loaderRefusal(href, error)) return error;
  const { code } = error as Error & { code: string };
  const wrapped = fromNodeError(error, `(importing worker module ${href})`);
  if (code === 'MODULE_NOT_FOUND') Object.defineProperty(wrapped, 'code', { value: 'ERR_MODULE_NOT_FOUND' });
  return wrapped;
}

// `module.exports = { run: () => ... }` gives Node no named export to find:
// its functions are properties of the default export.
function exported(namespace: Namespace, name: string): unknown {
  if (Object.hasOwn(namespace, name)) return namespace[name];
  const commonJs = namespace.default;
  // Own properties only: Object.prototype's methods are no module's exports.
  return typeof commonJs === 'object' && commonJs !== null && Object.hasOwn(commonJs, name) ? (commonJs as Namespace)[name] : undefined;
}

function functionNames(namespace: Namespace): string[] {
  const commonJs = namespace.default;
  const holders = [namespace, typeof commonJs === 'object' && commonJs !== null ? (commonJs as Namespace) : {}];
  return [...new Set(holders.flatMap((holder) => Object.keys(holder).filter((key) => typeof holder[key] === 'function')))];
}

/** The export withNetNS calls; ERR_NETNS_INVALID_ARG naming the module's functions when it is not one. */
export function exportOf(namespace: Namespace, { module, exportName }: { module: string; exportName: string }): Callable {
  const value = exported(namespace, exportName);
  if (typeof value === 'function') return value as Callable;
  const functions = functionNames(namespace);
  throw netnsError(
    ErrorCodes.INVALID_ARG,
    `${module} has no function export named ${JSON.stringify(exportName)}` +
      (value === undefined ? '' : ` (it is ${typeof value})`) +
      `; its function exports: ${functions.length > 0 ? functions.join(', ') : 'none'}`,
  );
}
