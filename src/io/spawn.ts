// Child processes started inside a namespace. Node spawns the small exec
// helper built with the addon (see helper-process.ts), handing it the
// namespace as fd 3 and a status pipe as fd 4; the helper switches and execs
// the command.
import type { ChildProcess, SpawnOptions, StdioOptions } from 'node:child_process';
import { childProcess, net } from '../core/builtins.js';
import { ErrorCodes, kindOf, netnsError, systemError, type NetnsError } from '../core/errors.js';
import { execHelperPath, native } from '../core/native.js';
import type { NsHandle } from '../core/handle.js';
import { own } from '../core/own.js';
import { checkCommand, checkSpawnOptions, deathSignalNumber, fromNodeSpawnError, reportThroughEvents, stdioTriple, type HelperReport } from './helper-process.js';

const STATUS_FD = 4;

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
   * The hostname the command sees (`hostname`, uname(2)): it runs in a UTS
   * namespace of its own, which its children share and which goes with them;
   * the machine's hostname is untouched. 1 to 64 bytes.
   */
  hostname?: string;
  /**
   * @internal A lab node's directories of its own, laid over their paths in a
   * private mount namespace (the lab checks them): `source` bound, or an
   * overlay of what `path` holds whose changes go to `source`/upper.
   */
  dirs?: PrivateDir[];
  /**
   * Sent to the command when the thread that spawned it exits, the process
   * dying by SIGKILL included (prctl PR_SET_PDEATHSIG), maybe more than once
   * as the dying process's threads end. Not kept by a set-user-ID command or
   * one that changes its user or group ids, nor by the command's own
   * children. See docs/exec.md.
   */
  parentDeathSignal?: NodeJS.Signals;
}

/** @internal One directory of a command's own (NetnsSpawnOptions.dirs). */
export interface PrivateDir {
  kind: 'bind' | 'overlay';
  source: string;
  path: string;
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

function etcName(ns: NsHandle): string {
  if (ns.name === undefined) {
    throw netnsError(ErrorCodes.INVALID_ARG, `{ etc: true } needs a namespace opened or created by name, not ${ns.path}`);
  }
  return ns.name;
}

function checkOptions(options: unknown): asserts options is NetnsSpawnOptions & { input?: unknown } {
  checkSpawnOptions(options);
  const { etc, hostname } = options;
  if (etc !== undefined && typeof etc !== 'boolean') throw netnsError(ErrorCodes.INVALID_ARG, `etc must be a boolean, got ${String(etc)}`);
  if (hostname !== undefined) checkHostname(hostname);
  if (options.dirs !== undefined) checkDirs(options.dirs);
}

const isAbsolutePath = (value: unknown): boolean => typeof value === 'string' && value.startsWith('/') && !value.includes('\0');

/** overlayfs takes its layers in one option string, which these would split (or extend with options of a caller's). */
export const OVERLAY_UNSAFE = /[,:\\]/;

function checkDirs(dirs: unknown): void {
  const good = (dir: unknown): boolean => {
    const { kind, source, path } = (dir ?? {}) as Record<string, unknown>;
    if (!isAbsolutePath(source) || !isAbsolutePath(path)) return false;
    return kind === 'bind' || (kind === 'overlay' && !OVERLAY_UNSAFE.test(`${source as string}${path as string}`));
  };
  if (!Array.isArray(dirs) || !dirs.every(good)) {
    throw netnsError(ErrorCodes.INVALID_ARG, 'dirs must be an array of { kind: bind or overlay, source, path } with absolute paths (an overlay\'s without , : or \\)');
  }
}

/** The kernel's HOST_NAME_MAX: sethostname refuses a longer name. */
const HOSTNAME_MAX_BYTES = 64;

function checkHostname(hostname: unknown): void {
  if (typeof hostname !== 'string') throw netnsError(ErrorCodes.INVALID_ARG, `hostname must be a string, got ${kindOf(hostname)}`);
  const bytes = Buffer.byteLength(hostname);
  if (bytes === 0 || bytes > HOSTNAME_MAX_BYTES || hostname.includes('\0')) {
    throw netnsError(ErrorCodes.INVALID_ARG, `hostname must be 1 to ${HOSTNAME_MAX_BYTES} bytes without NUL (the kernel's limit), got ${bytes} bytes: ${JSON.stringify(hostname)}`);
  }
}

function whileRunning(ns: NsHandle, command: string): string {
  return `(${command} in the namespace ${ns.path})`;
}

// Turns the helper's report into the error Node would give.
function spawnFailure({ stage, errno }: HelperReport, command: string, args: string[]): Error {
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
  const { etc, hostname, dirs = [], stdio, parentDeathSignal, ...rest } = own(options);
  const triple = stdioTriple(stdio);
  const etcArg = etc ? etcName(ns) : '-';
  const hostnameArg = hostname ?? ''; // empty: the machine's
  const dirArgs = [String(dirs.length), ...dirs.flatMap(({ kind, source, path }) => [kind, source, path])];
  // libuv forks on this thread and process.pid is its process: what the helper compares getppid() with
  const guard = [String(deathSignalNumber(parentDeathSignal)), String(process.pid)];
  const nsFd = ns.acquire();
  let child: ChildProcess;
  try {
    child = childProcess().spawn(execHelperPath(), [etcArg, hostnameArg, ...dirArgs, ...guard, command, ...args], {
      ...rest,
      stdio: [...triple, nsFd, 'pipe', ...inheritFds] as StdioOptions, // nsFd is fd 3, the status pipe fd 4
    });
  } catch (error) {
    throw fromNodeSpawnError(error, whileRunning(ns, command));
  } finally {
    ns.release(); // the child has its own copy of the descriptor by now
  }
  Object.assign(child, { spawnfile: command, spawnargs: [command, ...args] });
  reportThroughEvents(child, STATUS_FD, (report) => spawnFailure(report, command, args), whileRunning(ns, command));
  return child;
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
