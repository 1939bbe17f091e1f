// A call's host namespace (CmdArgs.hostNs): the one handleCall was given (a
// resident daemon's caller's), else the calling thread's, which a plugin
// process runs in. That one is opened only when first asked for, so a
// handler that never touches a namespace never loads the addon, and closed
// when the call ends; a given one stays its giver's to close.
import { callNative } from '../core/errors.js';
import { native, type NsIdentity } from '../core/native.js';
import { NetNS } from '../netns.js';

export class CallHost implements Disposable {
  readonly #given: NetNS | undefined;
  #opened: NetNS | undefined;

  constructor(given: NetNS | undefined) {
    this.#given = given;
  }

  get ns(): NetNS {
    return this.#given ?? (this.#opened ??= NetNS.current());
  }

  /** Its identity, without opening it. */
  identity(): NsIdentity {
    return this.#given ? { dev: this.#given.dev, ino: this.#given.inode } : callNative(() => native().threadNetns());
  }

  [Symbol.dispose](): void {
    this.#opened?.close();
  }
}
