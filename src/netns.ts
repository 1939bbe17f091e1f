import type { ChildProcess } from 'node:child_process';
import type dgram from 'node:dgram';
import type net from 'node:net';
import { callNative, ErrorCodes, netnsError } from './core/errors.js';
import { readFileIn } from './io/files.js';
import {
  connectIn,
  createUdpSocket,
  listenIn,
  rawSocket,
  type ConnectOptions,
  type ListenOptions,
  type SocketDomain,
  type SocketType,
  type UdpOptions,
} from './io/sockets.js';
import { execFileIn, spawnIn, type ExecFileOptions, type ExecFileResult, type NetnsSpawnOptions } from './io/spawn.js';
import { Sysctl } from './io/sysctl.js';
import {
  attachNamespace,
  checkPid,
  createNamespace,
  deleteNamespace,
  identifyNamespace,
  listNamespaces,
  namespacePids,
  type NamespaceEntry,
  type OpenedNamespace,
} from './lifecycle.js';
import { NsHandle } from './core/handle.js';
import { nameInRunDir, resolveNamespacePath, runDirOf, type RunDirOption } from './core/names.js';
import { native } from './core/native.js';
import { watchNamespaces, type NamespaceWatch, type NamespaceWatchOptions } from './namespace-watch.js';

/**
 * An open network namespace. The handle holds an O_CLOEXEC file descriptor, so
 * the namespace stays alive while the handle is open, even if its name is
 * deleted. Calls already using the handle keep it open until they finish.
 *
 * Synchronous: what only opens, reads or closes this process's descriptors
 * (open, current, fromPid, list, identify, pids, close). Async: what needs a
 * namespace thread or another process (create, attach, delete, every I/O
 * method). close() lets go of the handle; delete() removes the name. Every
 * error is a NetnsError with a `code`.
 */
export class NetNS extends NsHandle {
  /** net.* sysctls of this namespace. */
  readonly sysctl: Sysctl = new Sysctl(this);

  private constructor(opened: OpenedNamespace) {
    super(opened.path, opened.fd, opened.dev, opened.ino, opened.name);
  }

  /**
   * Opens a bare name (RUN_DIR/NAME) or any nsfs path, checking it is a
   * network namespace. A path directly in the run directory counts as a name.
   */
  static open(pathOrName: string, options?: RunDirOption): NetNS {
    const runDir = runDirOf(options);
    const path = resolveNamespacePath(pathOrName, runDir);
    const opened = callNative(() => native().openNetns(path));
    return new NetNS({ ...opened, path, name: nameInRunDir(path, runDir) });
  }

  /**
   * Creates a namespace. With a name: a persistent one at RUN_DIR/NAME, made
   * as `ip netns add` makes it (EEXIST if taken). Without: an anonymous one
   * that lives as long as this handle or anything inside it.
   */
  static async create(name?: string, options?: RunDirOption): Promise<NetNS> {
    return new NetNS(await createNamespace(name, options));
  }

  /**
   * Names the namespace process `pid` is in, as `ip netns attach NAME PID`:
   * RUN_DIR/NAME (EEXIST if taken) becomes a bind mount of /proc/PID/ns/net.
   * A missing process is ENOENT with that source as `path`; a failure leaves
   * no file and no mount.
   */
  static async attach(name: string, pid: number, options?: RunDirOption): Promise<NetNS> {
    return new NetNS(await attachNamespace(name, pid, options));
  }

  /**
   * Removes RUN_DIR/NAME as `ip netns del` does: lazy unmount, then unlink.
   * Async. ENOENT when there is no such name. Open handles of the namespace
   * keep working (ns.delete() removes a handle's own name and closes it).
   */
  static delete(name: string, options?: RunDirOption): Promise<void> {
    return deleteNamespace(name, options);
  }

  /** The named namespaces, with inode and whether each is alive, in readdir order as `ip netns list`. */
  static list(options?: RunDirOption): NamespaceEntry[] {
    return listNamespaces(options);
  }

  /**
   * Namespaces added to and deleted from the run directory (made if missing),
   * as `ip netns monitor` reports them: `for await (const { type, name } of
   * NetNS.watch())`. Keeps the process alive until closed (close(), `using`,
   * leaving the loop, or the signal). An inotify queue overflow ends the
   * iteration with an ENOBUFS error.
   */
  static watch(options?: NamespaceWatchOptions): NamespaceWatch {
    return watchNamespaces(options);
  }

  /** Every name of the namespace a process (or inode) is in, in readdir order (`ip netns identify` prints the last). */
  static identify(target: { pid: number } | { inode: number }, options?: RunDirOption): string[] {
    return identifyNamespace(target, options);
  }

  /** Processes in the named namespace, as `ip netns pids`. */
  static pids(name: string, options?: RunDirOption): number[] {
    return namespacePids(name, options);
  }

  /** The namespace of the calling thread (not necessarily the process's main thread). */
  static current(): NetNS {
    return NetNS.open('/proc/thread-self/ns/net');
  }

  /** The namespace a process's main thread is in. */
  static fromPid(pid: number): NetNS {
    checkPid(pid);
    return NetNS.open(`/proc/${pid}/ns/net`);
  }

  /**
   * Removes the name this handle has in its run directory, as `ip netns del
   * NAME` (lazy unmount, then unlink), then closes the handle. Async. The
   * namespace itself lives on while anything still holds it (another handle, a
   * process, a socket). Refused, with nothing removed and the handle left open:
   * ERR_NETNS_NOT_NAMED when the handle has no name (NetNS.fromPid, current, an
   * anonymous namespace, a path outside the run directory);
   * ERR_NETNS_NAME_REPLACED when the name now holds another namespace;
   * ERR_NETNS_CLOSED on a closed handle. ENOENT when the name is already gone
   * (another delete won): the handle is closed then too, so a `finally { await
   * ns.delete() }` racing another deletion leaks no descriptor.
   */
  async delete(): Promise<void> {
    const name = this.name;
    if (name === undefined) {
      throw netnsError(ErrorCodes.NOT_NAMED, `${this.path} has no name in a run directory: nothing to delete (close() lets go of the handle)`, { path: this.path });
    }
    const runDir = this.path.slice(0, -(name.length + 1));
    this.acquire(); // held, so the comparison below is with a live namespace (and a closed handle is refused)
    try {
      const named = this.#namedIdentity();
      if (!this.equals({ dev: named.dev, inode: named.ino })) {
        throw netnsError(ErrorCodes.NAME_REPLACED, `${this.path} now names another namespace than this handle's: not deleted`, { path: this.path });
      }
      await deleteNamespace(name, { runDir });
    } catch (error) {
      if ((error as { code?: unknown }).code === 'ENOENT') this.close(); // the descriptor goes when released below
      throw error;
    } finally {
      this.release();
    }
    this.close();
  }


  // What the name holds now. A file there that is no namespace is a name another
  // deletion is removing (unmounted, not yet unlinked): gone, as ENOENT says.
  #namedIdentity(): { dev: number; ino: number } {
    try {
      return callNative(() => native().openNetnsIdentity(this.path));
    } catch (error) {
      if ((error as { code?: unknown }).code !== ErrorCodes.NOT_NETNS) throw error;
      throw netnsError('ENOENT', `${this.path} no longer names a namespace (another deletion is removing it): nothing deleted`, { path: this.path, cause: error });
    }
  }

  /**
   * Binds and listens inside this namespace, then hands the socket to `server`
   * (net or http). Async. Failures are NetnsErrors with Node's code
   * (EADDRINUSE, EACCES...) and the address; bad options ERR_NETNS_INVALID_ARG.
   */
  listen<S extends net.Server>(server: S, options?: ListenOptions): Promise<S> {
    return listenIn(this, server, options);
  }

  /**
   * A TCP (or unix) connection made from inside this namespace. Async: resolves
   * once connected. Failures are NetnsErrors with Node's code (ECONNREFUSED,
   * ETIMEDOUT after `timeout`, ENETUNREACH...), address and port, Node's error
   * as `cause`. Errors after the connection is made are the Socket's own.
   */
  connect(options: ConnectOptions): Promise<net.Socket> {
    return connectIn(this, options);
  }

  /** A UDP socket bound inside this namespace. Async; failures are NetnsErrors with Node's code (EADDRINUSE...). */
  createSocket(type: 'udp4' | 'udp6', options?: UdpOptions): Promise<dgram.Socket> {
    return createUdpSocket(this, type, options);
  }

  /** A raw O_CLOEXEC socket descriptor made inside this namespace (netlink, packet, …); close it yourself. Async. */
  socket(domain: SocketDomain, type: SocketType, protocol?: number): Promise<number> {
    return rawSocket(this, domain, type, protocol);
  }

  /**
   * A real ChildProcess started inside this namespace, returned at once (sync);
   * a command that cannot be started is an 'error' event with a NetnsError
   * (ENOENT, EACCES...), as Node reports spawn errors.
   */
  spawn(command: string, args?: string[], options?: NetnsSpawnOptions): ChildProcess {
    return spawnIn(this, command, args, options);
  }

  /**
   * Runs a command inside this namespace and collects its output. Async. A
   * command that cannot start rejects with a NetnsError (ENOENT...); one that
   * exits non-zero or dies of a signal rejects with ERR_NETNS_COMMAND_FAILED
   * (a CommandFailedError: exitCode, signal, stdout, stderr).
   */
  execFile(command: string, args?: string[], options?: ExecFileOptions): Promise<ExecFileResult> {
    return execFileIn(this, command, args, options);
  }

  /** Reads /proc/net/*, /proc/sys/net/* (and thread-self equivalents) as seen from this namespace. Async. */
  readFile(path: string): Promise<Buffer> {
    return readFileIn(this, path);
  }

  /** "NetNS(PATH, net:[INODE])". */
  override toString(): string {
    return `NetNS(${this.path}, net:[${this.inode}])`;
  }
}
