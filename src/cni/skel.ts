// pluginMain: a plugin's whole main, as Go's skel is. It reads the command
// from the environment and the configuration from stdin, checks both, calls
// the handler for the command, and prints what the spec says: ADD's result in
// the configuration's version, nothing for the other commands, the error
// object (with cniVersion) on stdout and a non-zero exit on failure.
import { ErrorCodes, netnsError } from '../core/errors.js';
import { own } from '../core/own.js';
import { NetNS } from '../netns.js';
import { CNI_NAME, readEnvironment, type Environment } from './env.js';
import { CniCode, CniError, toCniError } from './errors.js';
import { CallHost } from './host-ns.js';
import { convertResult, type WireResult } from './result.js';
import { checkNetns } from './sandbox.js';
import { noteStdioStreams, readStdin, waitForStreams, writeOut } from './stdio.js';
import type { CniCommand, NetConf, Result } from './types.js';
import { assertSupported, CURRENT_VERSION, INTRODUCED, isSpecVersion, versionAtLeast, versionOf } from './version.js';

/** What a handler is given: the environment, read and checked, and the configuration. */
export interface CmdArgs<C extends NetConf = NetConf> {
  /** CNI_COMMAND: which handler is running (VERSION never reaches one). */
  command: Exclude<CniCommand, 'VERSION'>;
  /** CNI_CONTAINERID: the container's id ('' when not given: GC and STATUS need none). */
  containerId: string;
  /** CNI_IFNAME: the interface's name inside the container ('' when not given: GC and STATUS need none). */
  ifname: string;
  /** CNI_NETNS as the runtime gave it ('' when it gave none, which only DEL, GC and STATUS allow). */
  netns: string;
  /**
   * DEL only: true when CNI_NETNS is empty, gone, or no longer a namespace.
   * The handler then cleans up what lives outside it (host routes, IPAM,
   * firewall rules) and succeeds; the container's interface went with it.
   */
  netnsGone: boolean;
  /** CNI_ARGS as given: parseCniArgs reads it. */
  args: string;
  /** CNI_PATH's directories. */
  path: string[];
  /**
   * The namespace the plugin acts in as the host: where host ends, host
   * routes, masquerade rules and address sets go, as a plugin process acts
   * where it is run. Under pluginMain, the process's own (opened when first
   * read); in resident mode, the namespace the shim was run in, which need not
   * be the daemon's. The call closes it when it ends: a handler does not
   * (no `using`), and does not keep it past its end.
   */
  hostNs: NetNS;
  /**
   * The call's whole environment: what a delegate is run with (execAdd(args)
   * and the other IPAM calls take it from here). process.env for a plugin run
   * as a process; in resident mode, the environment the shim forwarded.
   */
  env: CallEnvironment;
  /** The configuration's bytes, as received: what a delegated (IPAM) plugin gets on its stdin. */
  stdin: Buffer;
  /** The configuration, parsed; only cniVersion and name have been checked, the plugin checks its own keys. */
  config: C;
  /**
   * Aborted when the call is abandoned: in resident mode, when its caller
   * went away (the shim gave up at NETNS_CNI_TIMEOUT or was killed) or, for
   * an ADD, when a DEL of the same attachment came. Its reason is the
   * CniError to fail with. A handler checks it between steps
   * (`signal.throwIfAborted()`) and undoes what it made, so that an abandoned
   * ADD leaves nothing behind; delegates (IPAM) are killed when it aborts.
   * Never aborted under pluginMain, whose process the runtime kills instead.
   */
  signal: AbortSignal;
}

/** A call's environment variables, as process.env holds them. */
export type CallEnvironment = Readonly<Record<string, string | undefined>>;

/** One command's handler in PluginFunctions: gets the call's CmdArgs, returns (or resolves with) R. */
export type Handler<C extends NetConf, R> = (args: CmdArgs<C>) => R | Promise<R>;

/**
 * A plugin's handlers, one per command, for pluginMain, handleCall or
 * serveResident. Each gets the call's CmdArgs and may be async; what it
 * throws becomes the printed error object (a CniError keeps its code,
 * anything else is code 999).
 */
export interface PluginFunctions<C extends NetConf = NetConf> {
  /** Returns the result (in any version, usually built as 1.x); pluginMain prints it in the configuration's version. */
  add: Handler<C, Result>;
  /**
   * Removes what ADD made; must succeed when it is already gone (DEL may come
   * twice, or after a failed ADD). With `netnsGone`, only what lives outside
   * the namespace is left to clean up.
   */
  del: Handler<C, void>;
  /** Throws when the attachment is not as ADD left it (config.prevResult is ADD's result). Only for configurations of 0.4.0 and later. */
  check: Handler<C, void>;
  /** Without one, GC succeeds (there is nothing of this plugin's to collect), as with Go's skel. */
  gc?: Handler<C, void>;
  /** Without one, STATUS succeeds (the plugin is taken to be always ready), as with Go's skel. */
  status?: Handler<C, void>;
}

/** What pluginMain tells the runtime about the plugin: the versions it speaks, and an about line. */
export interface PluginInfo {
  /** The spec versions this plugin speaks; a configuration's must be one of them exactly. */
  versions: readonly string[];
  /** Printed on stderr when the plugin is run without CNI_COMMAND, e.g. "CNI plugin ptp v1.2.0". */
  about?: string;
}

/** What one call printed and how it ended, for pluginMain or a resident daemon to pass on. */
export interface CallOutcome {
  /** What goes to stdout: ADD's result, VERSION's answer or the error object (JSON and a newline); empty otherwise. */
  stdout: Buffer;
  /** What goes to stderr: the about text when there was no CNI_COMMAND, else ''. */
  stderr: string;
  /** 0 on success, 1 when stdout holds an error object. */
  exitCode: number;
}

/** handleCall's options. */
export interface HandleCallOptions {
  /** The call's CmdArgs.signal (default: one never aborted); see CmdArgs.signal. */
  signal?: AbortSignal;
  /**
   * The call's CmdArgs.hostNs, also the namespace CNI_NETNS must not be
   * (default: the calling thread's, opened for the call if asked for). It
   * stays the caller's: open until handleCall settles, closed by the caller.
   */
  hostNs?: NetNS;
}

/** The caller's options, checked; a fresh signal, never aborted, when none was given. */
function callOptions(options: HandleCallOptions): { signal: AbortSignal; hostNs: NetNS | undefined } {
  if (typeof options !== 'object' || options === null) throw netnsError(ErrorCodes.INVALID_ARG, 'handleCall\'s options must be an object');
  const { signal, hostNs } = own(options);
  if (signal !== undefined && !(signal instanceof AbortSignal)) throw netnsError(ErrorCodes.INVALID_ARG, 'handleCall\'s options.signal must be an AbortSignal');
  if (hostNs !== undefined && !(hostNs instanceof NetNS)) throw netnsError(ErrorCodes.INVALID_ARG, 'handleCall\'s options.hostNs must be a NetNS');
  return { signal: signal ?? new AbortController().signal, hostNs };
}

const HANDLER_OF = { ADD: 'add', DEL: 'del', CHECK: 'check', GC: 'gc', STATUS: 'status' } as const;

/** Misuse (a missing handler, no versions) is ERR_NETNS_INVALID_ARG; checked once, before any call. */
export function checkArguments(funcs: PluginFunctions<never>, info: PluginInfo, caller = 'pluginMain'): void {
  for (const name of ['add', 'del', 'check', 'gc', 'status'] as const) {
    const given = funcs?.[name];
    const optional = name === 'gc' || name === 'status';
    if (typeof given !== 'function' && !(optional && given === undefined)) {
      throw netnsError(ErrorCodes.INVALID_ARG, `${caller} needs ${name} as a function${optional ? ' or left out' : ''}`);
    }
  }
  const versions = info?.versions;
  if (!Array.isArray(versions) || versions.length === 0 || !versions.every(isSpecVersion)) {
    throw netnsError(ErrorCodes.INVALID_ARG, `${caller} needs info.versions: a non-empty list of spec versions (0.1.0 to 1.1.0)`);
  }
  if (info.about !== undefined && typeof info.about !== 'string') throw netnsError(ErrorCodes.INVALID_ARG, 'info.about must be a string');
}

async function readProcessStdin(): Promise<Buffer> {
  try {
    return await readStdin();
  } catch (error) {
    throw new CniError(CniCode.IO_FAILURE, `error reading the configuration from stdin: ${(error as Error).message}`);
  }
}

/** The configuration: a JSON object, else code 6. */
function decodeConfig(stdin: Buffer): NetConf {
  let config: unknown;
  try {
    config = JSON.parse(stdin.toString('utf8'));
  } catch (error) {
    throw new CniError(CniCode.DECODING_FAILURE, `error decoding the network configuration: ${(error as Error).message}`);
  }
  if (typeof config !== 'object' || config === null || Array.isArray(config)) {
    throw new CniError(CniCode.DECODING_FAILURE, 'error decoding the network configuration: it is not a JSON object');
  }
  return config as NetConf;
}

/** Code 7 unless the network has a name of the characters CNI allows. */
function checkName(config: NetConf): void {
  const name = Object.hasOwn(config, 'name') ? (config as { name: unknown }).name : undefined;
  if (name === undefined || name === '') throw new CniError(CniCode.INVALID_NETWORK_CONFIG, 'missing network name');
  if (typeof name !== 'string' || !CNI_NAME.test(name)) {
    throw new CniError(CniCode.INVALID_NETWORK_CONFIG, 'invalid characters in the network name', JSON.stringify(name));
  }
}

/** Code 1 unless the configuration's version has this command and is one the plugin speaks. */
function checkVersion(command: CniCommand, version: string, info: PluginInfo): void {
  const introduced = (INTRODUCED as Partial<Record<CniCommand, string>>)[command];
  if (introduced && !versionAtLeast(version, introduced)) {
    throw new CniError(CniCode.INCOMPATIBLE_VERSION, `config version does not allow ${command}`, `${command} came in spec ${introduced}; the config is ${version}`);
  }
  assertSupported(version, info.versions);
}

/** Runs one invocation; returns what goes to stdout on success (ADD's result), or undefined. */
async function dispatch<C extends NetConf>(env: Environment, whole: CallEnvironment, stdin: Buffer, config: C, version: string, funcs: PluginFunctions<C>, options: ReturnType<typeof callOptions>): Promise<WireResult | undefined> {
  const command = env.command as CmdArgs['command'];
  const handler: Handler<C, Result | void> | undefined = funcs[HANDLER_OF[command]];
  if (!handler) return undefined;
  using host = new CallHost(options.hostNs);
  const netnsGone = await checkNetns(env, () => host.identity());
  const { containerId, ifname, netns, args, path } = env;
  const { signal } = options;
  signal.throwIfAborted(); // abandoned while it waited (resident mode): nothing was made, nothing to undo
  const cmdArgs: CmdArgs<C> = {
    command,
    containerId,
    ifname,
    netns,
    netnsGone,
    args,
    path,
    env: whole,
    stdin,
    config,
    signal,
    get hostNs() {
      return host.ns;
    },
  };
  // Called as a method: a plugin may keep its handlers on a class.
  const returned = await Reflect.apply(handler, funcs, [cmdArgs]);
  if (command !== 'ADD') return undefined;
  if (returned === undefined) throw new CniError(CniCode.INTERNAL, 'the plugin\'s ADD handler returned no result');
  return convertResult(returned, version);
}

/**
 * One call, from its environment and stdin to what it prints and its exit
 * code, touching no process state: pluginMain runs it for its own process, a
 * resident daemon for each call a shim forwards (several at once). With no
 * CNI_COMMAND it gives `about` and the versions on stderr and exit 0. VERSION
 * is answered here, without reading stdin. Otherwise: the environment (code
 * 4), the configuration (6, 7) and its version (1; CHECK needs 0.4.0, GC and
 * STATUS 1.1.0) are checked, then CNI_NETNS (code 8; see sandbox.ts), and only
 * then the handler runs. A CniError it throws is printed as is, a CHECK
 * helper's finding as code 110 (CniCode.CHECK_FAILED), anything else as code
 * 999, each with its message; nothing a call brings makes it reject. Its own
 * arguments are checked first, as checkArguments does for pluginMain: a
 * missing handler, versions, env or readStdin rejects with ERR_NETNS_INVALID_ARG.
 * `options.signal` becomes the handler's CmdArgs.signal: a call whose signal
 * is aborted before its handler starts fails with the signal's reason unrun;
 * `options.hostNs` its CmdArgs.hostNs.
 */
export async function handleCall<C extends NetConf>(funcs: PluginFunctions<C>, info: PluginInfo, env: CallEnvironment, readStdin: () => Promise<Buffer>, options: HandleCallOptions = {}): Promise<CallOutcome> {
  // The caller's slips, not the runtime's: rejected, never answered as a CNI error.
  checkArguments(funcs as PluginFunctions<never>, info, 'handleCall');
  if (typeof env !== 'object' || env === null) throw netnsError(ErrorCodes.INVALID_ARG, 'handleCall needs env: the call\'s environment variables (an object)');
  if (typeof readStdin !== 'function') throw netnsError(ErrorCodes.INVALID_ARG, 'handleCall needs readStdin: a function resolving with the configuration\'s bytes');
  const given = callOptions(options);
  if (!env.CNI_COMMAND) return { stdout: Buffer.alloc(0), stderr: about(info), exitCode: 0 };
  let version = CURRENT_VERSION; // the error object's, until the configuration says otherwise
  try {
    const checked = readEnvironment(env);
    if (checked.command === 'VERSION') return printed({ cniVersion: CURRENT_VERSION, supportedVersions: [...info.versions] }, 0);
    const stdin = await readStdin();
    const config = decodeConfig(stdin);
    version = versionOf(config);
    checkName(config);
    checkVersion(checked.command, version, info);
    const result = await dispatch(checked, env, stdin, config as C, version, funcs, given);
    return result ? printed(result, 0) : { stdout: Buffer.alloc(0), stderr: '', exitCode: 0 };
  } catch (error) {
    return printed(toCniError(error).toErrorObject(version), 1);
  }
}

/**
 * Ends the process as soon as stdout and stderr have taken everything written
 * (a pipe the runtime is slow to read included): the runtime is waiting for the
 * exit, and Node's own ending (waiting out handles, freeing the heap) takes
 * longer than many a command. Never resolves.
 */
async function exitOnceWritten(): Promise<never> {
  await waitForStreams();
  process.exit();
}

/**
 * The main of a CNI plugin: handleCall for this process's environment and
 * stdin. After a command (not VERSION or no command) the process exits once
 * its output is written, 0 or 1. Misuse (a missing handler, no versions)
 * rejects with ERR_NETNS_INVALID_ARG.
 */
export async function pluginMain<C extends NetConf = NetConf>(funcs: PluginFunctions<C>, info: PluginInfo): Promise<void> {
  checkArguments(funcs as PluginFunctions<never>, info);
  noteStdioStreams();
  const outcome = await handleCall(funcs, info, process.env, readProcessStdin);
  if (outcome.stderr !== '') writeOut(2, outcome.stderr);
  if (outcome.stdout.length > 0) writeOut(1, outcome.stdout);
  if (outcome.exitCode !== 0) process.exitCode = outcome.exitCode;
  if (process.env.CNI_COMMAND && process.env.CNI_COMMAND !== 'VERSION') await exitOnceWritten();
}

function printed(value: object, exitCode: number): CallOutcome {
  return { stdout: Buffer.from(`${JSON.stringify(value)}\n`), stderr: '', exitCode };
}

function about(info: PluginInfo): string {
  return `${info.about ? `${info.about}\n` : ''}CNI protocol versions supported: ${info.versions.join(', ')}\n`;
}
