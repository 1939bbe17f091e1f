// A network configuration list read as libcni reads one (libcni/conf.go,
// NetworkConfFromBytes), and the bytes each plugin of it is given (api.go,
// buildOneConfig): the list's name and chosen version injected into every
// plugin, runtimeConfig cut down to the capabilities the plugin declares, and
// the previous result. Malformed input is the harness caller's mistake, so it
// is ERR_NETNS_INVALID_ARG rather than a CNI error code.
import { readFile } from 'node:fs/promises';
import { ErrorCodes, fromNodeError, netnsError } from '../../core/errors.js';
import { CNI_NAME } from '../env.js';
import type { WireResult } from '../result.js';
import { CURRENT_VERSION, isVersionText, versionAtLeast } from '../version.js';

/** One plugin's entry in a list: its `type` names the executable; the rest is the plugin's own. */
export interface PluginConf {
  /** The plugin's executable name, found in the harness's path. */
  type: string;
  /** Capabilities it declares: it is given runtimeConfig for those only. */
  capabilities?: Record<string, boolean>;
  [key: string]: unknown;
}

/** A network configuration list (.conflist) as parseConfList read and checked it, for CniHarness. */
export interface NetworkConfigList {
  /** The network's name, given to every plugin. */
  readonly name: string;
  /** What every plugin is given: the highest of `cniVersion` and those `cniVersions` not newer than 1.1.0. */
  readonly cniVersion: string;
  /** CHECK runs no plugin (libcni's disableCheck). */
  readonly disableCheck: boolean;
  /** GC runs no plugin and deletes nothing (libcni's disableGC). */
  readonly disableGC: boolean;
  /** The chain, in ADD order (at least one). */
  readonly plugins: readonly PluginConf[];
  /** The list as given, which the result cache keeps (base64, as libcni writes it). */
  readonly bytes: Buffer;
}

type Json = Record<string, unknown>;

function invalid(what: string): never {
  throw netnsError(ErrorCodes.INVALID_ARG, `network configuration list: ${what}`);
}

function own(json: Json, key: string): unknown {
  return Object.hasOwn(json, key) ? json[key] : undefined;
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The list's bytes (an object is serialized, so later changes to it do not reach the list) and their parse. */
function decode(source: string | Buffer | object): { json: Json; bytes: Buffer } {
  let bytes: Buffer;
  if (typeof source === 'string' || Buffer.isBuffer(source)) bytes = Buffer.from(source);
  else if (isObject(source)) bytes = Buffer.from(JSON.stringify(source));
  else invalid('give its text, its bytes or a parsed object');
  let json: unknown;
  try {
    json = JSON.parse(bytes.toString('utf8'));
  } catch (error) {
    invalid(`not JSON: ${(error as Error).message}`);
  }
  if (!isObject(json)) invalid('not a JSON object');
  return { json, bytes };
}

/** libcni's choice: the highest of cniVersion and the cniVersions this spec knows (newer ones are skipped, not refused). */
function chooseVersion(json: Json): string {
  const given = own(json, 'cniVersion');
  const list = own(json, 'cniVersions');
  if (given !== undefined && !isVersionText(given)) invalid(`cniVersion must be a version X.Y.Z, got ${JSON.stringify(given)}`);
  if (list !== undefined && (!Array.isArray(list) || !list.every(isVersionText))) invalid('cniVersions must be a list of versions X.Y.Z');
  if (list === undefined) return given ?? invalid('cniVersion (or cniVersions) is required');
  const candidates = [...list, ...(given === undefined ? [] : [given])].filter((v) => versionAtLeast(CURRENT_VERSION, v));
  if (candidates.length === 0) invalid(`none of cniVersion and cniVersions is ${CURRENT_VERSION} or older`);
  return candidates.reduce((best, v) => (versionAtLeast(v, best) ? v : best));
}

/** A boolean, or the strings true/false in any case, as libcni reads disableCheck and disableGC. */
function flag(json: Json, key: string): boolean {
  const value = own(json, key);
  if (value === undefined || typeof value === 'boolean') return value === true;
  if (typeof value === 'string' && ['true', 'false'].includes(value.toLowerCase())) return value.toLowerCase() === 'true';
  invalid(`${key} must be a boolean, got ${JSON.stringify(value)}`);
}

function plugin(value: unknown, index: number): PluginConf {
  if (!isObject(value)) invalid(`plugins[${index}] must be an object`);
  const type = own(value, 'type');
  if (typeof type !== 'string' || type === '') invalid(`plugins[${index}] has no type`);
  const capabilities = own(value, 'capabilities');
  if (capabilities !== undefined && !(isObject(capabilities) && Object.values(capabilities).every((v) => typeof v === 'boolean'))) {
    invalid(`plugins[${index}].capabilities must map names to booleans`);
  }
  return value as PluginConf;
}

/**
 * Reads a conflist (its text, bytes, or the parsed object) as libcni does:
 * name, chosen version, flags and plugins, checked. Synchronous; malformed
 * input throws ERR_NETNS_INVALID_ARG saying what is wrong.
 */
export function parseConfList(source: string | Buffer | object): NetworkConfigList {
  const { json, bytes } = decode(source);
  const name = own(json, 'name');
  if (typeof name !== 'string' || !CNI_NAME.test(name)) invalid(`name must match ${String(CNI_NAME)}, got ${JSON.stringify(name)}`);
  const plugins = own(json, 'plugins');
  if (!Array.isArray(plugins) || plugins.length === 0) invalid('plugins must be a non-empty list');
  return {
    name,
    cniVersion: chooseVersion(json),
    disableCheck: flag(json, 'disableCheck'),
    disableGC: flag(json, 'disableGC'),
    plugins: plugins.map(plugin),
    bytes,
  };
}

/** ERR_NETNS_INVALID_ARG unless `list` has the shape parseConfList gives. */
export function assertList(list: unknown, caller: string): asserts list is NetworkConfigList {
  const { name, cniVersion, plugins, bytes } = isObject(list) ? list : {};
  // The name is checked again: a list put together by hand must not name a cache file outside the cache.
  if (typeof name !== 'string' || !CNI_NAME.test(name) || typeof cniVersion !== 'string' || !Array.isArray(plugins) || plugins.length === 0 || !Buffer.isBuffer(bytes)) {
    throw netnsError(ErrorCodes.INVALID_ARG, `${caller} takes a network configuration list from parseConfList or loadConfList`);
  }
}

/**
 * Reads a .conflist file, as parseConfList. Async. A file that cannot be read
 * rejects with a NetnsError carrying Node's code (ENOENT, EACCES, EISDIR...),
 * errno, syscall and path, Node's error as `cause`; malformed content with
 * ERR_NETNS_INVALID_ARG.
 */
export async function loadConfList(file: string): Promise<NetworkConfigList> {
  if (typeof file !== 'string') throw netnsError(ErrorCodes.INVALID_ARG, 'loadConfList takes a file path');
  const bytes = await readFile(file).catch((error: unknown) => {
    throw fromNodeError(error, '(loadConfList)');
  });
  return parseConfList(bytes);
}

/** The capability arguments this plugin declares (capabilities: { name: true }), as libcni filters them into runtimeConfig. */
function runtimeConfigOf(plugin: PluginConf, capabilityArgs: Record<string, unknown>): Json {
  const declared = isObject(plugin.capabilities) ? plugin.capabilities : {};
  return Object.fromEntries(Object.entries(capabilityArgs).filter(([name]) => Object.hasOwn(declared, name) && declared[name] === true));
}

/** The plugin's configuration with `values` set over it, as the bytes it reads on stdin. */
export function inject(plugin: PluginConf, values: Json): Buffer {
  return Buffer.from(JSON.stringify({ ...plugin, ...values }));
}

/**
 * What one plugin reads for ADD, CHECK or DEL: name and cniVersion from the
 * list, prevResult when there is one, and runtimeConfig only when some
 * capability matched (else the plugin's own runtimeConfig key stays, as in libcni).
 */
export function attachmentConfig(list: NetworkConfigList, plugin: PluginConf, prevResult: WireResult | undefined, capabilityArgs: Record<string, unknown> = {}): Buffer {
  const runtimeConfig = runtimeConfigOf(plugin, capabilityArgs);
  return inject(plugin, {
    name: list.name,
    cniVersion: list.cniVersion,
    ...(prevResult === undefined ? {} : { prevResult }),
    ...(Object.keys(runtimeConfig).length > 0 ? { runtimeConfig } : {}),
  });
}
