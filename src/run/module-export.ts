// The worker's side of workerModule(): each module is imported once per
// thread, at home, before any task of it runs, and its export is then called
// like any fn. A failed import is not kept, so a module fixed on disk loads
// on the next call.
import { ErrorCodes, netnsError } from '../core/errors.js';

type ExportSpec = { module: string; exportName: string };
type Callable = (...args: unknown[]) => unknown;

const imported = new Map<string, Promise<Record<string, unknown>>>();

function importOnce(href: string): Promise<Record<string, unknown>> {
  let loading = imported.get(href);
  if (!loading) {
    loading = import(href) as Promise<Record<string, unknown>>;
    imported.set(href, loading);
    loading.catch(() => imported.delete(href));
  }
  return loading;
}

export async function loadExport({ module, exportName }: ExportSpec): Promise<Callable> {
  const namespace = await importOnce(module);
  const exported = namespace[exportName];
  if (typeof exported === 'function') return exported as Callable;
  const functions = Object.keys(namespace).filter((name) => typeof namespace[name] === 'function');
  throw netnsError(
    ErrorCodes.INVALID_ARG,
    `${module} has no function export named ${JSON.stringify(exportName)}` +
      (exported === undefined ? '' : ` (it is ${typeof exported})`) +
      `; its function exports: ${functions.length > 0 ? functions.join(', ') : 'none'}`,
  );
}
