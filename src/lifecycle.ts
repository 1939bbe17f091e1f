// Creating, deleting, listing and identifying namespaces, interoperable with
// `ip netns`: named namespaces are bind mounts under /run/netns.
import { fs } from './core/builtins.js';
import { callNative, ErrorCodes, fromNative, netnsError } from './core/errors.js';
import { assertValidName, NETNS_RUN_DIR } from './core/names.js';
import { native } from './core/native.js';

const NSFS_MAGIC = 0x6e736673;

export interface NamespaceEntry {
  name: string;
  path: string;
  /** Inode of the namespace when alive, else of the leftover file. */
  inode: number;
  /** A mounted namespace; false for a leftover file of a failed add or a lazy delete. */
  alive: boolean;
}

/** Makes a namespace and returns its open descriptor and identity (the NetNS facade wraps it). */
export async function createNamespace(name?: string): Promise<{ path: string; fd: number; dev: number; ino: number }> {
  let path = '';
  if (name !== undefined) {
    assertValidName(name);
    path = `${NETNS_RUN_DIR}/${name}`;
  }
  try {
    const created = await native().createNamespace(NETNS_RUN_DIR, path);
    return { ...created, path: path || `/proc/${process.pid}/fd/${created.fd}` };
  } catch (error) {
    throw fromNative(error);
  }
}

export async function deleteNamespace(name: string): Promise<void> {
  assertValidName(name);
  try {
    await native().deleteNamespace(`${NETNS_RUN_DIR}/${name}`);
  } catch (error) {
    throw fromNative(error);
  }
}

export function listNamespaces(): NamespaceEntry[] {
  let names: string[];
  try {
    names = fs().readdirSync(NETNS_RUN_DIR);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  const { statfsSync, statSync } = fs();
  return names.sort().flatMap((name) => {
    const path = `${NETNS_RUN_DIR}/${name}`;
    try {
      return [{ name, path, inode: statSync(path).ino, alive: statfsSync(path).type === NSFS_MAGIC }];
    } catch {
      return []; // deleted while we listed
    }
  });
}

function inodeOfPid(pid: number): number {
  if (!Number.isSafeInteger(pid) || pid <= 0) {
    throw netnsError(ErrorCodes.INVALID_ARG, `pid must be a positive integer, got ${String(pid)}`);
  }
  return callNative(() => native().openNetnsIdentity(`/proc/${pid}/ns/net`)).ino;
}

function inodeOfTarget(target: unknown): number {
  const given = target !== null && typeof target === 'object' ? Object.keys(target).filter((key) => key === 'pid' || key === 'inode') : [];
  if (given.length !== 1) {
    throw netnsError(ErrorCodes.INVALID_ARG, 'identify takes { pid } or { inode }, exactly one of them');
  }
  const { pid, inode } = target as { pid?: unknown; inode?: unknown };
  if (given[0] === 'pid') return inodeOfPid(pid as number);
  if (typeof inode !== 'number' || !Number.isSafeInteger(inode) || inode <= 0) {
    throw netnsError(ErrorCodes.INVALID_ARG, `inode must be a positive integer, got ${String(inode)}`);
  }
  return inode;
}

/** Names under /run/netns of the namespace a process is in (or with this inode), as `ip netns identify`. */
export function identifyNamespace(target: { pid: number } | { inode: number }): string[] {
  const inode = inodeOfTarget(target);
  return listNamespaces()
    .filter((entry) => entry.alive && entry.inode === inode)
    .map((entry) => entry.name);
}

/** Processes whose main thread is in the named namespace, as `ip netns pids`. */
export function namespacePids(name: string): number[] {
  assertValidName(name);
  const inode = callNative(() => native().openNetnsIdentity(`${NETNS_RUN_DIR}/${name}`)).ino;
  const pids: number[] = [];
  const { readdirSync, readlinkSync } = fs();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readlinkSync(`/proc/${entry}/ns/net`) === `net:[${inode}]`) pids.push(Number(entry));
    } catch {
      // exited, or a kernel thread we may not inspect
    }
  }
  return pids.sort((a, b) => a - b);
}
