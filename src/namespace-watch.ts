// Named namespaces being added and deleted in a run directory, reported as
// `ip netns monitor` (iproute2 ip/ipnetns.c, netns_monitor) and pyroute2's
// NetNSManager report them: inotify on the directory, IN_CREATE as 'add' and
// IN_DELETE as 'delete', in the kernel's order, with nothing stat()ed or
// guessed. So 'add' comes when the file is created, before the namespace is
// mounted on it (ip binds last), and a failed add is 'add' then 'delete'.
import { callNative, ErrorCodes, fromNative, netnsError, type NetnsError } from './core/errors.js';
import { checkRunDir, type RunDirOption } from './core/names.js';
import { native, type NativeFdWatch } from './core/native.js';
import { ownOptions } from './core/own.js';

/** A change NetNS.watch() reports, as `ip netns monitor` prints it. */
export interface NamespaceEvent {
  /** add: the file was created (before ip mounts the namespace on it); delete: it was removed. */
  type: 'add' | 'delete';
  /** The name in the run directory. */
  name: string;
}

/** Options of NetNS.watch(): the run directory, and a signal that ends the iteration. */
export interface NamespaceWatchOptions extends RunDirOption {
  /** Aborting ends the iteration as close() does: no error. */
  signal?: AbortSignal;
}

/**
 * What NetNS.watch() returns: `for await` over the events; leaving the loop,
 * close() or the signal stops the watch and frees its descriptor. close() is
 * synchronous and idempotent; `using` works. An inotify overflow ends the
 * iteration with an ENOBUFS NetnsError.
 */
export interface NamespaceWatch extends AsyncIterable<NamespaceEvent>, Disposable {
  /** Synchronous and idempotent. Events not yet taken are dropped, and the iteration ends. */
  close(): void;
}

// <sys/inotify.h>
const IN_CREATE = 0x100;
const IN_DELETE = 0x200;
const IN_Q_OVERFLOW = 0x4000;
const IN_IGNORED = 0x8000;
const EVENT_HEADER = 16; // wd, mask, cookie, len; then len bytes of NUL-padded name

/** Events taken from the kernel but not yet by the loop; past this, reading pauses and the kernel's queue holds the rest. */
const HIGH_WATER_MARK = 1024;

type Waiter = { resolve(result: IteratorResult<NamespaceEvent>): void; reject(error: unknown): void };

class RunDirWatch implements NamespaceWatch, AsyncIterableIterator<NamespaceEvent> {
  readonly #runDir: string;
  #native: NativeFdWatch | null = null;
  #paused = false;
  readonly #queue: NamespaceEvent[] = [];
  readonly #waiters: Waiter[] = [];
  /** Set once no event can follow what is queued: the error to throw after them, or null for a clean end. */
  #ending: { error: NetnsError | null } | null = null;
  readonly #signal: AbortSignal | undefined;
  readonly #onAbort = () => this.close();

  constructor(runDir: string, signal: AbortSignal | undefined) {
    this.#runDir = runDir;
    this.#signal = signal;
    if (signal?.aborted) {
      this.#ending = { error: null };
      return;
    }
    this.#native = callNative(() => native().runDirWatch(runDir, (error, data) => this.#received(error, data)));
    signal?.addEventListener('abort', this.#onAbort, { once: true });
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<IteratorResult<NamespaceEvent>> {
    const event = this.#queue.shift();
    if (event) {
      this.#resumeBelowMark();
      return Promise.resolve({ value: event, done: false });
    }
    if (this.#ending) return this.#finish();
    return new Promise((resolve, reject) => this.#waiters.push({ resolve, reject }));
  }

  /** `break` out of a for-await loop lands here. */
  return(): Promise<IteratorResult<NamespaceEvent>> {
    this.close();
    return Promise.resolve({ value: undefined, done: true });
  }

  close(): void {
    this.#queue.length = 0;
    this.#end(null);
    this.#ending = { error: null }; // an error not yet thrown is dropped with the events
  }

  [Symbol.dispose](): void {
    this.close();
  }

  // The error, if any, is thrown once; after it the iteration is done.
  #finish(): Promise<IteratorResult<NamespaceEvent>> {
    const error = this.#ending!.error;
    this.#ending = { error: null };
    return error ? Promise.reject(error) : Promise.resolve({ value: undefined, done: true });
  }

  #received(error: Error | null, data: Buffer | null): void {
    if (data) this.#parse(data);
    if (error) this.#end(fromNative(error) as NetnsError);
    this.#wake();
    if (!this.#paused && this.#native && this.#queue.length >= HIGH_WATER_MARK) {
      this.#paused = true;
      this.#native.pause();
    }
  }

  #parse(data: Buffer): void {
    for (let offset = 0; offset + EVENT_HEADER <= data.length; ) {
      const mask = data.readUInt32LE(offset + 4);
      const start = offset + EVENT_HEADER;
      const end = start + data.readUInt32LE(offset + 12);
      offset = end;
      if (mask & IN_Q_OVERFLOW) return this.#end(this.#overflow());
      if (mask & IN_IGNORED) return this.#end(null); // the run directory itself was deleted: nothing more can come
      const nul = data.indexOf(0, start);
      const name = data.toString('utf8', start, nul === -1 || nul > end ? end : nul);
      if (mask & IN_CREATE) this.#queue.push({ type: 'add', name });
      if (mask & IN_DELETE) this.#queue.push({ type: 'delete', name });
    }
  }

  #overflow(): NetnsError {
    return netnsError(
      'ENOBUFS',
      `the inotify queue of ${this.#runDir} overflowed (sysctl fs.inotify.max_queued_events): events were lost; list the namespaces again and watch anew`,
      { path: this.#runDir },
    );
  }

  // Stops watching; what is queued is still taken, then `error` if any.
  #end(error: NetnsError | null): void {
    this.#ending ??= { error };
    this.#native?.close();
    this.#native = null;
    this.#signal?.removeEventListener('abort', this.#onAbort);
    this.#wake();
  }

  #wake(): void {
    while (this.#waiters.length > 0 && (this.#queue.length > 0 || this.#ending)) {
      const waiter = this.#waiters.shift()!;
      const event = this.#queue.shift();
      if (event) waiter.resolve({ value: event, done: false });
      else this.#finish().then(waiter.resolve, waiter.reject);
    }
  }

  #resumeBelowMark(): void {
    if (this.#paused && this.#native && this.#queue.length < HIGH_WATER_MARK / 2) {
      this.#paused = false;
      this.#native.resume();
    }
  }
}

/** Watches the run directory (made if missing, as ip does) for namespaces added and deleted. */
export function watchNamespaces(options?: NamespaceWatchOptions): NamespaceWatch {
  const { runDir, signal } = ownOptions(options);
  const dir = checkRunDir(runDir);
  if (signal !== undefined && !(signal instanceof AbortSignal)) {
    throw netnsError(ErrorCodes.INVALID_ARG, 'options.signal must be an AbortSignal');
  }
  return new RunDirWatch(dir, signal);
}
