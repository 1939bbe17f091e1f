// Running another plugin (a delegate, usually IPAM) as a runtime would: found
// in the call's CNI_PATH, given the call's whole environment (CmdArgs.env:
// process.env for a plugin process, the forwarded one in resident mode, where
// one process serves many calls at once) with CNI_COMMAND set to the verb, and the same configuration bytes on stdin. Its answer is read as
// the spec has it: a result or an error object on stdout, stderr only for logs.
//
// A plugin is started by the addon (native/run_program.cc), not by
// node:child_process: loading that module (with net and stream) costs a
// one-command plugin more than the delegate's whole run. node:timers/promises
// is loaded when first needed (process.getBuiltinModule, synchronous): only a
// busy binary's retry needs it.
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { fs, os } from '../core/builtins.js';
import { ErrorCodes, fromNative, netnsError } from '../core/errors.js';
import { native, type NativeBinding } from '../core/native.js';
import { splitPath } from './env.js';
import { CniCode, CniError } from './errors.js';
import { parseResult } from './result.js';
import type { Result } from './types.js';
import { CURRENT_VERSION, versionOf } from './version.js';

/** A delegate's stdin: the configuration's bytes as the plugin received them (CmdArgs.stdin), or the same text. */
export type ConfigBytes = Buffer | string;

function assertBytes(stdin: unknown, caller: string): asserts stdin is ConfigBytes {
  if (typeof stdin !== 'string' && !Buffer.isBuffer(stdin)) {
    throw netnsError(ErrorCodes.INVALID_ARG, `${caller} takes the configuration's bytes, a Buffer or a string`);
  }
}

/** Attempts and pause for a plugin binary being replaced while we exec it (ETXTBSY), as Go's invoke retries. */
const BUSY_ATTEMPTS = 6;
const BUSY_PAUSE_MS = 1000;

// node:fs's callback, not node:fs/promises: loading that (and the file watchers it brings) costs more than the lookups.
const isFile = (path: string): Promise<boolean> => new Promise((resolve) => fs().stat(path, (error, stats) => resolve(!error && stats.isFile())));

/**
 * The first `dir/plugin` that is a regular file, in CNI_PATH's order. A name
 * that is empty or holds a `/` is code 7 (it comes from the configuration);
 * an empty path list or no match is code 4 (CNI_PATH is the runtime's).
 * Async (it stats each candidate); those failures reject as CniError.
 */
export async function findInPath(plugin: string, paths: readonly string[]): Promise<string> {
  if (typeof plugin !== 'string' || !Array.isArray(paths)) throw netnsError(ErrorCodes.INVALID_ARG, 'findInPath takes a plugin name and a list of directories');
  if (plugin === '' || plugin.includes('/')) throw new CniError(CniCode.INVALID_NETWORK_CONFIG, `invalid plugin name ${JSON.stringify(plugin)}`);
  if (paths.length === 0) throw new CniError(CniCode.INVALID_ENVIRONMENT, `CNI_PATH is empty: cannot find plugin ${JSON.stringify(plugin)}`);
  for (const dir of paths) {
    const candidate = join(dir, plugin);
    if (await isFile(candidate)) return candidate;
  }
  throw new CniError(CniCode.INVALID_ENVIRONMENT, `failed to find plugin ${JSON.stringify(plugin)} in CNI_PATH [${paths.join(' ')}]`);
}

/** How a plugin process ended, with everything it printed. */
export interface PluginExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: Buffer;
  stderr: Buffer;
}

/**
 * Starts a plugin process in place of the addon's own start. A test harness
 * passes a namespace's spawn (NetNS.spawn) to run plugins where a stand-in
 * host is, as libcni lets a runtime pass its own exec.
 */
export type SpawnPlugin = (command: string, args: string[], options: { env: NodeJS.ProcessEnv; stdio: ['pipe', 'pipe', 'pipe'] }) => ChildProcess;

/**
 * `env` as execve takes it; a variable set to undefined is left out, as
 * child_process does, and a number, bigint or boolean is written as text. A
 * NUL would cut the C string short (a path would name another program) and
 * `=` in a name would make another variable: refused, as child_process
 * refuses them.
 */
function environmentList(env: NodeJS.ProcessEnv): string[] {
  return Object.entries(env).flatMap(([name, value]) => {
    if (value === undefined) return [];
    // A number or boolean is written as child_process writes it; a symbol, object or function is a slip, not text.
    if (!['string', 'number', 'boolean', 'bigint'].includes(typeof value)) {
      throw netnsError(ErrorCodes.INVALID_ARG, `a plugin's environment variable ${JSON.stringify(name)} must be text, got ${typeof value}`);
    }
    if (name === '' || name.includes('=') || `${name}${value}`.includes('\0')) {
      throw netnsError(ErrorCodes.INVALID_ARG, `a plugin's environment cannot hold ${JSON.stringify(name)}: names without = or NUL, values without NUL`);
    }
    return [`${name}=${value}`];
  });
}

/**
 * Runs the plugin from the addon; a plugin that cannot be started rejects with
 * its errno error (code ETXTBSY...). `signal` aborted kills it (SIGKILL): a call
 * abandoned mid-delegate must not leave the delegate working on.
 */
async function runNative(pluginPath: string, stdin: ConfigBytes, environment: string[], signal: AbortSignal | undefined): Promise<PluginExit> {
  let exit: { status: number | null; signal: number | null; stdout: Buffer; stderr: Buffer };
  let started: ReturnType<NativeBinding['runProgram']>;
  try {
    started = native().runProgram(pluginPath, environment, Buffer.isBuffer(stdin) ? stdin : Buffer.from(stdin));
  } catch (error) {
    throw fromNative(error);
  }
  const kill = () => native().killProgram(started.id);
  // Stryker disable next-line ObjectLiteral,BooleanLiteral: the listener is removed in the finally below either way
  signal?.addEventListener('abort', kill, { once: true });
  try {
    exit = await started.exit;
  } catch (error) {
    throw fromNative(error);
  } finally {
    signal?.removeEventListener('abort', kill);
  }
  const killed = exit.signal === null ? null : signalName(exit.signal);
  return { code: exit.status, signal: killed, stdout: exit.stdout, stderr: exit.stderr };
}

function signalName(signal: number): NodeJS.Signals {
  const names = os().constants.signals;
  return (Object.keys(names) as NodeJS.Signals[]).find((name) => names[name] === signal) ?? (`SIG${signal}` as NodeJS.Signals);
}

/** One start by the addon, its arguments checked once: a path or environment execve would misread is the caller's slip (ERR_NETNS_INVALID_ARG), not a plugin that cannot run. */
function nativeRunner(pluginPath: string, stdin: ConfigBytes, env: NodeJS.ProcessEnv, signal: AbortSignal | undefined): () => Promise<PluginExit> {
  if (pluginPath.includes('\0')) throw netnsError(ErrorCodes.INVALID_ARG, `a plugin path cannot hold NUL: ${JSON.stringify(pluginPath)}`);
  const environment = environmentList(env);
  return () => runNative(pluginPath, stdin, environment, signal);
}

function runSpawned(pluginPath: string, stdin: ConfigBytes, env: NodeJS.ProcessEnv, spawn: SpawnPlugin): Promise<PluginExit> {
  return new Promise((resolve, reject) => {
    const child = spawn(pluginPath, [], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    child.stdout!.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr!.on('data', (chunk: Buffer) => stderr.push(chunk));
    child.stdin!.on('error', () => {}); // a plugin may exit without reading its stdin (EPIPE): its exit says what happened
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout: Buffer.concat(stdout), stderr: Buffer.concat(stderr) }));
    child.stdin!.end(stdin);
  });
}

/** The error a failed plugin reported: its stdout's error object, else its stderr, else how it exited. */
export function pluginFailure(pluginPath: string, exit: PluginExit): CniError {
  const how = exit.signal ? `killed by ${exit.signal}` : `exit status ${String(exit.code)}`;
  const stdout = exit.stdout.toString('utf8').trim();
  if (stdout === '') {
    const stderr = exit.stderr.toString('utf8').trim();
    return new CniError(CniCode.INTERNAL, stderr ? `plugin ${pluginPath} failed (${how}): ${stderr}` : `plugin ${pluginPath} failed with no error message (${how})`);
  }
  return printedError(stdout) ?? new CniError(CniCode.INTERNAL, `plugin ${pluginPath} failed (${how}) and its error could not be read: ${stdout}`);
}

/** The spec's error object, if `stdout` is one: a non-negative integer code and a text msg. */
function printedError(stdout: string): CniError | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(stdout);
  } catch {
    return undefined;
  }
  const { code, msg, details } = (typeof parsed === 'object' && parsed !== null ? parsed : {}) as { code?: unknown; msg?: unknown; details?: unknown };
  if (!Number.isSafeInteger(code) || (code as number) < 0 || typeof msg !== 'string') return undefined;
  return new CniError(code as number, msg, typeof details === 'string' ? details : '');
}

/**
 * Runs the plugin at `pluginPath` (no shell) with `env` and `stdin`, however
 * it exits; retried while the binary is being replaced (ETXTBSY), as Go's
 * invoke does. A plugin that cannot be started at all is code 999; an
 * environment or path execve would misread is ERR_NETNS_INVALID_ARG. `signal`
 * (the addon's start only) kills it when aborted.
 */
export async function runPlugin(pluginPath: string, stdin: ConfigBytes, env: NodeJS.ProcessEnv, spawn?: SpawnPlugin, signal?: AbortSignal): Promise<PluginExit> {
  const runOnce = spawn === undefined ? nativeRunner(pluginPath, stdin, env, signal) : () => runSpawned(pluginPath, stdin, env, spawn);
  for (let attempt = 1; ; attempt++) {
    try {
      return await runOnce();
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ETXTBSY' && attempt < BUSY_ATTEMPTS) {
        // Nothing to wait on: the writer holding the file open is another process.
        await process.getBuiltinModule('node:timers/promises').setTimeout(BUSY_PAUSE_MS);
        continue;
      }
      throw new CniError(CniCode.INTERNAL, `cannot run plugin ${pluginPath}: ${(error as Error).message}`);
    }
  }
}

/**
 * Runs the plugin at `pluginPath` (no shell) with `env` and `stdin`; its
 * stdout on success (its stderr is passed on to ours, for the logs). A failure
 * rejects with a CniError carrying the plugin's own code and message. With
 * `signal` (a handler's CmdArgs.signal), the plugin is not started once it is
 * aborted and is killed when it aborts; the call then rejects with its reason.
 */
export async function execPlugin(pluginPath: string, stdin: ConfigBytes, env: NodeJS.ProcessEnv, signal?: AbortSignal): Promise<Buffer> {
  assertBytes(stdin, 'execPlugin');
  if (typeof pluginPath !== 'string' || typeof env !== 'object' || env === null) {
    throw netnsError(ErrorCodes.INVALID_ARG, 'execPlugin takes a path, the configuration bytes and an environment object');
  }
  if (signal !== undefined && !(signal instanceof AbortSignal)) throw netnsError(ErrorCodes.INVALID_ARG, 'execPlugin\'s signal must be an AbortSignal');
  signal?.throwIfAborted();
  const exit = await runPlugin(pluginPath, stdin, env, undefined, signal);
  signal?.throwIfAborted(); // killed by us: the reason, not "killed by SIGKILL"
  if (exit.code !== 0) throw pluginFailure(pluginPath, exit);
  if (exit.stderr.length > 0) process.stderr.write(exit.stderr);
  return exit.stdout;
}

/** The verbs delegated without a result. */
export type DelegatedCommand = 'DEL' | 'CHECK' | 'GC' | 'STATUS';

/** A call's environment variables (CmdArgs.env); the delegation functions default to process.env. */
export type DelegateEnvironment = Readonly<Record<string, string | undefined>>;

function assertEnvironment(env: unknown, caller: string): asserts env is DelegateEnvironment {
  if (typeof env !== 'object' || env === null) throw netnsError(ErrorCodes.INVALID_ARG, `${caller} takes the call's environment as an object (CmdArgs.env)`);
}

async function runDelegate(command: 'ADD' | DelegatedCommand, plugin: string, stdin: ConfigBytes, env: DelegateEnvironment, signal?: AbortSignal): Promise<Buffer> {
  const pluginPath = await findInPath(plugin, splitPath(env.CNI_PATH ?? ''));
  return execPlugin(pluginPath, stdin, { ...env, CNI_COMMAND: command }, signal);
}

/** The configuration's version, for a delegate's result that states none (Go's invoke does the same, cni#895). */
function configVersion(stdin: ConfigBytes): string {
  assertBytes(stdin, 'delegateAdd');
  try {
    return versionOf(JSON.parse(stdin.toString()) as Record<string, unknown>);
  } catch (error) {
    if (error instanceof CniError) throw error;
    throw new CniError(CniCode.DECODING_FAILURE, `the configuration given to a delegate is not JSON: ${(error as Error).message}`);
  }
}

/**
 * A plugin's ADD answer, read by its own cniVersion, else `fallbackVersion`
 * (Go's invoke assumes the configuration's for a result that states none,
 * cni#895): the result in the current shape and the version it was printed in.
 */
export function readPluginResult(stdout: string, fallbackVersion: string, plugin: string): { result: Result; version: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(stdout);
  } catch (error) {
    throw new CniError(CniCode.DECODING_FAILURE, `plugin ${plugin} printed a result that is not JSON: ${(error as Error).message}`);
  }
  const result = parseResult(parsed, fallbackVersion, `the result of ${plugin}`);
  const own = Object.hasOwn(parsed as object, 'cniVersion') ? (parsed as { cniVersion: unknown }).cniVersion : undefined;
  return { result, version: typeof own === 'string' && own !== '' ? own : fallbackVersion }; // parseResult refused any other type
}

/**
 * ADD by `plugin` (found in env's CNI_PATH): its result, read by its own
 * version (else the configuration's), in the current shape. `signal` as
 * execPlugin's: the plugin is killed when it aborts.
 */
export async function delegateAdd(plugin: string, stdin: ConfigBytes, env: DelegateEnvironment = process.env, signal?: AbortSignal): Promise<Result> {
  assertEnvironment(env, 'delegateAdd');
  const fallback = configVersion(stdin); // before ADD: a failure after it would leave an allocation behind
  const stdout = await runDelegate('ADD', plugin, stdin, env, signal);
  return readPluginResult(stdout.toString('utf8'), fallback, plugin).result;
}

/** DEL, CHECK, GC or STATUS by `plugin` (found in env's CNI_PATH); resolves when it succeeded. */
export async function delegate(command: DelegatedCommand, plugin: string, stdin: ConfigBytes, env: DelegateEnvironment = process.env): Promise<void> {
  if (!['DEL', 'CHECK', 'GC', 'STATUS'].includes(command)) throw netnsError(ErrorCodes.INVALID_ARG, `delegate runs DEL, CHECK, GC or STATUS, not ${String(command)}`);
  assertEnvironment(env, 'delegate');
  await runDelegate(command, plugin, stdin, env);
}

/**
 * The spec versions `plugin` (found in env's CNI_PATH) supports, from its VERSION
 * answer; ['0.1.0'] for a plugin from before VERSION existed. A plugin can ask
 * before forwarding GC or STATUS, which a delegate older than 1.1.0 refuses
 * (Debian's host-local 1.1.1 among them).
 */
export async function delegateVersions(plugin: string, env: DelegateEnvironment = process.env): Promise<string[]> {
  assertEnvironment(env, 'delegateVersions');
  const pluginPath = await findInPath(plugin, splitPath(env.CNI_PATH ?? ''));
  // Plugins built on an old skel require these even for VERSION: any value does.
  const versionEnv = { ...env, CNI_COMMAND: 'VERSION', CNI_NETNS: 'dummy', CNI_IFNAME: 'dummy', CNI_PATH: 'dummy' };
  let stdout: Buffer;
  try {
    stdout = await execPlugin(pluginPath, JSON.stringify({ cniVersion: CURRENT_VERSION }), versionEnv);
  } catch (error) {
    if (error instanceof CniError && error.message === 'unknown CNI_COMMAND: VERSION') return ['0.1.0'];
    throw error;
  }
  let answer: unknown;
  try {
    answer = JSON.parse(stdout.toString('utf8'));
  } catch {
    // not JSON: refused below, quoted
  }
  const versions = typeof answer === 'object' && answer !== null ? (answer as { supportedVersions?: unknown }).supportedVersions : undefined;
  if (!Array.isArray(versions) || !versions.every((v) => typeof v === 'string')) {
    throw new CniError(CniCode.DECODING_FAILURE, `plugin ${plugin} answered VERSION without a list of versions: ${stdout.toString('utf8').trim()}`);
  }
  return versions;
}
