// One plugin run as libcni runs it (pkg/invoke/args.go): the runtime's whole
// environment with the six CNI_* variables set over it (all six, empty when
// the command has no value for one), the configuration bytes on stdin, and a
// failure read from the error object on stdout. Nothing is checked beyond
// types, so a test can hand a plugin what a runtime never would.
import { ErrorCodes, netnsError } from '../../core/errors.js';
import { pluginFailure, runPlugin, type SpawnPlugin } from '../invoke.js';
import type { CniCommand } from '../types.js';
import { PluginError } from './plugin-error.js';

/** `CNI_ARGS` as libcni's RuntimeConf.Args: key/value pairs, joined `K=V;K=V`. */
export type CniArgPairs = readonly (readonly [string, string])[];

/** The per-attachment values a runtime passes in the environment. */
export interface AttachmentEnv {
  /** CNI_CONTAINERID. */
  containerId?: string;
  /** CNI_NETNS: the namespace's path. */
  netns?: string;
  /** CNI_IFNAME. */
  ifname?: string;
  /** CNI_ARGS, as pairs. */
  args?: CniArgPairs;
}

/** One run of one plugin, for invokePlugin: nothing is checked beyond types, so a test can pass what a runtime never would. */
export interface PluginCall {
  /** CNI_COMMAND. */
  command: CniCommand;
  /** The executable's path. */
  plugin: string;
  /** The configuration, as the plugin reads it. */
  stdin: Buffer | string;
  /** CNI_CONTAINERID, CNI_NETNS, CNI_IFNAME, CNI_ARGS; left out (GC, STATUS, VERSION): all empty. */
  attachment?: AttachmentEnv;
  /** CNI_PATH's directories. */
  path?: readonly string[];
  /** The environment the CNI_* variables are set over (default: this process's). */
  env?: NodeJS.ProcessEnv;
  /** How to start the plugin (default: Node's spawn; NetNS.spawn runs it in a namespace). */
  spawn?: SpawnPlugin;
}

/** What a plugin that exited 0 wrote. */
export interface PluginOutput {
  /** Its stdout (ADD's result or VERSION's answer, as JSON text; '' for the other commands). */
  stdout: string;
  /** Its stderr. */
  stderr: string;
}

const COMMANDS: readonly string[] = ['ADD', 'DEL', 'CHECK', 'GC', 'STATUS', 'VERSION'];

function invalid(what: string): never {
  throw netnsError(ErrorCodes.INVALID_ARG, `invokePlugin: ${what}`);
}

/** Whether `args` is a list of [key, value] string pairs. */
export function isPairs(args: unknown): args is CniArgPairs {
  return Array.isArray(args) && args.every((pair) => Array.isArray(pair) && pair.length === 2 && pair.every((part) => typeof part === 'string'));
}

function checkAttachment(attachment: unknown): asserts attachment is AttachmentEnv | undefined {
  if (attachment === undefined) return;
  if (typeof attachment !== 'object' || attachment === null) invalid('attachment must be an object');
  const { containerId, netns, ifname, args } = attachment as Record<string, unknown>;
  if (![containerId, netns, ifname].every((v) => v === undefined || typeof v === 'string')) invalid('containerId, netns and ifname must be strings');
  if (args !== undefined && !isPairs(args)) invalid('args must be a list of [key, value] string pairs');
}

function checkCall(call: PluginCall): void {
  if (typeof call !== 'object' || call === null) invalid('takes one object: { command, plugin, stdin, ... }');
  if (!COMMANDS.includes(call.command)) invalid(`command must be one of ${COMMANDS.join(', ')}, got ${String(call.command)}`);
  if (typeof call.plugin !== 'string' || call.plugin === '') invalid('plugin must be the path of an executable');
  if (typeof call.stdin !== 'string' && !Buffer.isBuffer(call.stdin)) invalid('stdin must be a Buffer or a string');
  checkAttachment(call.attachment);
  if (call.path !== undefined && !(Array.isArray(call.path) && call.path.every((dir) => typeof dir === 'string'))) invalid('path must be a list of directories');
  if (call.env !== undefined && (typeof call.env !== 'object' || call.env === null)) invalid('env must be an object');
  if (call.spawn !== undefined && typeof call.spawn !== 'function') invalid('spawn must be a function');
}

/** The environment libcni gives a plugin: `base`, then the six CNI_* variables over it. */
function pluginEnv(command: CniCommand, attachment: AttachmentEnv = {}, path: readonly string[] = [], base: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return {
    ...base,
    CNI_COMMAND: command,
    CNI_CONTAINERID: attachment.containerId ?? '',
    CNI_NETNS: attachment.netns ?? '',
    CNI_ARGS: (attachment.args ?? []).map(([key, value]) => `${key}=${value}`).join(';'),
    CNI_IFNAME: attachment.ifname ?? '',
    CNI_PATH: path.join(':'),
  };
}

/**
 * Runs one plugin once; its stdout and stderr when it exits 0. A non-zero exit
 * is a PluginError with the code, msg and details it printed (else its
 * stderr as the message, as Go's invoke reports it) and its stderr.
 */
export async function invokePlugin(call: PluginCall): Promise<PluginOutput> {
  checkCall(call);
  const env = pluginEnv(call.command, call.attachment, call.path, call.env);
  const exit = await runPlugin(call.plugin, call.stdin, env, call.spawn);
  const stderr = exit.stderr.toString('utf8');
  if (exit.code !== 0) throw new PluginError(pluginFailure(call.plugin, exit), { command: call.command, plugin: call.plugin, stderr });
  return { stdout: exit.stdout.toString('utf8'), stderr };
}
