// A runtime's side of CNI for a plugin's tests: what libcni's CNIConfig does
// (libcni/api.go) with a network configuration list, so a plugin meets in a
// test what it meets under containerd or CRI-O. ADD runs the chain in order,
// each plugin given the previous one's result as it printed it (in its own
// version, as libcni passes it on); the last result is cached. CHECK runs in
// order and DEL in reverse, both given the cached result converted to the
// list's version; DEL then removes it. The first failure ends ADD, CHECK, DEL
// and STATUS (a failed ADD leaves the cleanup to DEL, as a runtime does); GC
// goes on past failures and reports them all.
import { ErrorCodes, netnsError, type NetnsError } from '../../core/errors.js';
import { CniCode, CniError } from '../errors.js';
import { findInPath, readPluginResult, type SpawnPlugin } from '../invoke.js';
import { convertResult, parseResult, type WireResult } from '../result.js';
import type { Attachment, CniCommand, Result } from '../types.js';
import { INTRODUCED, versionAtLeast } from '../version.js';
import { isKeyPart, ResultCache, type CacheEntry } from './cache.js';
import { assertList, attachmentConfig, inject, type NetworkConfigList, type PluginConf } from './conflist.js';
import { invokePlugin, isPairs, type AttachmentEnv, type CniArgPairs, type PluginOutput } from './invocation.js';
import { PluginError } from './plugin-error.js';

/** libcni's RuntimeConf: one attachment of a container to the network. */
export interface RuntimeConf {
  /** CNI_CONTAINERID (non-empty, no /: it names the cache file). */
  containerId: string;
  /** The container's network namespace path ('' for a DEL after it is gone). */
  netns: string;
  /** CNI_IFNAME: the interface to make inside the container (non-empty, no /). */
  ifname: string;
  /** CNI_ARGS, as pairs. */
  args?: CniArgPairs;
  /** What the runtime offers per capability (portMappings, mac, ...); each plugin gets those it declares, as runtimeConfig. */
  capabilityArgs?: Record<string, unknown>;
}

/** What CniHarness takes: where plugins are found, where results are cached, and how plugins run. */
export interface HarnessOptions {
  /** CNI_PATH: where plugins are found by their `type`, in order. */
  path: readonly string[];
  /** Stands for libcni's cacheDir (/var/lib/cni on a node): results are cached under <cacheDir>/results. */
  cacheDir: string;
  /** The environment plugins get, CNI_* set over it (default: this process's). */
  env?: NodeJS.ProcessEnv;
  /** How a plugin is started (default: Node's spawn). Pass a namespace's spawn to run plugins in a namespace that stands for the host. */
  spawn?: SpawnPlugin;
}

/** What CniHarness.add resolves with: the chain's last result, parsed and as printed. */
export interface ChainResult {
  /** The last plugin's result, read by its own cniVersion, in the current shape. */
  result: Result;
  /** The same as it was printed, in its own cniVersion: what was cached. */
  printed: WireResult;
}

/** GC's argument: the attachments the runtime still holds. Without it, libcni deletes every cached attachment of the network and sends no list. */
export interface GcArgs {
  /** The attachments still in use; every cached one of the network not listed is deleted. */
  validAttachments: Attachment[];
}

function invalid(what: string): never {
  throw netnsError(ErrorCodes.INVALID_ARG, what);
}

function checkRuntime(rt: RuntimeConf): void {
  if (typeof rt !== 'object' || rt === null) invalid('the runtime configuration must be an object: { containerId, netns, ifname, args?, capabilityArgs? }');
  if (!isKeyPart(rt.containerId) || !isKeyPart(rt.ifname)) invalid('containerId and ifname must be non-empty strings without / (they name the cache file)');
  if (typeof rt.netns !== 'string') invalid('netns must be a string (empty for a namespace that is gone)');
  if (rt.args !== undefined && !isPairs(rt.args)) invalid('args must be a list of [key, value] string pairs');
  const caps = rt.capabilityArgs;
  if (caps !== undefined && (typeof caps !== 'object' || caps === null || Array.isArray(caps))) invalid('capabilityArgs must be an object');
}

function checkOptions(options: HarnessOptions): void {
  if (typeof options !== 'object' || options === null) invalid('CniHarness takes { path, cacheDir, env?, spawn? }');
  if (!Array.isArray(options.path) || !options.path.every((dir) => typeof dir === 'string')) invalid('path must be a list of directories');
  if (typeof options.cacheDir !== 'string' || options.cacheDir === '') invalid('cacheDir must be a directory path');
  if (options.env !== undefined && (typeof options.env !== 'object' || options.env === null)) invalid('env must be an object');
  if (options.spawn !== undefined && typeof options.spawn !== 'function') invalid('spawn must be a function');
}

function checkGcArgs(args: GcArgs | undefined): void {
  if (args === undefined) return;
  const list = typeof args === 'object' && args !== null ? args.validAttachments : undefined;
  if (!Array.isArray(list) || !list.every((a) => typeof a?.containerID === 'string' && typeof a.ifname === 'string')) {
    invalid('GC takes { validAttachments: [{ containerID, ifname }, ...] }');
  }
}

const attachmentKey = (containerId: string, ifname: string): string => JSON.stringify([containerId, ifname]);

/**
 * GC's one rejection: a NetnsError (as every error of this package) naming the
 * network and the first failure; `errors` lists them all, as AggregateError's
 * did before, and the cause is an AggregateError of them, which inspect shows.
 */
function gcFailed(network: string, errors: unknown[]): NetnsError & { errors: unknown[] } {
  const first = errors[0] instanceof Error ? errors[0].message : String(errors[0]);
  const message = `GC of network ${network}: ${errors.length} failed, the first: ${first}`;
  const error = netnsError(ErrorCodes.CNI_GC_UNRELEASED, message, { cause: new AggregateError(errors, message) });
  return Object.assign(error, { errors });
}

/** The runtime configuration a cache entry recorded, for GC's DEL of a stale attachment. */
function runtimeOf(entry: CacheEntry): RuntimeConf {
  return { containerId: entry.containerId, netns: entry.netns ?? '', ifname: entry.ifName, args: entry.cniArgs, capabilityArgs: entry.capabilityArgs };
}

/**
 * A container runtime's side of CNI, as libcni runs a network configuration
 * list, for a plugin's own tests: the plugin runs as an executable (found in
 * `path` by its `type`) with the environment, stdin, prevResult chaining and
 * result cache a runtime gives it, so it meets in a test what it meets under
 * containerd or CRI-O. Every command is async; a plugin's failure rejects
 * with a PluginError (its CNI code, message, stderr: the CNI protocol's
 * answer, not a NetnsError; GC gathers failures in one NetnsError
 * ERR_NETNS_CNI_GC_UNRELEASED), the result cache's file errors and misuse
 * (ERR_NETNS_INVALID_ARG) with a NetnsError. It never loads the addon: it
 * works in any test runner, and needs root only for what the plugin itself does.
 */
export class CniHarness {
  /** The result cache, to read what a runtime would keep or seed what an older one kept. */
  readonly cache: ResultCache;
  readonly #path: readonly string[];
  readonly #env: NodeJS.ProcessEnv | undefined;
  readonly #spawn: SpawnPlugin | undefined;

  constructor(options: HarnessOptions) {
    checkOptions(options);
    this.cache = new ResultCache(options.cacheDir);
    this.#path = [...options.path];
    this.#env = options.env;
    this.#spawn = options.spawn;
  }

  /** ADD through the chain; the last result is cached and returned. */
  async add(list: NetworkConfigList, rt: RuntimeConf): Promise<ChainResult> {
    assertList(list, 'add');
    checkRuntime(rt);
    let printed: WireResult | undefined;
    for (const plugin of list.plugins) printed = await this.#addOne(list, plugin, printed, rt);
    await this.cache.write(list.name, rt, list.bytes, printed!);
    return { result: parseResult(printed), printed: printed! };
  }

  /** CHECK through the chain with the cached result; code 1 below 0.4.0; nothing runs when the list has disableCheck. */
  async check(list: NetworkConfigList, rt: RuntimeConf): Promise<void> {
    assertList(list, 'check');
    checkRuntime(rt);
    if (!versionAtLeast(list.cniVersion, INTRODUCED.CHECK)) {
      throw new CniError(CniCode.INCOMPATIBLE_VERSION, `configuration version ${JSON.stringify(list.cniVersion)} does not support the CHECK command`);
    }
    if (list.disableCheck) return;
    const prevResult = await this.cachedResult(list, rt);
    for (const plugin of list.plugins) await this.#attachment('CHECK', list, plugin, prevResult, rt);
  }

  /** DEL through the chain in reverse, with the cached result from 0.4.0 on (an unreadable one is dropped); the cache entry goes after. */
  async del(list: NetworkConfigList, rt: RuntimeConf): Promise<void> {
    assertList(list, 'del');
    checkRuntime(rt);
    // prevResult on DEL came with CHECK, in 0.4.0.
    const prevResult = versionAtLeast(list.cniVersion, INTRODUCED.CHECK) ? await this.#cachedOrDropped(list, rt) : undefined;
    for (const plugin of [...list.plugins].reverse()) await this.#attachment('DEL', list, plugin, prevResult, rt);
    await this.cache.delete(list.name, rt);
  }

  /**
   * GC: DEL of every cached attachment of this network not in
   * `args.validAttachments`, then (from 1.1.0) GC by each plugin with the
   * list under both keys libcni sends (cni#1101). It goes on past failures
   * and then rejects with one NetnsError ERR_NETNS_CNI_GC_UNRELEASED whose
   * `errors` are the failures in order (PluginErrors, or NetnsErrors), its
   * `cause` an AggregateError of them. Nothing runs when the list has disableGC.
   */
  async gc(list: NetworkConfigList, args?: GcArgs): Promise<void> {
    assertList(list, 'gc');
    checkGcArgs(args);
    if (list.disableGC) return;
    const errors: unknown[] = [];
    const valid = new Set(args?.validAttachments.map((a) => attachmentKey(a.containerID, a.ifname)));
    for (const entry of await this.cache.list()) {
      if (entry.networkName !== list.name || valid.has(attachmentKey(entry.containerId, entry.ifName))) continue;
      await this.del(list, runtimeOf(entry)).catch((error: unknown) => errors.push(error));
    }
    if (versionAtLeast(list.cniVersion, INTRODUCED.GC)) {
      const attachments = args ? { 'cni.dev/valid-attachments': args.validAttachments, 'cni.dev/attachments': args.validAttachments } : {};
      for (const plugin of list.plugins) {
        await this.#listLevel('GC', list, plugin, attachments).catch((error: unknown) => errors.push(error));
      }
    }
    if (errors.length > 0) throw gcFailed(list.name, errors);
  }

  /** STATUS by each plugin in order, until one fails; below 1.1.0 nothing runs (libcni returns success). */
  async status(list: NetworkConfigList): Promise<void> {
    assertList(list, 'status');
    if (!versionAtLeast(list.cniVersion, INTRODUCED.STATUS)) return;
    for (const plugin of list.plugins) await this.#listLevel('STATUS', list, plugin, {});
  }

  /** The cached result of this attachment converted to the list's version, as CHECK and DEL pass it; undefined when none is cached. */
  async cachedResult(list: NetworkConfigList, rt: RuntimeConf): Promise<WireResult | undefined> {
    assertList(list, 'cachedResult');
    checkRuntime(rt);
    const entry = await this.cache.read(list.name, rt);
    return entry && convertResult(parseResult(entry.result, list.cniVersion, 'the cached result'), list.cniVersion);
  }

  /** DEL's prevResult: an entry that cannot be read is removed, as libcni does, so DEL still runs and can succeed. */
  async #cachedOrDropped(list: NetworkConfigList, rt: RuntimeConf): Promise<WireResult | undefined> {
    try {
      return await this.cachedResult(list, rt);
    } catch {
      await this.cache.delete(list.name, rt);
      return undefined;
    }
  }

  async #addOne(list: NetworkConfigList, plugin: PluginConf, prevResult: WireResult | undefined, rt: RuntimeConf): Promise<WireResult> {
    const { stdout, stderr, pluginPath } = await this.#attachment('ADD', list, plugin, prevResult, rt);
    try {
      const { result, version } = readPluginResult(stdout, list.cniVersion, plugin.type);
      return convertResult(result, version);
    } catch (error) {
      throw error instanceof CniError ? new PluginError(error, { command: 'ADD', plugin: pluginPath, stderr }) : error;
    }
  }

  #attachment(command: 'ADD' | 'CHECK' | 'DEL', list: NetworkConfigList, plugin: PluginConf, prevResult: WireResult | undefined, rt: RuntimeConf) {
    return this.#run(command, plugin, attachmentConfig(list, plugin, prevResult, rt.capabilityArgs), rt);
  }

  /** GC and STATUS: the plugin's configuration with only the list's name and version (and GC's attachments), no runtimeConfig, no CNI_CONTAINERID. */
  #listLevel(command: 'GC' | 'STATUS', list: NetworkConfigList, plugin: PluginConf, extra: Record<string, unknown>) {
    return this.#run(command, plugin, inject(plugin, { name: list.name, cniVersion: list.cniVersion, ...extra }));
  }

  async #run(command: CniCommand, plugin: PluginConf, stdin: Buffer, attachment?: AttachmentEnv): Promise<PluginOutput & { pluginPath: string }> {
    const pluginPath = await findInPath(plugin.type, this.#path);
    const output = await invokePlugin({ command, plugin: pluginPath, stdin, attachment, path: this.#path, env: this.#env, spawn: this.#spawn });
    if (output.stderr) process.stderr.write(output.stderr); // as libcni does: a plugin's logs go to the runtime's stderr
    return { ...output, pluginPath };
  }
}
