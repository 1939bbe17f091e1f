// AddressSets: per-owner IP address sets kept as nftables sets inside a
// network namespace, with a race-free lifecycle. One process writes a table
// at a time (the writer lock). Within it, every request goes down one road to
// the kernel (pipeline.ts), planned in order against the model, and a destroy
// is checked against the owner's generation and deadline when it is planned,
// so a destroy scheduled before the owner came back does nothing.
import { EventEmitter } from 'node:events';
import { ErrorCodes, netnsError } from '../core/errors.js';
import { isNsHandle } from '../core/handle.js';
import { NetNS } from '../netns.js';
import { parseEntries, type Entry, type Family } from './addresses.js';
import { FamilyEntries } from './entries.js';
import type { AddrsetBackend, KernelView, ReadOptions, WriterLock } from './backend.js';
import { systemClock, timerAt, type Clock } from './clock.js';
import { collectGarbage, type GcHost } from './gc.js';
import { NetlinkBackend } from './netlink-backend.js';
import { own } from '../netlink/validate.js';
import { NftBackend } from './nft-backend.js';
import { checkOwner, checkPrefix, ownerHash, registryName, setName } from './naming.js';
import { FAMILIES, OwnerState, planRequest, type PlanOutcome, type RequestKind } from './owner.js';
import { Pipeline } from './pipeline.js';
import { reconcile, type Reconciled } from './reconcile.js';
import type {
  AddrsetBackendChoice,
  AddressSetsEvents,
  AddressSetsOptions,
  AddressSetsStats,
  GcOptions,
  GcReport,
  OwnerDetails,
  SetInfo,
  SetRefs,
} from './types.js';

const TABLE = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
/**
 * The longest `deleteDelayMs` AddressSets.open accepts: a hundred years. A
 * pending delete's deadline is recorded in the kernel as epoch milliseconds in
 * an element comment, and this keeps it a plain 13-digit number a restarted
 * process can read back.
 */
export const MAX_DELETE_DELAY_MS = 100 * 365 * 24 * 3600 * 1000;

function nonNegative(value: number | undefined, fallback: number, what: string, max = Number.MAX_SAFE_INTEGER): number {
  const chosen = value ?? fallback;
  if (typeof chosen !== 'number' || !Number.isFinite(chosen) || chosen < 0 || chosen > max) {
    throw netnsError(ErrorCodes.ADDRSET_INVALID_OPTION, `${what} must be a number from 0 to ${max}`);
  }
  return chosen;
}

const BACKENDS = ['netlink', 'nft'] as const;

function checkBackend(choice: unknown): void {
  if (choice === undefined || (BACKENDS as readonly unknown[]).includes(choice)) return;
  const backend = choice as Partial<AddrsetBackend> | null;
  if (typeof backend === 'object' && backend !== null && ['apply', 'read', 'lock'].every((method) => typeof backend[method as keyof AddrsetBackend] === 'function')) return;
  throw netnsError(ErrorCodes.ADDRSET_INVALID_OPTION, `backend must be ${BACKENDS.map((name) => `'${name}'`).join(' or ')}, or an object with apply, read and lock`);
}

/** The backend named (netlink by default), made for `table` in `ns`; a backend object is used as given. */
async function makeBackend(ns: NetNS, table: string, choice: AddrsetBackendChoice = 'netlink'): Promise<{ backend: AddrsetBackend; own: boolean }> {
  if (typeof choice === 'object') return { backend: choice, own: false };
  const ref = { family: 'inet', table } as const;
  return { backend: choice === 'nft' ? await NftBackend.create(ns, ref) : await NetlinkBackend.create(ns, ref), own: true };
}

interface Settings {
  prefix: string;
  deleteDelayMs: number;
  retryIntervalMs: number;
  maxRetryIntervalMs: number;
  lockTimeoutMs: number;
}

/** Every option checked before anything is opened, locked or run. */
function checkOptions(options: AddressSetsOptions): Settings {
  if (typeof options?.table !== 'string' || !TABLE.test(options.table)) {
    throw netnsError(ErrorCodes.ADDRSET_INVALID_OPTION, `table must match ${TABLE}`);
  }
  if (!isNsHandle(options.netns) && typeof options.netns !== 'string') {
    throw netnsError(ErrorCodes.INVALID_ARG, 'netns must be a NetNS, a name or a path');
  }
  if ('createTable' in options) {
    throw netnsError(ErrorCodes.ADDRSET_INVALID_OPTION, 'createTable is gone: pass { readOnly: true } to only look');
  }
  // Only a boolean: readOnly: 'false' (a string, from an environment variable) would otherwise open a reader.
  if (options.readOnly !== undefined && typeof options.readOnly !== 'boolean') {
    throw netnsError(ErrorCodes.ADDRSET_INVALID_OPTION, `readOnly must be true or false, got ${JSON.stringify(options.readOnly)}`);
  }
  checkBackend(options.backend);
  const retryIntervalMs = Math.max(1, nonNegative(options.retryIntervalMs, 1_000, 'retryIntervalMs'));
  return {
    prefix: checkPrefix(options.prefix ?? 'as'),
    deleteDelayMs: nonNegative(options.deleteDelayMs, 20_000, 'deleteDelayMs', MAX_DELETE_DELAY_MS),
    retryIntervalMs,
    maxRetryIntervalMs: Math.max(retryIntervalMs, nonNegative(options.maxRetryIntervalMs, 30_000, 'maxRetryIntervalMs')),
    lockTimeoutMs: nonNegative(options.lockTimeoutMs, 10_000, 'lockTimeoutMs'),
  };
}

/**
 * Per-owner IP address sets (one IPv4 and one IPv6 nftables set per owner, e.g.
 * per Kubernetes namespace) in one `inet` table of a network namespace, for
 * your own rules to reference. Get one with `AddressSets.open(options)`; every
 * method that touches the kernel is async and rejects with a NetnsError
 * (`ERR_NETNS_ADDRSET_*`). Deleting an owner empties its sets at once and
 * destroys them after `deleteDelayMs`, unless the owner is ensured again
 * first; ownership and pending deadlines are recorded in the kernel, so a
 * restarted process picks up where the last one stopped. One process writes a
 * table at a time. Emits the events of AddressSetsEvents. See docs/addrset.md.
 */
export class AddressSets extends EventEmitter<AddressSetsEvents> {
  /** The `inet` table the sets live in, as given to open(). */
  readonly table: string;
  /** The set-name prefix marking the sets this instance owns (default 'as'). */
  readonly prefix: string;
  /** True when opened with `readOnly: true`: it holds no writer lock and refuses every change. */
  readonly readOnly: boolean;
  readonly #registry: string;
  readonly #backend: AddrsetBackend;
  /** Made by open() (closed by close()), not passed in. */
  readonly #ownBackend: boolean;
  readonly #lock: WriterLock | null;
  readonly #pipeline: Pipeline | null;
  readonly #clock: Clock;
  readonly #deleteDelayMs: number;
  readonly #retryIntervalMs: number;
  readonly #maxRetryIntervalMs: number;
  readonly #ownNs: NetNS | null;
  readonly #byHash = new Map<string, OwnerState>();
  /** Both set names of every indexed owner: a name held here is never debris. */
  readonly #byName = new Map<string, OwnerState>();
  #closed = false;
  /** A read-only instance's reads in flight: close() lets them finish before it closes the backend. */
  readonly #reads = new Set<Promise<unknown>>();
  #destroyed = 0;
  #destroyFailures = 0;

  private constructor(options: AddressSetsOptions & Settings, backend: AddrsetBackend, ownBackend: boolean, lock: WriterLock | null, ownNs: NetNS | null) {
    super();
    this.table = options.table;
    this.prefix = options.prefix;
    this.readOnly = lock === null;
    this.#registry = registryName(options.prefix);
    this.#backend = backend;
    this.#ownBackend = ownBackend;
    this.#lock = lock;
    this.#pipeline = lock && new Pipeline(backend, lock, () => this.#resync(lock));
    this.#clock = options.clock ?? systemClock;
    this.#deleteDelayMs = options.deleteDelayMs;
    this.#retryIntervalMs = options.retryIntervalMs;
    this.#maxRetryIntervalMs = options.maxRetryIntervalMs;
    this.#ownNs = ownNs;
  }

  /**
   * Opens the table as its one writer (waiting up to lockTimeoutMs for another
   * to finish), creating it if needed, and adopts the sets a previous process
   * left, resuming pending deletes. With readOnly: only looks. Options are
   * checked before anything is opened (ERR_NETNS_ADDRSET_INVALID_OPTION); a
   * table another process writes past lockTimeoutMs rejects with
   * ERR_NETNS_ADDRSET_LOCKED naming its pid. A namespace given by name or path
   * is opened here and closed by close().
   */
  static async open(options: AddressSetsOptions): Promise<AddressSets> {
    return (await AddressSets.#open(options, false))!;
  }

  /**
   * As open(), but only if the table is there: null, with nothing created,
   * when it is not (a CNI DEL of an attachment never added must leave no
   * table behind). A writer looks holding the writer lock, as the table's
   * sole writer, so other writers in the namespace cannot make the look fail.
   */
  static openExisting(options: AddressSetsOptions): Promise<AddressSets | null> {
    return AddressSets.#open(options, true);
  }

  static async #open(options: AddressSetsOptions, onlyExisting: boolean): Promise<AddressSets | null> {
    // Own properties only: a polluted Object.prototype must supply no clock, prefix or backend.
    options = own(options);
    const settings = checkOptions(options);
    const ownNs = typeof options.netns === 'string' ? NetNS.open(options.netns) : null;
    let made: { backend: AddrsetBackend; own: boolean } | undefined;
    let lock: WriterLock | null = null;
    try {
      made = await makeBackend(ownNs ?? (options.netns as NetNS), options.table, options.backend);
      lock = options.readOnly ? null : await made.backend.lock({ timeoutMs: settings.lockTimeoutMs });
      const sets = new AddressSets(Object.assign(options, settings), made.backend, made.own, lock, ownNs);
      if (await sets.#start(onlyExisting)) return sets;
      await sets.close();
      return null;
    } catch (error) {
      lock?.release();
      if (made?.own) made.backend.close?.();
      ownNs?.close();
      throw error;
    }
  }

  /**
   * Makes the owner live: creates its sets if needed, cancels a pending delete
   * (emitting deleteCancelled; the same sets are kept), and with `addresses`
   * sets their content to exactly those (addresses or CIDR prefixes, either
   * family). Resolves with the two set names for your rules. A bad owner is
   * ERR_NETNS_ADDRSET_INVALID_OWNER, a bad address
   * ERR_NETNS_ADDRSET_INVALID_ADDRESS (nothing sent), overlapping entries
   * ERR_NETNS_ADDRSET_OVERLAP, a set of someone else's under the owner's set
   * names ERR_NETNS_ADDRSET_NAME_COLLISION; a readOnly instance refuses with
   * ERR_NETNS_ADDRSET_READ_ONLY.
   */
  async ensure(owner: string, addresses?: string[]): Promise<SetRefs> {
    this.#assertWritable();
    const entries = addresses === undefined ? undefined : parseEntries(addresses);
    const state = this.#stateFor(checkOwner(owner), true)!;
    await this.#submit(state, { kind: 'ensure', entries });
    return this.#refs(state);
  }

  /**
   * Adds addresses or CIDR prefixes to a live owner's sets in one transaction.
   * An owner not ensured in this process is ERR_NETNS_ADDRSET_UNKNOWN_OWNER;
   * an entry overlapping one already there is ERR_NETNS_ADDRSET_OVERLAP.
   */
  async add(owner: string, addresses: string[]): Promise<void> {
    await this.#submit(this.#liveState(owner), { kind: 'add', entries: parseEntries(addresses) });
  }

  /**
   * Removes addresses or CIDR prefixes from a live owner's sets in one
   * transaction. An owner not ensured in this process is
   * ERR_NETNS_ADDRSET_UNKNOWN_OWNER.
   */
  async remove(owner: string, addresses: string[]): Promise<void> {
    await this.#submit(this.#liveState(owner), { kind: 'remove', entries: parseEntries(addresses) });
  }

  /**
   * Sets a live owner's content to exactly these addresses in one transaction:
   * never observed half-filled. An owner not ensured in this process is
   * ERR_NETNS_ADDRSET_UNKNOWN_OWNER.
   */
  async replace(owner: string, addresses: string[]): Promise<void> {
    await this.#submit(this.#liveState(owner), { kind: 'replace', entries: parseEntries(addresses) });
  }

  /**
   * Empties the owner's sets now and destroys them after deleteDelayMs, unless
   * the owner is ensured again first (emits deleteDeferred once emptied, then
   * destroyed, or destroyFailed and a retry). The deadline is recorded in the kernel, so it
   * survives this process. An owner with no sets resolves with nothing done.
   */
  async delete(owner: string): Promise<void> {
    this.#assertWritable();
    const state = this.#stateFor(checkOwner(owner), false);
    if (state) await this.#submit(state, { kind: 'delete' });
  }

  /**
   * Every set this instance's prefix owns, as the kernel has it (owner,
   * family, name, element count, and live/pending/orphan as this process sees
   * it), sorted by set name.
   */
  async list(): Promise<SetInfo[]> {
    this.#assertOpen();
    return this.#rows(await this.#read(true));
  }

  /** One owner's sets and their elements, as the kernel has them; state 'absent' when it has none. */
  async inspect(owner: string): Promise<OwnerDetails> {
    checkOwner(owner);
    this.#assertOpen();
    const hash = ownerHash(owner);
    const names = { v4: setName(this.prefix, 4, hash), v6: setName(this.prefix, 6, hash) };
    // The elements of this owner's two sets only: a table may hold thousands.
    const view = await this.#read(new Set([names.v4, names.v6]));
    const rows = this.#rows(view, { hash, owner });
    const first = rows.find((row) => row.owner === owner);
    // Names are a short hash: the sets under them may be another owner's, whose addresses are not this one's.
    const holder = rows.find((row) => row.name === names.v4 || row.name === names.v6)?.owner;
    const elementsOf = (name: string) => (holder !== undefined && holder !== null && holder !== owner ? [] : (view.sets.get(name)?.elements ?? []).map((entry) => entry.text));
    return {
      owner,
      state: first?.state ?? 'absent',
      ...(first?.deadline === undefined ? {} : { deadline: first.deadline }),
      v4: { name: names.v4, elements: elementsOf(names.v4) },
      v6: { name: names.v6, elements: elementsOf(names.v6) },
    };
  }

  /**
   * Removes owned sets whose owner is not in `live`, is not live in this
   * process, and has no pending deadline ahead; also debris of our names.
   * `live` is required: pass [] to mean "no owner besides this process's";
   * without it gc rejects with ERR_NETNS_ADDRSET_LIVE_REQUIRED, removing
   * nothing. Resolves with what went and what stayed, and why.
   */
  async gc(options: GcOptions): Promise<GcReport> {
    this.#assertWritable();
    // An inherited `live` (a polluted Object.prototype) must not stand for the explicit list gc requires.
    options = own(options);
    const live = options?.live;
    if (live === undefined || live === null || typeof (live as Iterable<string>)[Symbol.iterator] !== 'function' || typeof live === 'string') {
      throw netnsError(ErrorCodes.ADDRSET_LIVE_REQUIRED, 'gc needs the live owners ({ live: [...] }); [] means none besides those live in this process');
    }
    const owners = [...live].map((owner) => checkOwner(owner));
    return collectGarbage(this.#gcHost(), owners, Boolean(options.dryRun));
  }

  /**
   * Destroys now every pending set whose deadline has passed, instead of
   * waiting for its timer: a short-lived writer (a CNI plugin, a CLI run)
   * closes before any timer fires, and deadlines recorded by earlier runs
   * would otherwise wait for the next gc(). An owner ensured meanwhile is
   * kept, as a timer's destroy would keep it. Resolves with how many owners'
   * sets went.
   */
  async destroyDue(): Promise<number> {
    this.#assertWritable();
    const now = this.#clock.now();
    const due = [...this.#byHash.values()].filter((state) => state.status === 'pending' && state.deadline! <= now);
    const outcomes = await Promise.all(due.map((state) => {
      this.#clearTimer(state);
      return this.#submit(state, { kind: 'destroy', generation: state.generation });
    }));
    return outcomes.filter((outcome) => outcome.effect === 'destroyed').length;
  }

  /**
   * Deletes the table when nothing is left in it: no owner's set (live,
   * pending or orphan, here or in the kernel), no record, nobody's chain,
   * map or other set. A short-lived writer calls it after its last delete
   * and destroyDue(), so the table goes with its last set. The writer lock
   * keeps this library's other writers out meanwhile; the kernel refuses the
   * delete if anything else changed the ruleset since the table was seen
   * empty (see the backend), and then the table stays for a later call.
   * Resolves whether the table went; the instance stays usable (its next
   * write makes the table again). The nft backend keeps the table.
   */
  async deleteTableIfEmpty(): Promise<boolean> {
    this.#assertWritable();
    const remove = this.#backend.removeTableIfEmpty?.bind(this.#backend);
    if (!remove) return false;
    return this.#pipeline!.exclusive(async () => {
      if ([...this.#byHash.values()].some((state) => state.inKernel || state.status !== 'absent' || state.requests > 0)) return false;
      return remove(this.#registry, this.#lock!);
    });
  }

  /** @deprecated use deleteTableIfEmpty(). */
  declare removeTableIfEmpty: () => Promise<boolean>;

  /** Resolves once no request is queued or in flight (timers that have not fired do not count). */
  async settled(): Promise<void> {
    await this.#pipeline?.idle();
  }

  /** Counters of this instance (owners by state, transactions, destroys) and its next deadline, read synchronously. */
  stats(): AddressSetsStats {
    const count = (status: string) => [...this.#byHash.values()].filter((state) => state.status === status).length;
    const deadlines = [...this.#byHash.values()].filter((state) => state.status === 'pending').map((state) => state.deadline!);
    return {
      live: count('live'),
      pending: count('pending'),
      orphan: count('orphan'),
      transactions: this.#pipeline?.transactions ?? 0,
      failedTransactions: this.#pipeline?.failedTransactions ?? 0,
      destroyed: this.#destroyed,
      destroyFailures: this.#destroyFailures,
      ...(deadlines.length === 0 ? {} : { nextDeadline: deadlines.reduce((a, b) => Math.min(a, b)) }),
    };
  }

  /**
   * Stops timers, waits for work in flight, gives up the table and closes the
   * backend open() made (the netlink socket). Pending deadlines stay recorded in the kernel.
   * Removes nothing from the kernel: the sets stay, and the next writer to open
   * the table destroys them at their deadlines. Later calls reject with
   * ERR_NETNS_ADDRSET_CLOSED.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const state of this.#byHash.values()) this.#clearTimer(state);
    await this.#pipeline?.idle();
    await Promise.allSettled(this.#reads);
    this.#lock?.release();
    if (this.#ownBackend) this.#backend.close?.();
    this.#ownNs?.close();
  }

  /** False (and nothing done) when onlyExisting and the table is not there. */
  async #start(onlyExisting: boolean): Promise<boolean> {
    if (onlyExisting && !(await this.#read(false)).tableExists) return false;
    if (this.#pipeline) {
      await this.#submitOps([{ op: 'addTable' }, { op: 'addRegistry', name: this.#registry }]).catch((error: unknown) => {
        throw nameTaken(error, `the registry set ${this.#registry} (open with another prefix)`);
      });
    }
    // A reader plans nothing: what each set holds is read again whenever it is asked for.
    this.#adopt(reconcile(await this.#read(this.#pipeline !== null), this.prefix));
    return true;
  }

  /** The kernel's view; a writer reads between its transactions, as the table's sole writer. */
  #read(elements: ReadOptions['elements']): Promise<KernelView> {
    const read = () => this.#backend.read({ elements, registry: this.#registry, soleWriter: this.#pipeline !== null });
    if (this.#pipeline) return this.#pipeline.exclusive(read);
    const reading = read();
    this.#reads.add(reading);
    const forget = () => this.#reads.delete(reading);
    reading.then(forget, forget);
    return reading;
  }

  /** `named`: an owner the caller named, so that its sets show its name even when recorded by hash only (too long). */
  #rows(view: KernelView, named?: { hash: string; owner: string }): SetInfo[] {
    const found = reconcile(view, this.prefix);
    const rows: SetInfo[] = [];
    for (const { record, names } of found.owners) {
      const state = this.#byHash.get(record.ownerHash);
      const deadline = state?.status === 'pending' ? state.deadline : record.deadline;
      const owner = record.owner ?? state?.owner ?? (record.ownerHash === named?.hash ? named.owner : null);
      for (const family of FAMILIES) {
        rows.push({
          owner,
          family,
          name: names[family],
          elements: view.sets.get(names[family])?.elements?.length ?? 0,
          state: state?.status === 'live' ? 'live' : deadline !== undefined ? 'pending' : 'orphan',
          ...(deadline === undefined ? {} : { deadline }),
        });
      }
    }
    for (const { owner, family, name } of found.leftovers) {
      rows.push({ owner, family, name, elements: view.sets.get(name)?.elements?.length ?? 0, state: 'orphan' });
    }
    return rows.sort((a, b) => a.name.localeCompare(b.name));
  }

  // Takes in recorded owners this process does not know yet, with their content.
  #adopt(found: Reconciled): void {
    for (const { record, elements } of found.owners) {
      const known = this.#byHash.get(record.ownerHash);
      if (known && known.status !== 'absent') continue;
      const state = known ?? new OwnerState(record.owner, record.ownerHash, this.prefix);
      if (!known) this.#index(state);
      state.inKernel = true;
      if (elements) loadEntries(state, elements);
      state.status = record.deadline === undefined ? 'orphan' : 'pending';
      state.deadline = record.deadline;
      if (state.status === 'pending') this.#scheduleDestroy(state, record.deadline!);
    }
  }

  /**
   * Someone changed the table by hand (a request failed with ENOENT or an
   * overlap: see pipeline.ts): makes the table and registry again if they are
   * gone and takes the kernel's word for what each owner holds. A live owner
   * whose sets are gone keeps its content, and its next request makes them
   * again with it; any other such owner is gone.
   */
  async #resync(lock: WriterLock): Promise<void> {
    await this.#backend.apply([{ op: 'addTable' }, { op: 'addRegistry', name: this.#registry }], lock);
    const found = reconcile(await this.#backend.read({ elements: true, registry: this.#registry, soleWriter: true }), this.prefix);
    const held = new Map(found.owners.map((owner) => [owner.record.ownerHash, owner]));
    for (const state of this.#byHash.values()) {
      if (!state.inKernel) continue;
      const elements = held.get(state.hash)?.elements;
      if (elements) loadEntries(state, elements);
      else this.#lost(state);
    }
    this.#adopt(found);
  }

  #lost(state: OwnerState): void {
    state.inKernel = false;
    if (state.status === 'live') return;
    this.#clearTimer(state);
    state.status = 'absent';
    state.deadline = undefined;
    state.generation++;
    for (const family of FAMILIES) state.entries[family] = new FamilyEntries();
    this.#forgetIfIdle(state);
  }

  #gcHost(): GcHost {
    return {
      prefix: this.prefix,
      registry: this.#registry,
      now: () => this.#clock.now(),
      // gc reads inside its own exclusive section (host.exclusive): not through #read, which would wait for that section.
      read: (elements) => this.#backend.read({ elements, registry: this.#registry, soleWriter: true }),
      exclusive: (work) => this.#pipeline!.exclusive(work),
      submitJob: (job) => this.#pipeline!.submit(job),
      submitCollect: (state, liveHashes) => this.#submit(state, { kind: 'collect', liveHashes }),
      known: (hash) => {
        const state = this.#byHash.get(hash);
        return state?.inKernel ? state : undefined;
      },
      adopt: (found) => this.#adopt(found),
      claimed: (name) => this.#byName.has(name),
    };
  }

  #index(state: OwnerState): void {
    this.#byHash.set(state.hash, state);
    for (const family of FAMILIES) this.#byName.set(state.names[family], state);
  }

  #forgetIfIdle(state: OwnerState): void {
    if (!state.forgettable || this.#byHash.get(state.hash) !== state) return;
    this.#byHash.delete(state.hash);
    for (const family of FAMILIES) this.#byName.delete(state.names[family]);
  }

  #stateFor(owner: string, create: boolean): OwnerState | undefined {
    this.#assertOpen();
    const hash = ownerHash(owner);
    let state = this.#byHash.get(hash);
    if (state) {
      state.owner ??= owner; // adopted by hash: now we know its name
      return state;
    }
    if (!create) return undefined;
    state = new OwnerState(owner, hash, this.prefix);
    const holder = this.#byName.get(state.names[4]);
    if (holder) {
      throw netnsError(ErrorCodes.ADDRSET_NAME_COLLISION, `owners ${JSON.stringify(owner)} and ${JSON.stringify(holder.label)} hash to the same set names (${state.names[4]})`);
    }
    this.#index(state);
    return state;
  }

  #liveState(owner: string): OwnerState {
    this.#assertWritable();
    const state = this.#stateFor(checkOwner(owner), false);
    if (!state) throw netnsError(ErrorCodes.ADDRSET_UNKNOWN_OWNER, `owner ${JSON.stringify(owner)} is not live here: ensure() it first`);
    return state;
  }

  #refs(state: OwnerState): SetRefs {
    return { v4: state.names[4], v6: state.names[6] };
  }

  #assertOpen(): void {
    if (this.#closed) throw netnsError(ErrorCodes.ADDRSET_CLOSED, 'this AddressSets has been closed');
  }

  #assertWritable(): void {
    this.#assertOpen();
    if (this.readOnly) throw netnsError(ErrorCodes.ADDRSET_READ_ONLY, 'this AddressSets was opened readOnly: it changes nothing');
  }

  #submitOps(ops: Parameters<AddrsetBackend['apply']>[0]): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#pipeline!.submit({ plan: () => ({ ops, undo: [], outcome: { effect: 'none' } }), landed: () => resolve(), failed: reject });
    });
  }

  #submit(state: OwnerState, request: RequestKind): Promise<PlanOutcome> {
    state.requests++;
    return new Promise((resolve, reject) => {
      const done = () => {
        state.requests--;
        this.#forgetIfIdle(state);
      };
      this.#pipeline!.submit({
        plan: () => planRequest(state, request, { registry: this.#registry, now: this.#clock.now(), deleteDelayMs: this.#deleteDelayMs }),
        landed: (plan) => {
          done();
          this.#afterLanded(state, plan.outcome);
          resolve(plan.outcome);
        },
        failed: (error) => {
          done();
          if (request.kind === 'destroy') resolve(this.#retryDestroy(state, error));
          else reject(nameTaken(error, `set ${state.names[4]} or ${state.names[6]}`));
        },
      });
    });
  }

  #retryDestroy(state: OwnerState, error: unknown): PlanOutcome {
    this.#destroyFailures++;
    state.retryDelayMs = state.retryDelayMs === 0 ? this.#retryIntervalMs : Math.min(state.retryDelayMs * 2, this.#maxRetryIntervalMs);
    this.#scheduleDestroy(state, this.#clock.now() + state.retryDelayMs);
    this.emit('destroyFailed', { owner: state.label, names: this.#refs(state), error: error as Error, retryInMs: state.retryDelayMs });
    return { effect: 'none' };
  }

  #afterLanded(state: OwnerState, outcome: PlanOutcome): void {
    switch (outcome.effect) {
      case 'deferred':
        this.#scheduleDestroy(state, state.deadline!);
        this.emit('deleteDeferred', { owner: state.label, names: this.#refs(state), deadline: state.deadline! });
        return;
      case 'early':
        this.#scheduleDestroy(state, state.deadline!);
        return;
      case 'cancelled':
        this.#clearTimer(state);
        this.emit('deleteCancelled', { owner: state.label, names: this.#refs(state) });
        return;
      case 'destroyed':
        this.#clearTimer(state);
        this.#destroyed++;
        state.retryDelayMs = 0;
        this.#forgetIfIdle(state);
        this.emit('destroyed', { owner: state.label, names: this.#refs(state) });
        return;
      default:
        if (state.status === 'live') this.#clearTimer(state);
    }
  }

  #scheduleDestroy(state: OwnerState, at: number): void {
    this.#clearTimer(state);
    if (this.#closed || this.readOnly) return;
    const generation = state.generation;
    state.cancelTimer = timerAt(this.#clock, at, () => {
      state.cancelTimer = undefined;
      if (!this.#closed) void this.#submit(state, { kind: 'destroy', generation });
    });
  }

  #clearTimer(state: OwnerState): void {
    state.cancelTimer?.();
    state.cancelTimer = undefined;
  }
}

// The old name is the same function, not a wrapper.
AddressSets.prototype.removeTableIfEmpty = AddressSets.prototype.deleteTableIfEmpty;

/**
 * The kernel's EEXIST to a request of ours: only making a set can meet it (the
 * other ops add without "exclusive"), when a set of another type or shape holds
 * the name. That set is someone else's, and is left as it is.
 */
function nameTaken(error: unknown, what: string): unknown {
  if ((error as { code?: unknown } | null)?.code !== 'EEXIST') return error;
  return netnsError(ErrorCodes.ADDRSET_NAME_COLLISION, `${what}: a set of another type or shape holds the name, made by someone else (${(error as Error).message})`, { cause: error });
}

/** The owner's content as the kernel lists it. */
function loadEntries(state: OwnerState, elements: Record<Family, Entry[]>): void {
  for (const family of FAMILIES) state.entries[family] = FamilyEntries.of(elements[family]);
}
