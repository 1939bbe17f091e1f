// An in-memory, transactional stand-in for nft, for deterministic tests of the
// lifecycle (timers, races, retries, crashes). It keeps nft's semantics where
// the manager depends on them: `add` is idempotent, deleting what is missing
// is ENOENT, deleting a set a rule still references is EBUSY, and a failed
// transaction changes nothing. It also keeps what the kernel and flock give:
// one writer at a time, a transaction of a dead writer that may still land
// before the next writer gets the lock, and set identity (a set destroyed and
// made again is another set), so tests can tell a kept set from a re-made one.
import { ErrorCodes, netnsError, type ErrorCode } from '../core/errors.js';
import { parseKernelText, type Family } from './addresses.js';
import { wantsElements, type AddrsetBackend, type KernelView, type ReadOptions, type WriterLock } from './backend.js';
import { unknownOp, type Op } from './ops.js';

interface MemorySet {
  id: number;
  family: Family | 'registry';
  elements: Map<string, string>; // element -> comment
}

interface MemoryLock extends WriterLock {
  dead: boolean;
  inFlight: Set<Op[]>;
}

const never = new Promise<never>(() => {});
const turn = () => new Promise((resolve) => setImmediate(resolve));

/**
 * An in-memory address-set backend for deterministic tests of code built on
 * AddressSets: pass it as the `backend` option (no nft and no root needed;
 * `netns` is still required, so tests pass `NetNS.current()`). It behaves as
 * nftables does where AddressSets depends on it (atomic transactions, ENOENT,
 * EBUSY for a referenced set, one writer at a time) and lets a test reference
 * sets, inject failures and crash the writer. It holds nothing to close.
 */
export class MemoryBackend implements AddrsetBackend {
  #tableExists = false;
  #sets = new Map<string, MemorySet>();
  #nextId = 1;
  readonly #referenced = new Set<string>();
  #failures: ErrorCode[] = [];
  #holder: MemoryLock | null = null;
  #onSend: ((ops: Op[]) => void)[] = [];
  readonly #waiting: (() => void)[] = [];
  /** Transactions applied successfully. */
  transactions = 0;
  /** Every transaction attempted, in order, for assertions. */
  readonly log: Op[][] = [];

  /** A rule starts (or stops) referencing a set, as `ip saddr @name` would. */
  reference(name: string): void {
    this.#referenced.add(name);
  }

  /** The rule referencing `name` is gone: its destroy can succeed again. */
  unreference(name: string): void {
    this.#referenced.delete(name);
  }

  /** The next transaction fails with this code, whatever it contains. */
  failNext(code: ErrorCode): void {
    this.#failures.push(code);
  }

  /** The elements of set `name` as nft lists them, sorted; undefined when there is no such set. */
  elements(name: string): string[] | undefined {
    const set = this.#sets.get(name);
    return set ? [...set.elements.keys()].sort() : undefined;
  }

  /** Which incarnation of a set this is: a new number after a destroy and re-create. */
  setId(name: string): number | undefined {
    return this.#sets.get(name)?.id;
  }

  /** The names of every set in the table (registry included), sorted. */
  setNames(): string[] {
    return [...this.#sets.keys()].sort();
  }

  /** Resolves when the next transaction has been sent, before it lands: the moment to crash its writer. */
  nextSend(): Promise<Op[]> {
    return new Promise((resolve) => this.#onSend.push(resolve));
  }

  /**
   * The writer's process dies: its transactions already sent to the kernel
   * land (or, with lands false, fail), none of its calls ever settles, and
   * the lock is free once nothing of it is in flight.
   */
  crashWriter({ lands = true }: { lands?: boolean } = {}): void {
    const lock = this.#holder;
    if (!lock) return;
    lock.dead = true;
    for (const ops of lock.inFlight) {
      if (lands) this.#tryCommit(ops);
    }
    lock.inFlight.clear();
    this.#free(lock);
  }

  /** The writer lock; waits up to timeoutMs for the holder to release it, then rejects with ERR_NETNS_ADDRSET_LOCKED. */
  async lock({ timeoutMs }: { timeoutMs: number }): Promise<WriterLock> {
    const giveUpAt = Date.now() + timeoutMs;
    while (this.#holder) {
      if (!(await this.#waitForFree(giveUpAt - Date.now()))) throw netnsError(ErrorCodes.ADDRSET_LOCKED, 'the table has another writer');
    }
    const lock: MemoryLock = { fd: null, dead: false, inFlight: new Set(), release: () => this.#free(lock) };
    this.#holder = lock;
    return lock;
  }

  #waitForFree(timeoutMs: number): Promise<boolean> {
    if (timeoutMs <= 0) return Promise.resolve(false);
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        resolve(true);
      };
      const timer = setTimeout(() => {
        this.#waiting.splice(this.#waiting.indexOf(wake), 1);
        resolve(false);
      }, timeoutMs);
      this.#waiting.push(wake);
    });
  }

  /**
   * Applies a transaction as the holder of `lock`: all of it or nothing,
   * rejecting with the code a failNext queued, or ENOENT/EBUSY/EEXIST as nft
   * would. After crashWriter() it never settles.
   */
  async apply(ops: Op[], lock: WriterLock): Promise<void> {
    const held = lock as MemoryLock;
    if (this.#holder !== held) throw netnsError(ErrorCodes.ADDRSET_LOCKED, 'a transaction from a writer that does not hold the lock');
    this.log.push(ops);
    held.inFlight.add(ops);
    for (const notify of this.#onSend.splice(0)) notify(ops);
    await turn(); // sent, not yet landed: a crash now may or may not let it land
    if (held.dead) return never;
    held.inFlight.delete(ops);
    const failure = this.#failures.shift();
    if (failure) throw netnsError(failure, `injected failure (${failure})`);
    this.#commit(ops);
    await turn(); // landed, not yet acknowledged
    if (held.dead) return never;
  }

  /** The table as it stands: its sets (with elements where asked) and the registry's records. */
  async read({ elements, registry }: ReadOptions): Promise<KernelView> {
    await Promise.resolve();
    const view: KernelView = { tableExists: this.#tableExists, sets: new Map(), records: new Map() };
    for (const [name, set] of this.#sets) {
      if (name === registry) {
        for (const [key, comment] of set.elements) view.records.set(key, comment);
      } else if (set.family !== 'registry') {
        view.sets.set(name, { name, family: set.family, elements: wantsElements(elements, name) ? [...set.elements.keys()].flatMap((text) => parseKernelText(text) ?? []) : null });
      }
    }
    return view;
  }

  #free(lock: MemoryLock): void {
    if (this.#holder !== lock) return;
    this.#holder = null;
    for (const wake of this.#waiting.splice(0)) wake();
  }

  #tryCommit(ops: Op[]): void {
    try {
      this.#commit(ops);
    } catch {
      // a transaction that fails changes nothing, landed late or not
    }
  }

  #commit(ops: Op[]): void {
    const sets = new Map([...this.#sets].map(([name, set]) => [name, { ...set, elements: new Map(set.elements) }]));
    let tableExists = this.#tableExists;
    for (const op of ops) tableExists = this.#applyOne(op, sets, tableExists);
    this.#sets = sets;
    this.#tableExists = tableExists;
    this.transactions++;
  }

  #applyOne(op: Op, sets: Map<string, MemorySet>, tableExists: boolean): boolean {
    if (op.op === 'addTable') return true;
    if (!tableExists) throw missing('table');
    const need = (name: string) => sets.get(name) ?? throwMissing(`set ${name}`);
    switch (op.op) {
      case 'addRegistry':
        if (!sets.has(op.name)) sets.set(op.name, { id: this.#nextId++, family: 'registry', elements: new Map() });
        break;
      case 'createSet':
        if (!sets.has(op.name)) sets.set(op.name, { id: this.#nextId++, family: op.family, elements: new Map() });
        need(op.name).elements.clear();
        break;
      case 'deleteSet':
        need(op.name);
        if (this.#referenced.has(op.name)) throw netnsError('EBUSY', `set ${op.name} is referenced by a rule`);
        sets.delete(op.name);
        break;
      case 'flushSet':
        need(op.name).elements.clear();
        break;
      case 'addElements':
        for (const { text } of op.elements) need(op.name).elements.set(text, '');
        break;
      case 'deleteElements':
        for (const { text } of op.elements) {
          if (!need(op.name).elements.delete(text)) throw missing(`element ${text}`);
        }
        break;
      case 'putRecord':
        need(op.registry).elements.set(op.key, op.comment);
        break;
      case 'deleteRecord':
        if (!need(op.registry).elements.delete(op.key)) throw missing(`record ${op.key}`);
        break;
      default:
        unknownOp(op);
    }
    return tableExists;
  }
}

function missing(what: string): Error {
  return netnsError('ENOENT', `no such ${what}`);
}

function throwMissing(what: string): never {
  throw missing(what);
}
