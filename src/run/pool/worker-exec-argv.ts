// The node options a pool worker gets: the caller's loaders and conditions
// (`--import tsx`, `-r`, `--loader`, `-C`), so that fn can import what its
// caller can, but not the options that only mean something to the main script
// or to the whole process.
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Worker, WorkerOptions } from 'node:worker_threads';
import { workerThreads } from '../../core/builtins.js';
import { absoluteRuntimeVariables } from '../../core/runtime-files.js';

// Options about the main script, which Node would apply to the worker's own
// entry (--input-type makes it refuse to load a file) or which mean nothing
// there: `node -e code` puts the code itself in execArgv, as the next element.
const SCRIPT_OPTIONS = new Set(['--input-type', '-e', '--eval', '-p', '--print', '-pe', '-c', '--check', '-i', '--interactive']);
const SCRIPT_OPTIONS_WITH_VALUE = new Set(['--input-type', '-e', '--eval', '-p', '--print', '-pe']);
// The test runner's and watch mode's options: a worker is neither.
const RUNNER_OPTION = /^--(test|experimental-test|watch)(-|$)/;
const RUNNER_OPTIONS_WITH_VALUE = new Set([
  '--test-reporter',
  '--test-reporter-destination',
  '--test-name-pattern',
  '--test-skip-pattern',
  '--test-concurrency',
  '--test-timeout',
  '--test-shard',
  '--test-coverage-include',
  '--test-coverage-exclude',
  '--test-coverage-branches',
  '--test-coverage-functions',
  '--test-coverage-lines',
  '--watch-path',
]);
// A pool thread stopped at its first line would hold every call sent to it
// until someone resumes it in a debugger; the caller's own breakpoints in fn still work.
const BREAK_OPTION = /^--inspect-(brk|brk-node|wait)(=|$)/;

const INVALID_EXEC_ARGV = 'ERR_WORKER_INVALID_EXEC_ARGV';
const REFUSED_LIST = /invalid execArgv flags: (.*)$/;

let accepted: string[] | undefined;

// Loaders the caller named by a relative path were found from the directory
// the program started in; a pool thread starts later, maybe after a chdir.
const startDir = process.cwd();
const LOADERS_BY_PATH = new Set(['-r', '--require']);
const LOADERS_BY_URL = new Set(['--import', '--loader', '--experimental-loader']);

function anchoredLoader(name: string, value: string): string {
  if (!value.startsWith('./') && !value.startsWith('../')) return value;
  if (LOADERS_BY_PATH.has(name)) return resolve(startDir, value);
  return LOADERS_BY_URL.has(name) ? pathToFileURL(resolve(startDir, value)).href : value;
}

/** `execArgv` without the main script's, the test runner's and the break-at-start options. */
export function workerExecArgv(execArgv: readonly string[] = process.execArgv): string[] {
  const kept: string[] = [];
  for (let i = 0; i < execArgv.length; i++) {
    const option = execArgv[i]!;
    const name = option.startsWith('--') ? option.split('=', 1)[0]! : option;
    if (SCRIPT_OPTIONS.has(name) || RUNNER_OPTION.test(name) || BREAK_OPTION.test(option)) {
      if (name === option && (SCRIPT_OPTIONS_WITH_VALUE.has(name) || RUNNER_OPTIONS_WITH_VALUE.has(name))) i++;
    } else if (name !== option) {
      kept.push(`${name}=${anchoredLoader(name, option.slice(name.length + 1))}`);
    } else if ((LOADERS_BY_PATH.has(name) || LOADERS_BY_URL.has(name)) && i + 1 < execArgv.length) {
      kept.push(option, anchoredLoader(name, execArgv[++i]!));
    } else {
      kept.push(option);
    }
  }
  return kept;
}

// NODE_OPTIONS as Node splits it: on spaces, with double quotes grouping and
// a backslash escaping the next character inside them.
function splitNodeOptions(text: string): string[] {
  const words: string[] = [];
  let word: string | null = null;
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const char = text[i]!;
    if (!quoted && /\s/.test(char)) {
      if (word !== null) words.push(word);
      word = null;
    } else if (char === '"') {
      quoted = !quoted;
      word ??= '';
    } else {
      word = (word ?? '') + (quoted && char === '\\' && i + 1 < text.length ? text[++i] : char);
    }
  }
  if (word !== null) words.push(word);
  return words;
}

const quoteNodeOption = (word: string): string => (/[\s"\\]/.test(word) || word === '' ? `"${word.replace(/["\\]/g, '\\$&')}"` : word);

/**
 * A pool thread's environment: NODE_OPTIONS, which Node applies to a worker
 * as well, filtered as execArgv is, and this package's path variables made
 * absolute (a relative one means the program's starting directory).
 */
export function workerEnv(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const result: NodeJS.ProcessEnv = { ...env, ...absoluteRuntimeVariables() };
  if (env.NODE_OPTIONS) result.NODE_OPTIONS = workerExecArgv(splitNodeOptions(env.NODE_OPTIONS)).map(quoteNodeOption).join(' ');
  return result;
}

/**
 * `execArgv` without the options Node's Worker refused in `error`: V8's and
 * the process's own (--max-old-space-size, --title, --stack-size, ...), which
 * the worker shares with the process anyway. Node names only some of them in
 * one error, so the caller asks again until it is satisfied. Null if `error`
 * is not such a refusal, or names nothing left to remove.
 */
export function withoutRefused(execArgv: readonly string[], error: unknown): string[] | null {
  if ((error as { code?: unknown } | null)?.code !== INVALID_EXEC_ARGV) return null;
  // No list read: nothing is refused, so nothing is dropped and the answer is null.
  const refused = new Set(REFUSED_LIST.exec((error as Error).message)?.[1]?.split(', '));
  const kept: string[] = [];
  for (let i = 0; i < execArgv.length; i++) {
    const option = execArgv[i]!;
    if (!refused.has(option)) kept.push(option);
    // In execArgv, an element that is not an option is the value of the one before it.
    else if (!option.includes('=') && execArgv[i + 1]?.startsWith('-') === false) i++;
  }
  return kept.length < execArgv.length ? kept : null;
}

/** A Worker started with the caller's usable node options (found once, then reused). */
export function startWorker(entry: string, options: Omit<WorkerOptions, 'execArgv' | 'env'>): Worker {
  let execArgv = accepted ?? workerExecArgv();
  const env = workerEnv();
  const { Worker } = workerThreads();
  for (;;) {
    try {
      const worker = new Worker(entry, { ...options, execArgv, env });
      accepted = execArgv;
      return worker;
    } catch (error) {
      const fewer = withoutRefused(execArgv, error);
      if (fewer === null) throw error;
      execArgv = fewer;
    }
  }
}
