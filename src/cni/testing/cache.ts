// libcni's result cache (libcni/api.go: cacheAdd, getCachedResult,
// GetCachedAttachments): one JSON file per attachment,
// <dir>/results/<network>-<containerId>-<ifname>, directory 0700 and file
// 0600, in the "cniCacheV1" format a runtime leaves on a node. Written after
// a whole ADD chain, read for CHECK and DEL, removed after DEL, listed by GC.
// A test can read what a runtime would keep, or seed what an older one kept.
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ErrorCodes, fromNodeError, netnsError } from '../../core/errors.js';
import { CNI_NAME } from '../env.js';
import { CniCode, CniError } from '../errors.js';
import type { WireResult } from '../result.js';
import type { CniArgPairs } from './invocation.js';

/** The `kind` of every entry libcni's result cache writes, and the only kind it reads. */
export const CACHE_KIND = 'cniCacheV1';

/** One cache file's content; keys in libcni's order, empty ones left out as Go's omitempty does. */
export interface CacheEntry {
  /** Always 'cniCacheV1' (CACHE_KIND). */
  kind: typeof CACHE_KIND;
  /** The attachment's container id. */
  containerId: string;
  /** The network configuration list's bytes, base64 (Go's []byte in JSON). */
  config: string;
  /** The attachment's interface name (libcni spells it ifName here). */
  ifName: string;
  /** The network's name, the list's `name`. */
  networkName: string;
  /** The namespace path of the ADD. */
  netns?: string;
  /** CNI_ARGS of the ADD, as key/value pairs. */
  cniArgs?: [string, string][];
  /** The capability arguments the runtime offered at ADD. */
  capabilityArgs?: Record<string, unknown>;
  /** The last plugin's ADD result, in the version it printed. */
  result?: Record<string, unknown>;
}

/** What identifies an attachment's file. */
export interface CacheKey {
  /** The container's id (non-empty, no / or NUL). */
  containerId: string;
  /** The interface name in the container (non-empty, no / or NUL). */
  ifname: string;
}

/** What cacheAdd records besides the result. */
export interface CachedAttachment extends CacheKey {
  /** The namespace path of the ADD ('' leaves it out of the entry). */
  netns: string;
  /** CNI_ARGS of the ADD, as pairs. */
  args?: CniArgPairs;
  /** The capability arguments the runtime offered at ADD. */
  capabilityArgs?: Record<string, unknown>;
}

function invalid(what: string): never {
  throw netnsError(ErrorCodes.INVALID_ARG, what);
}

/** A part of a cache file's name: the plugin, not the harness, judges the rest. */
export const isKeyPart = (value: unknown): value is string => typeof value === 'string' && value !== '' && !/[/\0]/.test(value);

/** A cniCacheV1 entry, or undefined for anything else (libcni skips those when listing). */
function parseEntry(text: string): CacheEntry | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === CACHE_KIND ? (value as CacheEntry) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * libcni's result cache in a directory of your choosing: one cniCacheV1 JSON
 * file per attachment under `<dir>/results` (directory 0700, files 0600), as
 * a runtime keeps them on a node. CniHarness writes it after ADD and reads it
 * for CHECK, DEL and GC; a test uses it to see what a runtime would keep or
 * to seed what an older one left. Every method is async but file(); a network
 * name, containerId or ifname that could name a file outside the directory
 * throws ERR_NETNS_INVALID_ARG. A write or delete the file system refuses
 * rejects with a NetnsError carrying Node's code (EACCES, ENOTDIR...), errno,
 * syscall and path, Node's error as `cause`.
 */
export class ResultCache {
  /**
   * A cache kept under `dir`; nothing is made until the first write.
   * @param dir Stands for libcni's cacheDir (/var/lib/cni on a node): entries go under `<dir>/results`.
   */
  constructor(readonly dir: string) {
    // Every entry's path starts here: a number or an empty string would put them somewhere unmeant.
    if (typeof dir !== 'string' || dir === '' || dir.includes('\0')) invalid(`dir must be a non-empty path string, got ${typeof dir === 'string' ? JSON.stringify(dir) : typeof dir}`);
  }

  /**
   * The file of one attachment of `network`. The parts are checked here, the
   * one place every path is made: a network name outside CNI's characters, or
   * a containerId or ifname holding / or NUL, could name a file outside
   * <dir>/results (ERR_NETNS_INVALID_ARG).
   */
  file(network: string, key: CacheKey): string {
    if (typeof network !== 'string' || !CNI_NAME.test(network)) invalid(`a network name must match ${String(CNI_NAME)}, got ${JSON.stringify(network)}`);
    if (!isKeyPart(key?.containerId) || !isKeyPart(key.ifname)) invalid('containerId and ifname must be non-empty strings without / or NUL (they name the cache file)');
    return join(this.dir, 'results', `${network}-${key.containerId}-${key.ifname}`);
  }

  /**
   * Records the ADD of one attachment: the list's bytes and the last plugin's
   * result as it printed it (replaces an earlier entry). Makes `<dir>/results`
   * (0700) when missing; the file is 0600.
   */
  async write(network: string, attachment: CachedAttachment, configBytes: Buffer, result: WireResult): Promise<void> {
    const entry: CacheEntry = {
      kind: CACHE_KIND,
      containerId: attachment.containerId,
      config: configBytes.toString('base64'),
      ifName: attachment.ifname,
      networkName: network,
      ...(attachment.netns ? { netns: attachment.netns } : {}),
      ...(attachment.args?.length ? { cniArgs: attachment.args.map(([k, v]) => [k, v] as [string, string]) } : {}),
      ...(attachment.capabilityArgs && Object.keys(attachment.capabilityArgs).length > 0 ? { capabilityArgs: attachment.capabilityArgs } : {}),
      result: result as unknown as Record<string, unknown>,
    };
    const file = this.file(network, attachment);
    try {
      await mkdir(join(this.dir, 'results'), { recursive: true, mode: 0o700 });
      await writeFile(file, JSON.stringify(entry), { mode: 0o600 });
    } catch (error) {
      throw fromNodeError(error, `(writing the cached result ${file})`);
    }
  }

  /** The attachment's entry; undefined when there is no file (as libcni ignores read errors); code 6 when it is not a cniCacheV1 entry. */
  async read(network: string, key: CacheKey): Promise<CacheEntry | undefined> {
    const file = this.file(network, key);
    const text = await readFile(file, 'utf8').catch(() => undefined);
    if (text === undefined) return undefined;
    const entry = parseEntry(text);
    if (!entry) throw new CniError(CniCode.DECODING_FAILURE, `cached result ${file} is not a ${CACHE_KIND} entry`);
    return entry;
  }

  /** Deletes the attachment's entry, as after DEL; none there is success. */
  async delete(network: string, key: CacheKey): Promise<void> {
    const file = this.file(network, key);
    await rm(file, { force: true }).catch((error: unknown) => {
      throw fromNodeError(error, `(deleting the cached result ${file})`);
    });
  }

  /** @deprecated use delete(). */
  declare remove: (network: string, key: CacheKey) => Promise<void>;

  /** Every readable entry with a network and an interface name, in file name order (GetCachedAttachments). */
  async list(): Promise<CacheEntry[]> {
    const dir = join(this.dir, 'results');
    const names = await readdir(dir).catch(() => [] as string[]);
    const entries: CacheEntry[] = [];
    for (const name of names.sort()) {
      const entry = parseEntry(await readFile(join(dir, name), 'utf8').catch(() => ''));
      if (entry?.ifName && entry.networkName) entries.push(entry);
    }
    return entries;
  }
}

// The old name is the same function, not a wrapper.
ResultCache.prototype.remove = ResultCache.prototype.delete;
