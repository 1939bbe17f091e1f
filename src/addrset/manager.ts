// AddressSets: per-owner IP address sets kept as nftables sets inside a
// network namespace, with a race-free lifecycle. Every request for an owner
// goes through that owner's queue (the per-owner lock) and is checked against
// the owner's generation, so a destroy scheduled before the owner came back
// does nothing; requests of many owners in one tick share one transaction.
import { EventEmitter } from 'node:events';
import { ErrorCodes, netnsError } from '../errors.js';
import { NetNS } from '../netns.js';
import { parseEntries, parseKernelText, type Family } from './addresses.js';
import type { AddrsetBackend, KernelView } from './backend.js';
import { Batcher } from './batcher.js';
import { systemClock, type Clock } from './clock.js';
import { AddrsetCodes } from './codes.js';
import { NftBackend } from './nft-backend.js';
import { checkOwner, checkPrefix, decodeRecord, familyOfSetName, ownerHash, registryName, setName, type OwnerRecord } from './naming.js';
import { FAMILIES, OwnerState, planRequest, undoPlan, type OwnerRequest, type PlanOutcome, type RequestKind } from './owner.js';

export interface AddressSetsOptions {
  /** The namespace holding the sets: a NetNS, a name or a path. */
  netns: NetNS | string;
  /** An inet table; created if missing, shared with your own chains, never flushed or deleted. */
  table: string;
  /** How long a deleted owner's (emptied) sets live before they are destroyed. Default 20,000. */
  deleteDelayMs?: number;
  /** First retry after a failed destroy (e.g. EBUSY); doubles up to maxRetryIntervalMs. Default 1,000. */
  retryIntervalMs?: number;
  maxRetryIntervalMs?: number;
  /** Set-name prefix marking the sets this instance owns. Default 'as'. */
  prefix?: string;
  /** Create the table and registry if missing (default). false: only look (e.g. listing). */
  createTable?: boolean;
  /** Replaces nft (tests use MemoryBackend from netns/testing). */
  backend?: AddrsetBackend;
  clock?: Clock;
}

export interface SetRefs {
  v4: string;
  v6: string;
}

export type SetState = 'live' | 'pending' | 'orphan';

export interface SetInfo {
  /** Null when the owner was too long to record (only its hash is kept) or the set is unregistered. */
  owner: string | null;
  family: Family;
  name: string;
  elements: number;
  state: SetState;
  /** For pending: when the set may be destroyed (epoch ms). */
  deadline?: number;
}

export interface OwnerDetails {
  owner: string;
  state: SetState | 'absent';
  deadline?: number;
  v4: { name: string; elements: string[] };
  v6: { name: string; elements: string[] };
}

export interface GcEntry {
  owner: string | null;
  family: Family;
  name: string;
  reason?: string;
  deadline?: number;
}

export interface GcReport {
  dryRun: boolean;
  removed: GcEntry[];
  kept: GcEntry[];
}

export interface AddressSetsStats {
  live: number;
  pending: number;
  orphan: number;
  transactions: number;
  failedTransactions: number;
  destroyed: number;
  destroyFailures: number;
}

export interface AddressSetsEvents {
  deleteDeferred: [{ owner: string; names: SetRefs; deadline: number }];
  deleteCancelled: [{ owner: string; names: SetRefs }];
  destroyed: [{ owner: string; names: SetRefs }];
  destroyFailed: [{ owner: string; names: SetRefs; error: Error; retryInMs: number }];
}

const TABLE = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

interface Leftover {
  owner: string | null;
  family: Family;
  name: string;
  hasSet: boolean;
  hasRecord: boolean;
}

function positive(value: number | undefined, fallback: number, what: string): number {
  const chosen = value ?? fallback;
  if (!Number.isFinite(chosen) || chosen < 0) throw netnsError(AddrsetCodes.INVALID_OPTION, `${what} must be a non-negative number`);
  return chosen;
}

export class AddressSets extends EventEmitter<AddressSetsEvents> {
  readonly table: string;
  readonly prefix: string;
  readonly #registry: string;
  readonly #backend: AddrsetBackend;
  readonly #batcher: Batcher;
  readonly #clock: Clock;
  readonly #deleteDelayMs: number;
  readonly #retryIntervalMs: number;
  readonly #maxRetryIntervalMs: number;
  readonly #ownNs: NetNS | null;
  readonly #byHash = new Map<string, OwnerState>();
  readonly #byName = new Map<string, OwnerState>();
  readonly #drains = new Set<Promise<void>>();
  #closed = false;
  #destroyed = 0;
  #destroyFailures = 0;

  private constructor(options: Required<Pick<AddressSetsOptions, 'table' | 'prefix'>> & AddressSetsOptions, backend: AddrsetBackend, ownNs: NetNS | null) {
    super();
    this.table = options.table;
    this.prefix = options.prefix;
    this.#registry = registryName(options.prefix);
    this.#backend = backend;
    this.#batcher = new Batcher(backend);
    this.#clock = options.clock ?? systemClock;
    this.#deleteDelayMs = positive(options.deleteDelayMs, 20_000, 'deleteDelayMs');
    this.#retryIntervalMs = Math.max(1, positive(options.retryIntervalMs, 1_000, 'retryIntervalMs'));
    this.#maxRetryIntervalMs = Math.max(this.#retryIntervalMs, positive(options.maxRetryIntervalMs, 30_000, 'maxRetryIntervalMs'));
    this.#ownNs = ownNs;
  }

  /** Opens (creating the table if needed) and adopts the sets a previous process left, resuming pending deletes. */
  static async open(options: AddressSetsOptions): Promise<AddressSets> {
    if (typeof options?.table !== 'string' || !TABLE.test(options.table)) {
      throw netnsError(AddrsetCodes.INVALID_OPTION, `table must match ${TABLE}`);
    }
    const prefix = checkPrefix(options.prefix ?? 'as');
    if (!(options.netns instanceof NetNS) && typeof options.netns !== 'string') {
      throw netnsError(ErrorCodes.INVALID_ARG, 'netns must be a NetNS, a name or a path');
    }
    const ownNs = typeof options.netns === 'string' ? NetNS.open(options.netns) : null;
    try {
      const ns = ownNs ?? (options.netns as NetNS);
      const backend = options.backend ?? (await NftBackend.create(ns, { family: 'inet', table: options.table }));
      const sets = new AddressSets({ ...options, prefix }, backend, ownNs);
      await sets.#start(options.createTable ?? true);
      return sets;
    } catch (error) {
      ownNs?.close();
      throw error;
    }
  }

  /** Makes the owner live: creates its sets if needed, cancels a pending delete, and (with addresses) sets the content. */
  async ensure(owner: string, addresses?: string[]): Promise<SetRefs> {
    const entries = addresses === undefined ? undefined : parseEntries(addresses);
    const state = this.#stateFor(checkOwner(owner), true)!;
    await this.#submit(state, { kind: 'ensure', entries });
    return this.#refs(state);
  }

  async add(owner: string, addresses: string[]): Promise<void> {
    await this.#submit(this.#liveState(owner), { kind: 'add', entries: parseEntries(addresses) });
  }

  async remove(owner: string, addresses: string[]): Promise<void> {
    await this.#submit(this.#liveState(owner), { kind: 'remove', entries: parseEntries(addresses) });
  }

  /** Sets the content to exactly these addresses in one transaction: never observed half-filled. */
  async replace(owner: string, addresses: string[]): Promise<void> {
    await this.#submit(this.#liveState(owner), { kind: 'replace', entries: parseEntries(addresses) });
  }

  /** Empties the owner's sets now and destroys them after deleteDelayMs, unless the owner is ensured again first. */
  async delete(owner: string): Promise<void> {
    const state = this.#stateFor(checkOwner(owner), false);
    if (state) await this.#submit(state, { kind: 'delete' });
  }

  /** The kernel's truth about every set this instance's prefix owns. */
  async list(): Promise<SetInfo[]> {
    this.#assertOpen();
    return this.#rows(await this.#backend.read({ elements: true, registry: this.#registry }));
  }

  /** One owner's sets and their elements, as the kernel has them. */
  async inspect(owner: string): Promise<OwnerDetails> {
    checkOwner(owner);
    this.#assertOpen();
    const view = await this.#backend.read({ elements: true, registry: this.#registry });
    const first = this.#rows(view).find((row) => row.owner === owner);
    const hash = ownerHash(owner);
    const names = { v4: setName(this.prefix, 4, hash), v6: setName(this.prefix, 6, hash) };
    return {
      owner,
      state: first?.state ?? 'absent',
      ...(first?.deadline === undefined ? {} : { deadline: first.deadline }),
      v4: { name: names.v4, elements: view.sets.get(names.v4)?.elements ?? [] },
      v6: { name: names.v6, elements: view.sets.get(names.v6)?.elements ?? [] },
    };
  }

  #rows(view: KernelView): SetInfo[] {
    const rows: SetInfo[] = [];
    for (const { record, family, name } of this.#records(view)) {
      const state = this.#byHash.get(record.ownerHash);
      const deadline = state?.status === 'pending' ? state.deadline : record.deadline;
      rows.push({
        owner: record.owner ?? state?.owner ?? null,
        family,
        name,
        elements: view.sets.get(name)?.elements?.length ?? 0,
        state: state?.status === 'live' ? 'live' : deadline !== undefined ? 'pending' : 'orphan',
        ...(deadline === undefined ? {} : { deadline }),
      });
    }
    for (const leftover of this.#leftovers(view)) {
      rows.push({ owner: leftover.owner, family: leftover.family, name: leftover.name, elements: view.sets.get(leftover.name)?.elements?.length ?? 0, state: 'orphan' });
    }
    return rows.sort((a, b) => a.name.localeCompare(b.name));
  }

  /**
   * Removes owned sets whose owner is not in `live`, is not live in this
   * process, and has no pending deadline ahead; also sets of ours left
   * half-made. Reports what it removed and what it kept, and why.
   */
  async gc({ live = [], dryRun = false }: { live?: Iterable<string>; dryRun?: boolean } = {}): Promise<GcReport> {
    this.#assertOpen();
    const liveHashes = new Set([...live].map((owner) => ownerHash(checkOwner(owner))));
    let view = await this.#backend.read({ elements: false, registry: this.#registry });
    if (this.#records(view).some(({ record }) => !this.#byHash.has(record.ownerHash))) {
      view = await this.#backend.read({ elements: true, registry: this.#registry });
      this.#adopt(view); // another process made these since we opened
    }
    const report: GcReport = { dryRun, removed: [], kept: [] };
    const now = this.#clock.now();
    const collecting: Promise<void>[] = [];
    for (const state of new Set(this.#records(view).map(({ record }) => this.#byHash.get(record.ownerHash)!))) {
      const entries = FAMILIES.map((family) => ({ owner: state.owner, family, name: state.names[family] }));
      const keep = (reason: string, extra: Partial<GcEntry> = {}) => entries.forEach((e) => report.kept.push({ ...e, reason, ...extra }));
      if (liveHashes.has(state.hash)) keep('live');
      else if (state.status === 'live') keep('live in this process');
      else if (state.deadline !== undefined && state.deadline > now) keep('pending delete', { deadline: state.deadline });
      else if (dryRun) report.removed.push(...entries);
      else collecting.push(this.#collect(state, entries, report));
    }
    for (const leftover of this.#leftovers(view)) {
      const entry = { owner: leftover.owner, family: leftover.family, name: leftover.name };
      if (dryRun) report.removed.push(entry);
      else collecting.push(this.#removeLeftover(leftover, entry, report));
    }
    await Promise.all(collecting);
    return report;
  }

  /** Resolves once no request is queued or in flight (timers that have not fired do not count). */
  async settled(): Promise<void> {
    while (this.#drains.size > 0) {
      await Promise.allSettled([...this.#drains]);
      await this.#batcher.idle();
    }
    await this.#batcher.idle();
  }

  stats(): AddressSetsStats {
    const count = (status: string) => [...this.#byHash.values()].filter((state) => state.status === status).length;
    return {
      live: count('live'),
      pending: count('pending'),
      orphan: count('orphan'),
      transactions: this.#batcher.transactions,
      failedTransactions: this.#batcher.failedTransactions,
      destroyed: this.#destroyed,
      destroyFailures: this.#destroyFailures,
    };
  }

  /** Stops timers and waits for work in flight. Pending deadlines stay recorded in the kernel. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const state of this.#byHash.values()) this.#clearTimer(state);
    await Promise.allSettled([...this.#drains]);
    await this.#batcher.idle();
    this.#ownNs?.close();
  }

  async #start(createTable: boolean): Promise<void> {
    if (createTable) await this.#batcher.submit([{ op: 'addTable' }, { op: 'addRegistry', name: this.#registry }]);
    this.#adopt(await this.#backend.read({ elements: true, registry: this.#registry }));
  }

  #records(view: KernelView): { record: OwnerRecord; family: Family; name: string }[] {
    const found: { record: OwnerRecord; family: Family; name: string }[] = [];
    for (const [name, comment] of view.records) {
      const family = familyOfSetName(this.prefix, name);
      const record = decodeRecord(comment);
      if (family === undefined || !record || !view.sets.has(name)) continue;
      found.push({ record, family, name });
    }
    return found;
  }

  /** Sets of ours without a record, or records without a set: debris of interrupted work. */
  #leftovers(view: KernelView): Leftover[] {
    const recorded = new Set(this.#records(view).map((r) => r.name));
    const names = new Set([...view.sets.keys(), ...view.records.keys()]);
    const leftovers: Leftover[] = [];
    for (const name of names) {
      const family = familyOfSetName(this.prefix, name);
      if (family === undefined || recorded.has(name)) continue;
      const hasRecord = view.records.has(name);
      const record = hasRecord ? decodeRecord(view.records.get(name)) : undefined;
      if (hasRecord && !record) continue; // a record we cannot read is not ours to judge
      leftovers.push({ owner: record?.owner ?? null, family, name, hasSet: view.sets.has(name), hasRecord });
    }
    return leftovers;
  }

  // Takes in what the kernel holds that this process does not know yet.
  #adopt(view: KernelView): void {
    for (const { record, family, name } of this.#records(view)) {
      let state = this.#byHash.get(record.ownerHash);
      if (state && state.status !== 'absent') continue;
      if (!state) {
        state = new OwnerState(record.owner, record.ownerHash, this.prefix);
        this.#index(state);
      }
      if (state.names[family] !== name) continue;
      state.inKernel = FAMILIES.every((f) => view.records.has(state.names[f]) && view.sets.has(state.names[f]));
      if (!state.inKernel) continue;
      for (const f of FAMILIES) {
        for (const text of view.sets.get(state.names[f])?.elements ?? []) {
          const entry = parseKernelText(text);
          if (entry) state.entries[f].add(entry);
        }
      }
      state.status = record.deadline === undefined ? 'orphan' : 'pending';
      state.deadline = record.deadline;
      if (state.status === 'pending') this.#scheduleDestroy(state, Math.max(0, record.deadline! - this.#clock.now()));
    }
  }

  #index(state: OwnerState): void {
    this.#byHash.set(state.hash, state);
    this.#byName.set(state.names[4], state);
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
      throw netnsError(AddrsetCodes.NAME_COLLISION, `owners ${JSON.stringify(owner)} and ${JSON.stringify(holder.label)} hash to the same set names (${state.names[4]})`);
    }
    this.#index(state);
    return state;
  }

  #liveState(owner: string): OwnerState {
    const state = this.#stateFor(checkOwner(owner), false);
    if (!state) throw netnsError(AddrsetCodes.UNKNOWN_OWNER, `owner ${JSON.stringify(owner)} is not live here: ensure() it first`);
    return state;
  }

  #refs(state: OwnerState): SetRefs {
    return { v4: state.names[4], v6: state.names[6] };
  }

  #assertOpen(): void {
    if (this.#closed) throw netnsError(AddrsetCodes.CLOSED, 'this AddressSets has been closed');
  }

  #submit(state: OwnerState, request: RequestKind): Promise<PlanOutcome> {
    return new Promise((resolve, reject) => {
      state.queue.push({ ...request, resolve, reject } as OwnerRequest);
      if (state.draining) return;
      state.draining = true;
      const drain = this.#drain(state);
      this.#drains.add(drain);
      void drain.finally(() => this.#drains.delete(drain));
    });
  }

  async #drain(state: OwnerState): Promise<void> {
    await Promise.resolve(); // let callers of this tick queue up first
    try {
      while (state.queue.length > 0) await this.#runGroup(state, state.queue.splice(0));
    } finally {
      state.draining = false;
    }
  }

  async #runGroup(state: OwnerState, requests: OwnerRequest[]): Promise<void> {
    const ctx = { registry: this.#registry, now: this.#clock.now(), deleteDelayMs: this.#deleteDelayMs };
    const planned = requests.flatMap((request) => {
      try {
        return [{ request, plan: planRequest(state, request, ctx) }];
      } catch (error) {
        request.reject(error);
        return [];
      }
    });
    try {
      await this.#batcher.submit(planned.flatMap(({ plan }) => plan.ops));
    } catch (error) {
      for (const { plan } of [...planned].reverse()) undoPlan(plan);
      if (planned.length === 1) this.#fail(state, planned[0]!.request, error);
      else for (const { request } of planned) await this.#runGroup(state, [request]);
      return;
    }
    for (const { request, plan } of planned) {
      this.#afterCommit(state, plan.outcome);
      request.resolve(plan.outcome);
    }
  }

  #fail(state: OwnerState, request: OwnerRequest, error: unknown): void {
    if (request.kind !== 'destroy') {
      request.reject(error);
      return;
    }
    this.#destroyFailures++;
    state.retryDelayMs = state.retryDelayMs === 0 ? this.#retryIntervalMs : Math.min(state.retryDelayMs * 2, this.#maxRetryIntervalMs);
    this.#scheduleDestroy(state, state.retryDelayMs);
    this.emit('destroyFailed', { owner: state.label, names: this.#refs(state), error: error as Error, retryInMs: state.retryDelayMs });
    request.resolve({ effect: 'none' });
  }

  #afterCommit(state: OwnerState, outcome: PlanOutcome): void {
    switch (outcome.effect) {
      case 'deferred':
        this.#scheduleDestroy(state, this.#deleteDelayMs);
        this.emit('deleteDeferred', { owner: state.label, names: this.#refs(state), deadline: state.deadline! });
        return;
      case 'cancelled':
        this.#clearTimer(state);
        this.emit('deleteCancelled', { owner: state.label, names: this.#refs(state) });
        return;
      case 'destroyed':
        this.#clearTimer(state);
        this.#destroyed++;
        state.retryDelayMs = 0;
        this.emit('destroyed', { owner: state.label, names: this.#refs(state) });
        if (state.queue.length === 0) {
          this.#byHash.delete(state.hash);
          this.#byName.delete(state.names[4]);
        }
        return;
      default:
        if (state.status === 'live') this.#clearTimer(state);
    }
  }

  #scheduleDestroy(state: OwnerState, delayMs: number): void {
    this.#clearTimer(state);
    if (this.#closed) return;
    const generation = state.generation;
    state.timer = this.#clock.setTimeout(() => {
      state.timer = undefined;
      if (!this.#closed) void this.#submit(state, { kind: 'destroy', generation });
    }, delayMs);
  }

  #clearTimer(state: OwnerState): void {
    if (state.timer === undefined) return;
    this.#clock.clearTimeout(state.timer);
    state.timer = undefined;
  }

  async #collect(state: OwnerState, entries: GcEntry[], report: GcReport): Promise<void> {
    try {
      const outcome = await this.#submit(state, { kind: 'collect' });
      if (outcome.effect === 'kept-live') entries.forEach((e) => report.kept.push({ ...e, reason: 'live in this process' }));
      else report.removed.push(...entries);
    } catch (error) {
      entries.forEach((e) => report.kept.push({ ...e, reason: `destroy failed: ${(error as Error).message}` }));
    }
  }

  async #removeLeftover(leftover: Leftover, entry: GcEntry, report: GcReport): Promise<void> {
    const ops = [
      ...(leftover.hasSet ? [{ op: 'deleteSet', name: leftover.name } as const] : []),
      ...(leftover.hasRecord ? [{ op: 'deleteRecord', registry: this.#registry, key: leftover.name } as const] : []),
    ];
    try {
      await this.#batcher.submit(ops);
      report.removed.push(entry);
    } catch (error) {
      report.kept.push({ ...entry, reason: `destroy failed: ${(error as Error).message}` });
    }
  }
}
