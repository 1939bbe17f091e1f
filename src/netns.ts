import { callNative, ErrorCodes, netnsError } from './errors.js';
import { resolveNamespacePath } from './names.js';
import { native } from './native.js';

/**
 * An open network namespace. The handle holds an O_CLOEXEC file descriptor, so
 * the namespace stays alive while the handle is open, even if its name is
 * deleted. Calls already using the handle keep it open until they finish.
 */
export class NetNS implements Disposable {
  readonly path: string;
  readonly dev: number;
  readonly inode: number;
  #fd: number;
  #closed = false;
  #inUse = 0;

  private constructor(path: string, fd: number, dev: number, inode: number) {
    this.path = path;
    this.#fd = fd;
    this.dev = dev;
    this.inode = inode;
  }

  /** Opens a bare name (/run/netns/NAME) or any nsfs path, checking it is a network namespace. */
  static open(pathOrName: string): NetNS {
    const path = resolveNamespacePath(pathOrName);
    const opened = callNative(() => native.openNetns(path));
    return new NetNS(path, opened.fd, opened.dev, opened.ino);
  }

  /** The namespace of the calling thread (not necessarily the process's main thread). */
  static current(): NetNS {
    return NetNS.open('/proc/thread-self/ns/net');
  }

  /** The namespace a process's main thread is in. */
  static fromPid(pid: number): NetNS {
    if (!Number.isSafeInteger(pid) || pid <= 0) {
      throw netnsError(ErrorCodes.INVALID_ARG, `pid must be a positive integer, got ${String(pid)}`);
    }
    return NetNS.open(`/proc/${pid}/ns/net`);
  }

  get fd(): number {
    this.#assertOpen();
    return this.#fd;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Same namespace: compares device and inode, as the kernel identifies it. */
  equals(other: NetNS | { dev: number; inode: number }): boolean {
    return this.dev === other.dev && this.inode === other.inode;
  }

  /** Idempotent. The descriptor is released once no call is using it any more. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#inUse === 0) native.closeFd(this.#fd);
  }

  [Symbol.dispose](): void {
    this.close();
  }

  /** Keeps the descriptor open for the duration of a call; pair with release(). @internal */
  acquire(): number {
    this.#assertOpen();
    this.#inUse++;
    return this.#fd;
  }

  /** @internal */
  release(): void {
    this.#inUse--;
    if (this.#closed && this.#inUse === 0) native.closeFd(this.#fd);
  }

  toString(): string {
    return `NetNS(${this.path}, net:[${this.inode}])`;
  }

  #assertOpen(): void {
    if (this.#closed) {
      throw netnsError(ErrorCodes.CLOSED, `the handle for ${this.path} has been closed`, {
        path: this.path,
      });
    }
  }
}
