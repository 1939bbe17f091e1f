// Where a resident daemon listens, made safe to take: a directory only its
// owner can enter, a lock held for the daemon's life (so a second daemon for
// the same socket is refused, and a socket file left by a dead one is known to
// be stale and may be replaced), and a socket only its owner can connect to.
import { dirname } from 'node:path';
import { fs, net } from '../../core/builtins.js';
import { callNative, ErrorCodes, fromNodeError, netnsError } from '../../core/errors.js';
import { native } from '../../core/native.js';

const DEFAULT_SOCKET_DIR = '/run/netns-cni';
/** A sockaddr_un path holds 107 bytes and its terminating NUL. */
const MAX_SOCKET_PATH = 107;

/** The default socket of a plugin: the shim installed as NAME connects to /run/netns-cni/NAME.sock. */
export function defaultSocketPath(name: string): string {
  if (typeof name !== 'string' || !/^[A-Za-z0-9][A-Za-z0-9_.-]*$/.test(name)) {
    throw netnsError(ErrorCodes.INVALID_ARG, `a resident plugin's name is a file name of letters, digits, . _ and -; got ${JSON.stringify(name)}`);
  }
  return `${DEFAULT_SOCKET_DIR}/${name}.sock`;
}

export function checkSocketPath(path: unknown): asserts path is string {
  if (typeof path !== 'string' || !path.startsWith('/') || Buffer.byteLength(path) > MAX_SOCKET_PATH || path.includes('\0')) {
    throw netnsError(ErrorCodes.INVALID_ARG, `socketPath must be an absolute path of at most ${MAX_SOCKET_PATH} bytes; got ${JSON.stringify(path)}`);
  }
}

/** The socket's directory, made if missing (0700); refused unless it is a real directory of ours that no one else may write. */
function secureDirectory(dir: string): void {
  let stat;
  try {
    fs().mkdirSync(dir, { recursive: true, mode: 0o700 });
    stat = fs().lstatSync(dir);
  } catch (error) {
    throw fromNodeError(error, `(making the resident socket's directory ${dir})`);
  }
  const problem = !stat.isDirectory()
    ? 'is not a directory (a symbolic link is refused too)'
    : stat.uid !== process.geteuid!()
      ? `belongs to uid ${stat.uid}, not to this process (uid ${process.geteuid!()})`
      : (stat.mode & 0o022) !== 0
        ? `may be written by others (mode ${(stat.mode & 0o777).toString(8)})`
        : undefined;
  if (problem) throw netnsError(ErrorCodes.INVALID_PATH, `the resident socket's directory ${dir} ${problem}`, { path: dir });
}

function holder(lockPath: string): string {
  try {
    const pid = fs().readFileSync(lockPath, 'utf8').trim();
    return /^\d+$/.test(pid) ? ` (pid ${pid})` : '';
  } catch {
    return '';
  }
}

/** Whether something accepts connections on the unix socket at `path` (a daemon whose lock file someone removed, or another program). */
function someoneListens(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = net().connect(path);
    probe.once('connect', () => {
      probe.destroy();
      resolve(true);
    });
    probe.once('error', () => resolve(false));
  });
}

/**
 * A socket file at `path` left by a dead daemon is removed; a live one (its
 * lock file gone, or another program's) and anything that is not a socket are
 * refused: they are not ours to destroy.
 */
async function clearStaleSocket(path: string): Promise<void> {
  let stat;
  try {
    stat = fs().lstatSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw fromNodeError(error, `(looking at the socket path ${path})`);
  }
  if (!stat.isSocket()) throw netnsError(ErrorCodes.INVALID_PATH, `${path} exists and is not a socket: not removed`, { path });
  if (await someoneListens(path)) throw netnsError(ErrorCodes.CNI_DAEMON_RUNNING, `a process listens on ${path} without holding its lock file: not removed`, { path });
  fs().unlinkSync(path);
}

/** Removes `path` if it is still the file `fd` has open: a lock file someone replaced is the new holder's. */
function removeIfSame(path: string, fd: number): void {
  if (fs().lstatSync(path, { throwIfNoEntry: false })?.ino === fs().fstatSync(fd).ino) fs().rmSync(path, { force: true });
}

export interface SocketPlace {
  /** Releases the lock; the socket file is removed first if it is still the one we made (same inode). */
  release(ownSocketIno?: number): void;
}

/**
 * Takes `socketPath` for this process: checks its directory, takes the lock
 * file beside it (ERR_NETNS_CNI_DAEMON_RUNNING if a live daemon holds it, or
 * something listens on the socket) and removes a stale socket. The caller
 * then listens on the path.
 */
export async function takeSocketPlace(socketPath: string): Promise<SocketPlace> {
  secureDirectory(dirname(socketPath));
  const lockPath = `${socketPath}.lock`;
  // -1 also when the holder removed the file as we opened it (it was stopping): one more try meets a new file.
  let fd = callNative(() => native().tryLockFile(lockPath));
  if (fd < 0) fd = callNative(() => native().tryLockFile(lockPath));
  if (fd < 0) throw netnsError(ErrorCodes.CNI_DAEMON_RUNNING, `another resident daemon serves ${socketPath}${holder(lockPath)}`, { path: socketPath });
  try {
    fs().ftruncateSync(fd, 0);
    fs().writeSync(fd, `${process.pid}\n`, 0);
    await clearStaleSocket(socketPath);
  } catch (error) {
    removeIfSame(lockPath, fd);
    native().closeFd(fd);
    throw fromNodeError(error, `(taking ${socketPath})`);
  }
  let held = true;
  return {
    release(ownSocketIno) {
      if (!held) return;
      held = false;
      try {
        if (ownSocketIno !== undefined && fs().lstatSync(socketPath, { throwIfNoEntry: false })?.ino === ownSocketIno) fs().unlinkSync(socketPath);
        // Removed while still locked, as the address sets' table lock is: no one locks this file anew
        // and thinks it guards the socket (TryLockFile checks for this).
        removeIfSame(lockPath, fd);
      } finally {
        native().closeFd(fd);
      }
    },
  };
}
