// Creating, deleting, listing and identifying namespaces, interoperable with
// `ip netns`: named namespaces are bind mounts in a run directory, /run/netns
// unless the caller keeps theirs elsewhere (RunDirOption).
import { fs } from './core/builtins.js';
import { callNative, ErrorCodes, fromNative, netnsError, systemError, type NetnsError } from './core/errors.js';
import { assertValidName, mountableRunDir, runDirOf, type RunDirOption } from './core/names.js';
import { native } from './core/native.js';

const NSFS_MAGIC = 0x6e736673;

/** One entry of NetNS.list(): a name in the run directory, as `ip netns list` shows it. */
export interface NamespaceEntry {
  /** The file name in the run directory. */
  name: string;
  /** RUN_DIR/NAME. */
  path: string;
  /** Inode of the namespace when alive, else of the leftover file. */
  inode: number;
  /** A mounted namespace; false for a leftover file of a failed add or a lazy delete. */
  alive: boolean;
}

/** An open namespace as the addon hands it over (the NetNS facade wraps it); `name` when it has one. */
export interface OpenedNamespace {
  path: string;
  name: string | undefined;
  fd: number;
  dev: number;
  ino: number;
}

/**
 * The native error, with what a user without root can do when the kernel
 * refused the mount or the run directory: the code stays the kernel's.
 */
function refusedWithHint(error: unknown): NetnsError {
  const refused = fromNative(error);
  if (refused.code === 'EPERM' || refused.code === 'EACCES') {
    refused.message +=
      ' (making a namespace needs CAP_SYS_ADMIN, and naming one a run directory it may mount on: without root, run in `netns sandbox`, or inside your own user namespace pass { runDir } a folder you own)';
  }
  return refused;
}

/** Makes a namespace: named (runDir/NAME, as `ip netns add`) or anonymous (no name). */
export async function createNamespace(name?: string, options?: RunDirOption): Promise<OpenedNamespace> {
  if (name !== undefined) assertValidName(name);
  const runDir = mountableRunDir(runDirOf(options));
  const path = name === undefined ? '' : `${runDir}/${name}`;
  try {
    const created = await native().createNamespace(runDir, path);
    return { ...created, name, path: path || `/proc/${process.pid}/fd/${created.fd}` };
  } catch (error) {
    throw refusedWithHint(error);
  }
}

/** Names the namespace a process is in, as `ip netns attach NAME PID`: runDir/NAME becomes a bind mount of it. */
export async function attachNamespace(name: string, pid: number, options?: RunDirOption): Promise<OpenedNamespace> {
  assertValidName(name);
  checkPid(pid);
  const runDir = mountableRunDir(runDirOf(options));
  const path = `${runDir}/${name}`;
  try {
    return { ...(await native().attachNamespace(runDir, path, `/proc/${pid}/ns/net`)), name, path };
  } catch (error) {
    throw refusedWithHint(error);
  }
}

export async function deleteNamespace(name: string, options?: RunDirOption): Promise<void> {
  assertValidName(name);
  const runDir = runDirOf(options);
  try {
    await native().deleteNamespace(`${runDir}/${name}`);
  } catch (error) {
    throw fromNative(error);
  }
}

// readdir's order, as `ip netns list` prints: fs.readdirSync sorts (libuv's
// scandir does), a Dir does not.
function namesIn(dir: string): string[] {
  let handle;
  try {
    handle = fs().opendirSync(dir);
  } catch (error) {
    const { code, errno } = error as NodeJS.ErrnoException;
    if (code === 'ENOENT') return [];
    throw errno === undefined ? fromNative(error) : systemError(errno, 'opendir', dir); // Node's leaves the path out
  }
  const names: string[] = [];
  try {
    for (let entry = handle.readSync(); entry !== null; entry = handle.readSync()) names.push(entry.name);
  } finally {
    handle.closeSync();
  }
  return names;
}

/** The entries of the run directory, in readdir order (as `ip netns list`), not sorted. */
export function listNamespaces(options?: RunDirOption): NamespaceEntry[] {
  const runDir = runDirOf(options);
  const { statfsSync, statSync } = fs();
  return namesIn(runDir).flatMap((name) => {
    const path = `${runDir}/${name}`;
    try {
      return [{ name, path, inode: statSync(path).ino, alive: statfsSync(path).type === NSFS_MAGIC }];
    } catch {
      return []; // deleted while we listed
    }
  });
}

/** A pid, as identify, attach and NetNS.fromPid take one. */
export function checkPid(pid: unknown): asserts pid is number {
  if (!Number.isSafeInteger(pid) || (pid as number) <= 0) {
    throw netnsError(ErrorCodes.INVALID_ARG, `pid must be a positive integer, got ${String(pid)}`);
  }
}

function inodeOfPid(pid: number): number {
  checkPid(pid);
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

/**
 * Every name in the run directory of the namespace a process is in (or with
 * this inode), in readdir order; `ip netns identify` prints only the last.
 */
export function identifyNamespace(target: { pid: number } | { inode: number }, options?: RunDirOption): string[] {
  const inode = inodeOfTarget(target);
  return listNamespaces(options)
    .filter((entry) => entry.alive && entry.inode === inode)
    .map((entry) => entry.name);
}

/** Processes whose main thread is in the named namespace, as `ip netns pids`. */
export function namespacePids(name: string, options?: RunDirOption): number[] {
  assertValidName(name);
  const runDir = runDirOf(options);
  const inode = callNative(() => native().openNetnsIdentity(`${runDir}/${name}`)).ino;
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
