// A lab node's directories of its own (Mininet's privateDirs, a container's
// volumes): each path in a node's `dirs` is laid over, in the mount namespace
// of every command run in the node as a machine (lab exec, lab.spawn and
// execFile), by
//   'empty'    a folder of the lab's, empty at first, shared by the node's commands, removed with the lab;
//   'overlay'  the machine's content, the node's changes going to a folder of the lab's (removed with it);
//   '/folder'  the test's own folder, bound as it is and never removed.
// The lab's folders are <tmpdir>/netns-dirs-<namespace name>/<n>, so that sweep
// finds them again from the name after a run killed by SIGKILL.
import { existsSync, readdirSync, rmSync, statSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, posix } from 'node:path';
import { ErrorCodes, kindOf, netnsError } from '../../core/errors.js';
import { own } from '../../core/own.js';
import { OVERLAY_UNSAFE, type PrivateDir } from '../../io/spawn.js';

/** A node's `dirs`: by path in the node, 'empty', 'overlay' or the absolute path of a folder of the test's. */
export type LabNodeDirs = Record<string, string>;

const FOLDER_PREFIX = 'netns-dirs-';
/** The machine's own file systems, which the command's mount namespace keeps (/sys is remounted for the node). */
const KERNEL_DIRS = ['/proc', '/sys', '/dev'];
/** PATH_MAX less room for the lab's folder and the overlay options the exec helper writes. */
const MAX_PATH_BYTES = 1024;

const invalid = (message: string) => netnsError(ErrorCodes.INVALID_ARG, `createLab: ${message}`);

function checkPath(path: string, what: string): void {
  if (!path.startsWith('/') || posix.normalize(path) !== path || path.endsWith('/') || path.includes('\0')) {
    throw invalid(`${what} must be an absolute path without . or .. parts or a trailing /, got ${JSON.stringify(path)}`);
  }
  if (Buffer.byteLength(path) > MAX_PATH_BYTES) throw invalid(`${what} is over ${MAX_PATH_BYTES} bytes`);
}

/** What a node's dirs may be, without looking at the machine: also what a lab state file handed back must hold. */
export function checkDirsShape(key: string, dirs: unknown): LabNodeDirs {
  if (typeof dirs !== 'object' || dirs === null || Array.isArray(dirs)) throw invalid(`node ${key}'s dirs must be an object of kinds by path, got ${kindOf(dirs)}`);
  const entries = Object.entries(own(dirs as Record<string, unknown>));
  for (const [path, kind] of entries) {
    const what = `node ${key}'s dir ${JSON.stringify(path)}`;
    checkPath(path, what);
    if (KERNEL_DIRS.some((dir) => isWithin(path, dir))) throw invalid(`${what} is the kernel's (${KERNEL_DIRS.join(', ')} stay the machine's)`);
    if (kind === 'overlay' && OVERLAY_UNSAFE.test(path)) throw invalid(`${what}: an overlay's path cannot hold , : or \\ (overlayfs's option syntax)`);
    if (kind === 'empty' || kind === 'overlay') continue;
    if (typeof kind !== 'string') throw invalid(`${what} must be 'empty', 'overlay' or a folder's absolute path, got ${kindOf(kind)}`);
    checkPath(kind, `${what}'s folder`);
  }
  // one inside another would be laid over a folder that does not have it
  for (const [path] of entries) {
    const outer = entries.find(([other]) => other !== path && isWithin(path, other));
    if (outer) throw invalid(`node ${key}'s dirs ${outer[0]} and ${path} overlap: give only one of them`);
  }
  return Object.fromEntries(entries) as LabNodeDirs;
}

/** Checks a node's `dirs` (ERR_NETNS_INVALID_ARG): each path a directory of the machine, each folder given one too. */
export function checkNodeDirs(key: string, dirs: unknown): LabNodeDirs {
  const checked = checkDirsShape(key, dirs);
  for (const [path, kind] of Object.entries(checked)) {
    const what = `node ${key}'s dir ${JSON.stringify(path)}`;
    if (!isDirectory(path)) throw invalid(`${what} is not a directory on this machine (a node's dir is laid over one)`);
    if (kind !== 'empty' && kind !== 'overlay' && !isDirectory(kind)) throw invalid(`${what}'s folder ${kind} is not a directory`);
  }
  return checked;
}

const isWithin = (path: string, dir: string): boolean => path === dir || path.startsWith(`${dir}/`);
const isDirectory = (path: string): boolean => existsSync(path) && statSync(path).isDirectory();

/** The lab's folder for the dirs of the namespace `name`. */
function folderOf(name: string): string {
  return join(tmpdir(), `${FOLDER_PREFIX}${name}`);
}

/** The paths, in an order kept across processes (the index names the lab's folder), each with its kind and the lab's folder. */
function laid(name: string, dirs: LabNodeDirs): [string, string, string][] {
  return Object.keys(dirs)
    .sort()
    .map((path, index) => [path, dirs[path]!, join(folderOf(name), String(index))]);
}

/** What the exec helper lays over the node's paths (spawn's `dirs`). */
export function dirsToLay(name: string, dirs: LabNodeDirs): PrivateDir[] {
  return laid(name, dirs).map(([path, kind, folder]) => {
    if (kind === 'overlay') return { kind: 'overlay', source: folder, path };
    return { kind: 'bind', source: kind === 'empty' ? folder : kind, path };
  });
}

/** Where the node's files in each path are on the machine, by path: the lab's folder, its overlay's upper layer, or the test's folder. */
export function dirsOnMachine(name: string, dirs: LabNodeDirs): Record<string, string> {
  return Object.fromEntries(laid(name, dirs).map(([path, kind, folder]) => [path, kind === 'empty' ? folder : kind === 'overlay' ? join(folder, 'upper') : kind]));
}

/** Makes the lab's folders of one node (ERR_NETNS_FIXTURE when it cannot). */
export async function makeNodeDirs(name: string, dirs: LabNodeDirs): Promise<void> {
  const made = laid(name, dirs).filter(([, kind]) => kind === 'empty' || kind === 'overlay');
  if (made.length === 0) return;
  if (OVERLAY_UNSAFE.test(tmpdir())) throw netnsError(ErrorCodes.FIXTURE, `createLab: the temporary folder ${tmpdir()} holds , : or \\, which an overlay's layers cannot`);
  try {
    // a named lab's folder that a lab of the same name left (its namespaces, just made again, show it is no one's now)
    await rm(folderOf(name), { recursive: true, force: true });
    await mkdir(folderOf(name), { mode: 0o755 });
    for (const [, kind, folder] of made) {
      await mkdir(folder, { mode: 0o755 });
      if (kind === 'overlay') for (const layer of ['upper', 'work']) await mkdir(join(folder, layer));
    }
  } catch (error) {
    throw netnsError(ErrorCodes.FIXTURE, `createLab: making ${folderOf(name)} failed: ${(error as NodeJS.ErrnoException).code ?? error}`, { cause: error });
  }
}

/** Removes the lab's folders of the namespace `name`; synchronous (it runs at exit too), never throws. */
export function removeNodeDirs(name: string): void {
  try {
    rmSync(folderOf(name), { recursive: true, force: true, maxRetries: 3, retryDelay: 20 });
  } catch {
    // left in the temporary folder, where the next sweep of the prefix tries again
  }
}

/** The namespace names whose dirs folders are in the temporary folder (for sweep). */
export function namesWithDirs(): string[] {
  try {
    return readdirSync(tmpdir()).flatMap((entry) => (entry.startsWith(FOLDER_PREFIX) ? [entry.slice(FOLDER_PREFIX.length)] : []));
  } catch {
    return [];
  }
}
