// `fn` travels to the worker as source text. These helpers turn a function
// into sendable text on the calling side; fn-compile.ts turns it back into a
// function in the worker (apart, so that the caller never loads the compiler).
import { isAbsolute } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fs } from '../core/builtins.js';
import { ErrorCodes, netnsError } from '../core/errors.js';

export function functionSource(fn: unknown): string {
  if (typeof fn !== 'function') {
    throw netnsError(ErrorCodes.INVALID_ARG, `fn must be a function, got ${typeof fn}`);
  }
  const source = Function.prototype.toString.call(fn);
  if (source.endsWith('{ [native code] }')) {
    throw netnsError(
      ErrorCodes.INVALID_ARG,
      'fn must be written in JavaScript (a bound or built-in function has no source to send)',
    );
  }
  if (source.startsWith('class')) throw netnsError(ErrorCodes.INVALID_ARG, 'fn must be a function, not a class');
  return source;
}

// Code from `node -e`/`-p` and the REPL ([eval], /[eval1], REPL2) has no file:
// fn then resolves from the cwd, as node does there. Remembered per name, since
// callerFile runs on every call whose fn uses require or import.
const MAX_CALLER_NAMES = 1000;
const sourceFiles = new Map<string, boolean>();

function isSourceFile(path: string): boolean {
  let known = sourceFiles.get(path);
  // Stryker disable next-line ConditionalExpression: a cache; looking again gives the same answer
  if (known === undefined) {
    known = isAbsolute(path) && fs().existsSync(path);
    // Stryker disable next-line ConditionalExpression,EqualityOperator: when the cache starts over changes memory, never an answer
    if (sourceFiles.size >= MAX_CALLER_NAMES) sourceFiles.clear(); // a REPL names each line anew
    sourceFiles.set(path, known);
  }
  return known;
}

/**
 * The file that called `entry` (withNetNS), so that `require` inside fn
 * resolves like the caller's own module. Found by function, not by path: in a
 * bundle, this package's code shares the caller's file. Skipped when fn never
 * mentions require or import: capturing a stack costs more than the rest of a call.
 */
export function callerFile(source: string, entry: (...args: never[]) => unknown): string | null {
  if (!source.includes('require') && !source.includes('import')) return null;
  const saved = Error.prepareStackTrace;
  const savedLimit = Error.stackTraceLimit;
  try {
    Error.stackTraceLimit = 20;
    Error.prepareStackTrace = (_error, sites) => sites;
  } catch {
    return null; // --frozen-intrinsics: Error cannot be changed, so fn resolves from the cwd
  }
  try {
    const holder: { stack?: NodeJS.CallSite[] } = {};
    Error.captureStackTrace(holder, entry);
    for (const site of holder.stack ?? []) {
      const file = site.getFileName();
      if (!file || file.startsWith('node:')) continue;
      const path = file.startsWith('file:') ? fileURLToPath(file) : file;
      return isSourceFile(path) ? path : null;
    }
    return null;
  } finally {
    Error.prepareStackTrace = saved;
    Error.stackTraceLimit = savedLimit;
  }
}
