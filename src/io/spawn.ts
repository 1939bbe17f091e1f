// Child processes started inside a namespace. Node spawns the small exec
// helper built with the addon, handing it the namespace as fd 3 and a status
// pipe as fd 4; the helper switches and execs the command. So the result is a
// real ChildProcess (stdio, kill, exit codes), and a failed switch or exec
// arrives as an 'error' event with a proper code, as Node reports spawn errors.
import type { ChildProcess, SpawnOptions, StdioOptions } from 'node:child_process';
import type { Readable } from 'node:stream';
import { childProcess, net, os, util } from '../core/builtins.js';
import { ErrorCodes, fromNodeError, netnsError, systemError, type NetnsError } from '../core/errors.js';
import { execHelperPath, native } from '../core/native.js';
import type { NsHandle } from '../core/handle.js';
import { own } from '../core/own.js';
import { MAX_TIMER_MS } from '../core/timer-limit.js';

/**
 * Node's spawn options, less `shell`, `argv0`, `uid` and `gid`, which are
 * refused: a shell would be started by Node in the host's namespace (so
 * `$(...)` or anything after `&&` would run there), argv0 would name the exec
 * helper, not the command, and Node would drop privileges before the helper
 * could enter the namespace. `detached` is honoured: the child gets its own session, still
 * inside the namespace.
 */
export interface NetnsSpawnOptions extends Omit<SpawnOptions, 'stdio' | 'argv0' | 'shell' | 'uid' | 'gid'> {
  /** As Node's, for fds 0-2 only: fds 3 and 4 carry the namespace and the exec status to the helper. */
  stdio?: 'pipe' | 'inherit' | 'ignore' | StdioOptions;
  /**
   * Also do what `ip netns exec` adds: a private mount namespace with
   * /etc/netns/NAME/* bound over /etc and /sys remounted for this namespace.
   * Needs a named namespace (/run/netns/NAME).
   */
  etc?: boolean;
  /**
   * Sent to the command when the thread that spawned it exits, the process
   * dying by SIGKILL included (prctl PR_SET_PDEATHSIG), maybe more than once
   * as the dying process's threads end. Not kept by a set-user-ID command or
   * one that changes its user or group ids, nor by the command's own
   * children. See docs/exec.md.
   */
  parentDeathSignal?: NodeJS.Signals;
}

/** ns.execFile()'s options: spawn's, less stdio, plus `input` for stdin. */
export interface ExecFileOptions extends Omit<NetnsSpawnOptions, 'stdio'> {
  /** Written to the command's stdin through a real pipe (not a socket), then closed. */
  input?: string | Buffer;
}

/** How ns.execFile() rejects when the command ran and did not exit 0: code ERR_NETNS_COMMAND_FAILED. */
export interface CommandFailedError extends NetnsError {
  /** The exit status, or null when a signal ended the command. */
  exitCode: number | null;
  /** The signal that ended the command, or null. */
  signal: NodeJS.Signals | null;
  /** True when a signal ended the command. */
  killed: boolean;
  /** The command and its arguments, joined by spaces (for messages only). */
  cmd: string;
  /** What the command wrote to stdout before it ended. */
  stdout: string;
  /** What the command wrote to stderr before it ended. */
  stderr: string;
}

/** What ns.execFile() resolves with when the command exits 0. */
export interface ExecFileResult {
  /** The command's standard output, as UTF-8 text. */
  stdout: string;
  /** The command's standard error, as UTF-8 text. */
  stderr: string;
}

const STDIO_STRINGS = new Set(['pipe', 'inherit', 'ignore', 'overlapped']);

function stdioTriple(stdio: unknown): unknown[] {
  if (stdio === undefined) return ['pipe', 'pipe', 'pipe'];
  if (typeof stdio === 'string') {
    if (!STDIO_STRINGS.has(stdio)) throw netnsError(ErrorCodes.INVALID_ARG, `stdio must be 'pipe', 'inherit', 'ignore' or an array, got ${JSON.stringify(stdio)}`);
    return [stdio, stdio, stdio];
  }
  if (!Array.isArray(stdio)) throw netnsError(ErrorCodes.INVALID_ARG, `stdio must be 'pipe', 'inherit', 'ignore' or an array, got ${String(stdio)}`);
  const list = [...(stdio as unknown[])];
  if (list.length > 3) throw netnsError(ErrorCodes.INVALID_ARG, 'only stdio[0..2] can be set: fds 3 and 4 carry the namespace and the status');
  while (list.length < 3) list.push('pipe');
  return list;
}

function etcName(ns: NsHandle): string {
  if (ns.name === undefined) {
    throw netnsError(ErrorCodes.INVALID_ARG, `{ etc: true } needs a namespace opened or created by name, not ${ns.path}`);
  }
  return ns.name;
}

function checkCommand(command: unknown, args: unknown): asserts args is string[] {
  if (typeof command !== 'string' || command === '') throw netnsError(ErrorCodes.INVALID_ARG, 'command must be a non-empty string');
  if (!Array.isArray(args) || args.some((arg) => typeof arg !== 'string')) {
    throw netnsError(ErrorCodes.INVALID_ARG, 'args must be an array of strings');
  }
}

/**
 * Options must be an object; those that would start something outside the
 * namespace (or silently mean something else) are refused, whether or not the
 * types allow them: plain JavaScript callers pass anything.
 */
function checkOptions(options: unknown): asserts options is NetnsSpawnOptions & { input?: unknown } {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw netnsError(ErrorCodes.INVALID_ARG, `options must be an object, got ${options === null ? 'null' : typeof options}`);
  }
  const { shell, argv0, etc, env, uid, gid, timeout } = options as Record<string, unknown>;
  if (env !== undefined && (env === null || typeof env !== 'object')) {
    throw netnsError(ErrorCodes.INVALID_ARG, `env must be an object, got ${env === null ? 'null' : typeof env}`); // Node would take a string's characters as names
  }
  if (shell !== undefined && shell !== false) {
    throw netnsError(
      ErrorCodes.INVALID_ARG,
      "{ shell } is not supported: Node would start the shell in the host's namespace; run ['sh', ['-c', script]] instead, which starts inside it",
    );
  }
  if (argv0 !== undefined) {
    throw netnsError(ErrorCodes.INVALID_ARG, '{ argv0 } is not supported: it would name the exec helper, not the command');
  }
  if (timeout !== undefined && (!Number.isSafeInteger(timeout) || (timeout as number) < 0 || (timeout as number) > MAX_TIMER_MS)) {
    // Node would set such a timer to 1 ms and kill the command at once
    throw netnsError(ErrorCodes.INVALID_ARG, `timeout must be an integer from 0 (none) to ${MAX_TIMER_MS} ms, got ${String(timeout)}`);
  }
  if (etc !== undefined && typeof etc !== 'boolean') throw netnsError(ErrorCodes.INVALID_ARG, `etc must be a boolean, got ${String(etc)}`);
  if (uid !== undefined || gid !== undefined) {
    throw netnsError(
      ErrorCodes.INVALID_ARG,
      '{ uid, gid } are not supported: Node drops privileges before the helper can enter the namespace; drop them in the command (setpriv --reuid=... cmd)',
    );
  }
}

/** The signal's number, 0 for none: what the exec helper hands to prctl. */
function deathSignalNumber(signal: unknown): number {
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
function fromNodeSpawnError(error: unknown, ns: NsHandle, command: string): unknown {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string' || !/^ERR_(INVALID_ARG_|OUT_OF_RANGE|UNKNOWN_SIGNAL)/.test(code)) return fromNodeError(error, whileRunning(ns, command));
  return netnsError(ErrorCodes.INVALID_ARG, (error as Error).message, { cause: error });
}

function whileRunning(ns: NsHandle, command: string): string {
  return `(${command} in the namespace ${ns.path})`;
}

/** The helper's "<stage> <errno>" report. */
function parseReport(report: string): { stage: string; errno: number } {
  const [stage = 'exec', errno = '0'] = report.trim().split(' ');
  return { stage, errno: Number(errno) };
}

// Turns the helper's report into the error Node would give.
function spawnFailure({ stage, errno }: { stage: string; errno: number }, command: string, args: string[]): Error {
  const error = stage === 'exec' ? systemError(errno, `spawn ${command}`, command) : systemError(errno, stage);
  if (stage !== 'exec') error.message += ` (while entering the namespace for ${command})`;
  return Object.assign(error, { spawnargs: args });
}

/**
 * Starts `command` inside the namespace; returns the ChildProcess at once.
 * `inheritFds` are passed on as fds 5, 6, ... (the package's own use: a lock
 * the command must hold while it runs).
 */
export function spawnIn(ns: NsHandle, command: string, args: string[] = [], options: NetnsSpawnOptions = {}, inheritFds: number[] = []): ChildProcess {
  checkCommand(command, args);
  checkOptions(options);
  const { etc, stdio, parentDeathSignal, ...rest } = own(options);
  const triple = stdioTriple(stdio);
  const etcArg = etc ? etcName(ns) : '-';
  // libuv forks on this thread and process.pid is its process: what the helper compares getppid() with
  const guard = [String(deathSignalNumber(parentDeathSignal)), String(process.pid)];
  const nsFd = ns.acquire();
  let child: ChildProcess;
  try {
    child = childProcess().spawn(execHelperPath(), [etcArg, ...guard, command, ...args], {
      ...rest,
      stdio: [...triple, nsFd, 'pipe', ...inheritFds] as StdioOptions,
    });
  } catch (error) {
    throw fromNodeSpawnError(error, ns, command);
  } finally {
    ns.release(); // the child has its own copy of the descriptor by now
  }
  Object.assign(child, { spawnfile: command, spawnargs: [command, ...args] });
  reportThroughEvents(child, command, args, whileRunning(ns, command));
  return child;
}

// Holds 'spawn', 'exit' and 'close' back until the status pipe has told
// whether exec happened, so 'spawn' means the command itself is running (inside
// the namespace) and the order is always Node's: spawn, exit, close. On failure
// emits 'error' then 'close' (code -errno) instead, as Node does. Node emits
// 'close' from its own listener on the status pipe, which runs before ours, so
// 'close' must be held as well.
// An 'error' Node raises itself (the helper could not be started, a kill()
// failed) becomes a NetnsError with Node's code, naming the namespace (`where`).
function reportThroughEvents(child: ChildProcess, command: string, args: string[], where: string): void {
  const status = child.stdio[4] as Readable;
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
      emit('error', spawnFailure(parseReport(report), command, args));
      if (held.has('close')) child.emit('close');
      return;
    }
    for (const event of ['spawn', 'exit', 'close']) {
      const eventArgs = held.get(event);
      if (eventArgs) emit(event, ...eventArgs);
    }
  });
}

// Some programs (nft -f -) open /dev/stdin by path, which fails on the
// socketpair Node would use; a pipe made by the addon works everywhere.
function feedThroughPipe(input: string | Buffer): { stdin: number; start(): void; abandon(): void } {
  const { read, write } = native().pipe();
  return {
    stdin: read,
    start() {
      native().closeFd(read);
      const { Socket } = net();
      const sink = new Socket({ fd: write, readable: false, writable: true });
      sink.on('error', () => {}); // the command may exit without reading it all
      sink.end(input);
    },
    abandon() {
      native().closeFd(read);
      native().closeFd(write);
    },
  };
}

/** Runs a command inside the namespace and collects its output, like util.promisify(execFile). */
export function execFileIn(ns: NsHandle, command: string, args: string[] = [], options: ExecFileOptions = {}, inheritFds: number[] = []): Promise<ExecFileResult> {
  return new Promise((resolve, reject) => {
    checkOptions(options);
    const { input, ...spawnOptions } = options;
    if (input !== undefined && typeof input !== 'string' && !Buffer.isBuffer(input)) {
      throw netnsError(ErrorCodes.INVALID_ARG, `input must be a string or a Buffer, got ${typeof input}`);
    }
    if ('stdio' in spawnOptions && spawnOptions.stdio !== undefined) {
      throw netnsError(ErrorCodes.INVALID_ARG, 'execFile sets stdio itself (input, stdout and stderr); use spawn to choose stdio');
    }
    for (const unsupported of ['maxBuffer', 'encoding']) {
      if ((options as Record<string, unknown>)[unsupported] !== undefined) {
        throw netnsError(ErrorCodes.INVALID_ARG, `{ ${unsupported} } is not supported: output is collected as UTF-8 text; use spawn to read the streams yourself`);
      }
    }
    const feed = input === undefined ? undefined : feedThroughPipe(input);
    let child: ChildProcess;
    try {
      child = spawnIn(ns, command, args, { ...spawnOptions, stdio: [feed?.stdin ?? 'ignore', 'pipe', 'pipe'] }, inheritFds);
    } catch (error) {
      feed?.abandon();
      reject(error);
      return;
    }
    feed?.start();
    let stdout = '';
    let stderr = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.once('error', (error) => reject(Object.assign(error, { stdout, stderr })));
    child.once('close', (code: number | null, signal: NodeJS.Signals | null) => {
      if (code === 0) return resolve({ stdout, stderr });
      if (code !== null && code < 0) return; // the 'error' event already rejected
      const cmd = [command, ...args].join(' ');
      // Node's execFile puts the exit status in `code`; here `code` is ours, as on every
      // error of this package, and the status is `exitCode`.
      const error = netnsError(ErrorCodes.COMMAND_FAILED, `Command failed: ${cmd}${stderr ? `\n${stderr}` : ''}`);
      reject(Object.assign(error, { exitCode: code, signal, cmd, stdout, stderr, killed: signal !== null }));
    });
  });
}
