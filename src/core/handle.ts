// The namespace handle every layer works with: an O_CLOEXEC descriptor of a
// checked network namespace, plus its identity. io/ and lifecycle take this
// type, so they never depend on the NetNS facade built on top of it.
import { ErrorCodes, kindOf, netnsError } from './errors.js';
import { native } from './native.js';

// instanceof knows only this copy's class, while a program can hold two
// copies of the package (a bundle's and an installed one, or two versions).
// Every copy marks its handles with this registered symbol instead.
const HANDLE_BRAND = Symbol.for('netns.NsHandle');

/** Whether `value` is a namespace handle of any copy of this package. */
export function isNsHandle(value: unknown): value is NsHandle {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[HANDLE_BRAND] === true;
}

/**
 * An open network namespace: the O_CLOEXEC descriptor and its identity, under
 * NetNS. close() is synchronous and idempotent, and lets go of the descriptor
 * only (the namespace and its name stay; ns.delete() removes the name).
 */
export class NsHandle implements Disposable {
  /** The path it was opened by (RUN_DIR/NAME, /proc/PID/ns/net...), or /proc/PID/fd/N for an anonymous namespace. */
  readonly path: string;
  /**
   * The name in its run directory it was created, attached or opened by (a path
   * directly in the run directory counts); undefined for an anonymous namespace
   * or another path. `spawn(..., { etc: true })` binds /etc/netns/NAME by it.
   */
  readonly name: string | undefined;
  /** The nsfs device number: with inode, the namespace's identity. */
  readonly dev: number;
  /** The namespace's inode, as `ip netns identify` and /proc/PID/ns/net (net:[INODE]) show it. */
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

  /** The descriptor (ERR_NETNS_CLOSED once closed); owned by the handle: do not close it. */
  get fd(): number {
    this.#assertOpen();
    return this.#fd;
  }

  /** Whether close() was called. */
  get closed(): boolean {
    return this.#closed;
  }

  /** Same namespace: compares device and inode, as the kernel identifies it. */
  equals(other: NsHandle | { dev: number; inode: number }): boolean {
    if (typeof other !== 'object' || other === null) throw netnsError(ErrorCodes.INVALID_ARG, `equals takes a NetNS or { dev, inode }, got ${kindOf(other)}`);
    return this.dev === other.dev && this.inode === other.inode;
  }

  /**
   * Synchronous and idempotent. Lets go of the descriptor, once no call is using
   * it any more; removes nothing from the system (the namespace lives on while
   * a name, process or socket holds it).
   */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#inUse === 0) native().closeFd(this.#fd);
  }

  /** close(), for `using`. */
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
