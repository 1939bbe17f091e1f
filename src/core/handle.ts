// The namespace handle every layer works with: an O_CLOEXEC descriptor of a
// checked network namespace, plus its identity. io/ and lifecycle take this
// type, so they never depend on the NetNS facade built on top of it.
import { ErrorCodes, netnsError } from './errors.js';
import { native } from './native.js';

// instanceof knows only this copy's class, while a program can hold two
// copies of the package (a bundle's and an installed one, or two versions).
// Every copy marks its handles with this registered symbol instead.
const HANDLE_BRAND = Symbol.for('netns.NsHandle');

/** Whether `value` is a namespace handle of any copy of this package. */
export function isNsHandle(value: unknown): value is NsHandle {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[HANDLE_BRAND] === true;
}

export class NsHandle implements Disposable {
  readonly path: string;
  /**
   * The name in its run directory it was created, attached or opened by (a path
   * directly in the run directory counts); undefined for an anonymous namespace
   * or another path. `spawn(..., { etc: true })` binds /etc/netns/NAME by it.
   */
  readonly name: string | undefined;
  readonly dev: number;
  readonly inode: number;
  #fd: number;
  #closed = false;
  #inUse = 0;

  protected constructor(path: string, fd: number, dev: number, inode: number, name?: string) {
    this.path = path;
    this.name = name;
    this.#fd = fd;
    this.dev = dev;
    this.inode = inode;
  }

  get fd(): number {
    this.#assertOpen();
    return this.#fd;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Same namespace: compares device and inode, as the kernel identifies it. */
  equals(other: NsHandle | { dev: number; inode: number }): boolean {
    return this.dev === other.dev && this.inode === other.inode;
  }

  /** Idempotent. The descriptor is released once no call is using it any more. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#inUse === 0) native().closeFd(this.#fd);
  }

  [Symbol.dispose](): void {
    this.close();
  }

  /** @internal */
  get [HANDLE_BRAND](): true {
    return true;
  }

  /** @internal Keeps the descriptor open for the duration of a call; pair with release(). */
  acquire(): number {
    this.#assertOpen();
    this.#inUse++;
    return this.#fd;
  }

  /** @internal */
  release(): void {
    this.#inUse--;
    if (this.#closed && this.#inUse === 0) native().closeFd(this.#fd);
  }

  #assertOpen(): void {
    if (this.#closed) {
      throw netnsError(ErrorCodes.CLOSED, `the handle for ${this.path} has been closed`, { path: this.path });
    }
  }
}
