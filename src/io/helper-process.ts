// How the package starts a command through one of its small helpers
// (netns-exec, netns-sandbox): Node spawns the helper, which prepares where
// the command runs and execs it, writing "<stage> <errno>" on a close-on-exec
// status pipe if it cannot. So the result is a real ChildProcess (stdio, kill,
// exit codes), and a failed preparation or exec arrives as an 'error' event
// with a proper code, as Node reports spawn errors.
import type { ChildProcess } from 'node:child_process';
import type { Readable } from 'node:stream';
import { os, util } from '../core/builtins.js';
import { ErrorCodes, fromNodeError, kindOf, netnsError } from '../core/errors.js';
import { MAX_TIMER_MS } from '../core/timer-limit.js';

const STDIO_STRINGS = new Set(['pipe', 'inherit', 'ignore', 'overlapped']);

/** Node's stdio for fds 0-2; the helper's own descriptors follow them. */
export function stdioTriple(stdio: unknown): unknown[] {
  if (stdio === undefined) return ['pipe', 'pipe', 'pipe'];
  if (typeof stdio === 'string') {
    if (!STDIO_STRINGS.has(stdio)) throw netnsError(ErrorCodes.INVALID_ARG, `stdio must be 'pipe', 'inherit', 'ignore' or an array, got ${JSON.stringify(stdio)}`);
    return [stdio, stdio, stdio];
  }
  if (!Array.isArray(stdio)) throw netnsError(ErrorCodes.INVALID_ARG, `stdio must be 'pipe', 'inherit', 'ignore' or an array, got ${String(stdio)}`);
  const list = [...(stdio as unknown[])];
  if (list.length > 3) throw netnsError(ErrorCodes.INVALID_ARG, "only stdio[0..2] can be set: the fds above carry the helper's namespace and status");
  while (list.length < 3) list.push('pipe');
  return list;
}

/**
 * A NUL byte is refused here, naming it in the caller's terms: Node would
 * refuse it too, but by its index in the helper's argv ("args[3]").
 */
export function checkCommand(command: unknown, args: unknown): asserts args is string[] {
  if (typeof command !== 'string' || command === '') throw netnsError(ErrorCodes.INVALID_ARG, 'command must be a non-empty string');
  if (!Array.isArray(args) || args.some((arg) => typeof arg !== 'string')) {
    throw netnsError(ErrorCodes.INVALID_ARG, 'args must be an array of strings');
  }
  if (command.includes('\0')) throw netnsError(ErrorCodes.INVALID_ARG, `command must not hold a NUL byte, got ${JSON.stringify(command)}`);
  const withNul = (args as string[]).findIndex((arg) => arg.includes('\0'));
  if (withNul >= 0) throw netnsError(ErrorCodes.INVALID_ARG, `args[${withNul}] must not hold a NUL byte, got ${JSON.stringify(args[withNul])}`);
}

/**
 * Options must be an object; those that would start something outside the
 * helper's preparation (or silently mean something else) are refused, whether
 * or not the types allow them: plain JavaScript callers pass anything.
 */
export function checkSpawnOptions(options: unknown): asserts options is Record<string, unknown> {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw netnsError(ErrorCodes.INVALID_ARG, `options must be an object, got ${kindOf(options)}`);
  }
  const { shell, argv0, env, uid, gid, timeout } = options as Record<string, unknown>;
  if (env !== undefined && (env === null || typeof env !== 'object')) {
    throw netnsError(ErrorCodes.INVALID_ARG, `env must be an object, got ${kindOf(env)}`); // Node would take a string's characters as names
  }
  if (shell !== undefined && shell !== false) {
    throw netnsError(
      ErrorCodes.INVALID_ARG,
      "{ shell } is not supported: Node would start the shell in the host's namespace; run ['sh', ['-c', script]] instead, which starts inside it",
    );
  }
  if (argv0 !== undefined) {
    throw netnsError(ErrorCodes.INVALID_ARG, '{ argv0 } is not supported: it would name the helper, not the command');
  }
  if (timeout !== undefined && (!Number.isSafeInteger(timeout) || (timeout as number) < 0 || (timeout as number) > MAX_TIMER_MS)) {
    // Node would set such a timer to 1 ms and kill the command at once
    throw netnsError(ErrorCodes.INVALID_ARG, `timeout must be an integer from 0 (none) to ${MAX_TIMER_MS} ms, got ${String(timeout)}`);
  }
  if (uid !== undefined || gid !== undefined) {
    throw netnsError(
      ErrorCodes.INVALID_ARG,
      '{ uid, gid } are not supported: Node drops privileges before the helper can enter the namespace; drop them in the command (setpriv --reuid=... cmd)',
    );
  }
}

/** The signal's number, 0 for none: what the helper hands to prctl. */
export function deathSignalNumber(signal: unknown): number {
  if (signal === undefined) return 0;
  const { signals } = os().constants;
  if (typeof signal !== 'string' || !Object.hasOwn(signals, signal)) {
    throw netnsError(ErrorCodes.INVALID_ARG, `parentDeathSignal must be a signal name such as 'SIGKILL' or 'SIGTERM', got ${util().inspect(signal)}`);
  }
  return signals[signal as NodeJS.Signals];
}

// Node's own argument errors (a bad cwd, env, uid, stdio entry, ...) carry its
// ERR_INVALID_ARG_* codes; ours say ERR_NETNS_INVALID_ARG, keeping Node's as the
// cause. Anything else Node throws (EAGAIN, ENOMEM...) keeps its code, wrapped.
export function fromNodeSpawnError(error: unknown, where: string): unknown {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string' || !/^ERR_(INVALID_ARG_|OUT_OF_RANGE|UNKNOWN_SIGNAL)/.test(code)) return fromNodeError(error, where);
  return netnsError(ErrorCodes.INVALID_ARG, (error as Error).message, { cause: error });
}

/** The helper's "<stage> <errno>" report. */
export interface HelperReport {
  /** What the helper was doing: 'exec', or a step of its preparation ('setns', 'unshare', ...). */
  stage: string;
  errno: number;
}

function parseReport(report: string): HelperReport {
  const [stage = 'exec', errno = '0'] = report.trim().split(' ');
  return { stage, errno: Number(errno) };
}

/**
 * Holds 'spawn', 'exit' and 'close' back until the status pipe (stdio[`statusFd`])
 * has told whether exec happened, so 'spawn' means the command itself is
 * running and the order is always Node's: spawn, exit, close. On failure emits
 * 'error' (made by `failure` from the report) then 'close' (code -errno)
 * instead, as Node does. Node emits 'close' from its own listener on the
 * status pipe, which runs before ours, so 'close' must be held as well. An
 * 'error' Node raises itself (the helper could not be started, a kill()
 * failed) becomes a NetnsError with Node's code, naming `where`.
 */
export function reportThroughEvents(child: ChildProcess, statusFd: number, failure: (report: HelperReport) => Error, where: string): void {
  const status = child.stdio[statusFd] as Readable;
  const emit = child.emit.bind(child) as (event: string, ...args: unknown[]) => boolean;
  const held = new Map<string, unknown[]>();
  let report = '';
  let known = false;
  child.emit = ((event: string, ...eventArgs: unknown[]) => {
    if ((event === 'spawn' || event === 'exit' || event === 'close') && !known) {
      held.set(event, eventArgs);
      return true;
    }
    if (report !== '' && (event === 'spawn' || event === 'exit')) return false; // the helper's own exit, not the command's
    if (event === 'close' && report !== '') return emit('close', -parseReport(report).errno, null);
    if (event === 'error') return emit('error', fromNodeError(eventArgs[0], where));
    return emit(event, ...eventArgs);
  }) as ChildProcess['emit'];
  status.setEncoding('utf8');
  status.on('data', (chunk: string) => (report += chunk));
  status.on('error', () => {});
  status.on('close', () => {
    known = true;
    if (report !== '') {
      emit('error', failure(parseReport(report)));
      if (held.has('close')) child.emit('close');
      return;
    }
    for (const event of ['spawn', 'exit', 'close']) {
      const eventArgs = held.get(event);
      if (eventArgs) emit(event, ...eventArgs);
    }
  });
}
