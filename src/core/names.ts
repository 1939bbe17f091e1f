import { posix } from 'node:path';
import { fs } from './builtins.js';
import { ErrorCodes, netnsError } from './errors.js';
import { ownOptions } from './own.js';

/** Where `ip netns` keeps its bind mounts. /var/run is a symlink to it on modern systems. */
export const NETNS_RUN_DIR = '/run/netns';
const NAME_MAX = 255;

/** Where named namespaces are kept, for callers (tests, tools) that keep theirs out of the system's list. */
export interface RunDirOption {
  /** An absolute path; default /run/netns, as `ip netns`. */
  runDir?: string;
}

// C0 controls and DEL: a newline in a name makes `ip netns list` print two
// namespaces, and any of them garbles the output of tools that print names.
const CONTROL = /[\u0000-\u001f\u007f]/;

/** Throws unless `name` is acceptable to `ip netns`: no '/', not '.' or '..', 1..255 bytes, no control characters. */
export function assertValidName(name: unknown): asserts name is string {
  const bad = (why: string) =>
    netnsError(ErrorCodes.INVALID_NAME, `invalid namespace name ${JSON.stringify(name)}: ${why}`);
  if (typeof name !== 'string') throw bad('must be a string');
  if (name === '' || name === '.' || name === '..') throw bad('reserved or empty');
  if (name.includes('/')) throw bad("must not contain '/'");
  if (name.includes('\0')) throw bad('must not contain a NUL byte');
  if (CONTROL.test(name)) throw bad('must not contain control characters (0x00-0x1f, 0x7f)');
  if (!name.isWellFormed()) throw bad('must be well-formed Unicode (a lone surrogate would be written as U+FFFD)');
  if (Buffer.byteLength(name) > NAME_MAX) throw bad(`longer than ${NAME_MAX} bytes`);
}

/**
 * The run directory asked for: /run/netns by default, else an absolute path
 * without NUL, normalized (`.`, `..`, repeated and trailing slashes). Not /
 * itself (nor /tmp/.. or /.): a create makes the run directory a shared
 * mount, which for / would change the whole system's.
 */
export function checkRunDir(runDir: unknown): string {
  if (runDir === undefined) return NETNS_RUN_DIR;
  const dir = typeof runDir === 'string' && runDir.startsWith('/') && !runDir.includes('\0') ? posix.normalize(runDir).replace(/\/+$/, '') : '';
  if (dir === '') {
    throw netnsError(ErrorCodes.INVALID_ARG, `runDir must be an absolute path (not /) without a NUL byte, got ${JSON.stringify(runDir)}`);
  }
  return dir;
}

/** As checkRunDir, and not a symlink (or a path through one) to / either: for create and attach, which mount on it. */
export function mountableRunDir(runDir: string): string {
  let real = runDir;
  try {
    real = fs().realpathSync(runDir);
  } catch {
    // not there yet: the create makes it, as a directory
  }
  if (real === '/') throw netnsError(ErrorCodes.INVALID_ARG, `runDir ${JSON.stringify(runDir)} is / itself: it would become a shared mount`);
  return runDir;
}

/** The run directory of options that hold nothing else. */
export function runDirOf(options: RunDirOption | undefined): string {
  return checkRunDir(ownOptions(options).runDir);
}

/** A bare name means RUN_DIR/NAME; anything with a '/' is taken as a path. */
export function resolveNamespacePath(pathOrName: string, runDir = NETNS_RUN_DIR): string {
  if (typeof pathOrName !== 'string' || pathOrName === '') {
    throw netnsError(ErrorCodes.INVALID_ARG, 'a namespace path or name must be a non-empty string');
  }
  if (pathOrName.includes('/')) return pathOrName;
  assertValidName(pathOrName);
  return `${runDir}/${pathOrName}`;
}

/** The name of an entry directly in the run directory (what `ip netns exec` would call it), else undefined. */
export function nameInRunDir(path: string, runDir: string): string | undefined {
  const name = path.startsWith(`${runDir}/`) ? path.slice(runDir.length + 1) : '';
  return name === '' || name.includes('/') ? undefined : name;
}
