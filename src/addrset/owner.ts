// One owner's sets (one per family) and what this process knows of them, and
// the planning of requests against that model. Planning changes the model at
// once and keeps an undo list, which runs if the kernel transaction fails, so
// the model always matches what the kernel has. Requests are planned in the
// order they were made, when their transaction is about to be sent (see
// pipeline.ts), so a plan always sees every earlier request's effect.
import { ErrorCodes, netnsError } from '../core/errors.js';
import type { Entry, Family } from './addresses.js';
import { addEntries, FamilyEntries } from './entries.js';
import { encodeRecord, setName } from './naming.js';
import type { Op } from './ops.js';

export type OwnerStatus = 'absent' | 'live' | 'pending' | 'orphan';
export const FAMILIES: Family[] = [4, 6];

export class OwnerState {
  /** Null for an adopted owner known only by hash (too long to record). */
  owner: string | null;
  readonly hash: string;
  readonly names: Record<Family, string>;
  status: OwnerStatus = 'absent';
  /** Bumped by every ensure and delete: a destroy planned under an older one is stale. */
  generation = 0;
  inKernel = false;
  deadline: number | undefined;
  entries: Record<Family, FamilyEntries> = { 4: new FamilyEntries(), 6: new FamilyEntries() };
  cancelTimer: (() => void) | undefined = undefined;
  retryDelayMs = 0;
  /** Requests submitted and not yet settled: the state stays indexed while any is. */
  requests = 0;

  constructor(owner: string | null, hash: string, prefix: string) {
    this.owner = owner;
    this.hash = hash;
    this.names = { 4: setName(prefix, 4, hash), 6: setName(prefix, 6, hash) };
  }

  get label(): string {
    return this.owner ?? `sha256:${this.hash}`;
  }

  /** Nothing of it is in the kernel, asked for or scheduled: the process can forget it. */
  get forgettable(): boolean {
    return this.status === 'absent' && !this.inKernel && this.requests === 0 && this.cancelTimer === undefined;
  }
}

export type RequestKind =
  | { kind: 'ensure'; entries: Entry[] | undefined }
  | { kind: 'add'; entries: Entry[] }
  | { kind: 'remove'; entries: Entry[] }
  | { kind: 'replace'; entries: Entry[] }
  | { kind: 'delete' }
  | { kind: 'destroy'; generation: number }
  /** gc: destroy unless live here, named live by the caller, or pending with its deadline ahead. */
  | { kind: 'collect'; liveHashes: ReadonlySet<string> };

export type KeptReason = 'live' | 'live in this process' | 'pending delete';

export type PlanOutcome =
  | { effect: 'none' | 'created' | 'updated' | 'cancelled' | 'deferred' | 'destroyed' | 'stale' | 'early' }
  | { effect: 'kept'; reason: KeptReason };

export interface Plan {
  ops: Op[];
  undo: (() => void)[];
  outcome: PlanOutcome;
}

export interface PlanContext {
  registry: string;
  now: number;
  deleteDelayMs: number;
}

function byFamily(entries: Entry[]): Record<Family, Entry[]> {
  const split: Record<Family, Entry[]> = { 4: [], 6: [] };
  for (const entry of entries) split[entry.family].push(entry);
  return split;
}

function setField<K extends keyof OwnerState>(state: OwnerState, key: K, value: OwnerState[K], undo: (() => void)[]): void {
  const previous = state[key];
  state[key] = value;
  undo.push(() => (state[key] = previous));
}

function recordOps(state: OwnerState, ctx: PlanContext, deadline: number | undefined): Op[] {
  return FAMILIES.map((family) => ({ op: 'putRecord', registry: ctx.registry, key: state.names[family], comment: encodeRecord(state.owner!, deadline) }));
}

/** A live owner, with its sets made again first if they were removed by hand. */
function requireLive(state: OwnerState, ctx: PlanContext, plan: Plan): void {
  if (state.status !== 'live') {
    throw netnsError(ErrorCodes.ADDRSET_UNKNOWN_OWNER, `owner ${JSON.stringify(state.label)} is not live here: ensure() it first`);
  }
  if (!state.inKernel) plan.ops.push(...createOps(state, ctx, plan.undo));
}

function swapEntries(state: OwnerState, family: Family, next: FamilyEntries, undo: (() => void)[]): FamilyEntries {
  const before = state.entries[family];
  state.entries[family] = next;
  undo.push(() => (state.entries[family] = before));
  return before;
}

function addTo(state: OwnerState, entries: Entry[], undo: (() => void)[]): Op[] {
  const split = byFamily(entries);
  const ops: Op[] = [];
  for (const family of FAMILIES) {
    const added = addEntries(state.entries[family], split[family]);
    if (added.length === 0) continue;
    undo.push(() => added.forEach((entry) => state.entries[family].take(entry)));
    ops.push({ op: 'addElements', name: state.names[family], elements: added });
  }
  return ops;
}

// nft 1.0.x deletes elements of an interval set at a cost of the set's size
// for each one (measured: 100 of 64k take 9 s), but flushes and adds at about
// 25 us an element. Past this many deletions, a flush followed by what stays,
// in the same transaction (as atomic), is the cheaper way.
const MAX_DELETIONS = 16;

function shrinkOps(name: string, stale: Entry[], kept: FamilyEntries, fresh: Entry[]): Op[] {
  if (stale.length >= MAX_DELETIONS) {
    return [{ op: 'flushSet', name }, ...(kept.size > 0 ? [{ op: 'addElements', name, elements: kept.entries() } as const] : [])];
  }
  return [
    ...(stale.length > 0 ? [{ op: 'deleteElements', name, elements: stale } as const] : []),
    ...(fresh.length > 0 ? [{ op: 'addElements', name, elements: fresh } as const] : []),
  ];
}

function removeFrom(state: OwnerState, entries: Entry[], undo: (() => void)[]): Op[] {
  const split = byFamily(entries);
  const ops: Op[] = [];
  for (const family of FAMILIES) {
    const taken = split[family].flatMap((entry) => state.entries[family].take(entry) ?? []);
    undo.push(() => taken.forEach((entry) => state.entries[family].add(entry)));
    ops.push(...shrinkOps(state.names[family], taken, state.entries[family], []));
  }
  return ops;
}

/** Sets the content to exactly `entries`, atomically (one transaction), at a cost bounded as shrinkOps says. */
function replaceWith(state: OwnerState, entries: Entry[], undo: (() => void)[]): Op[] {
  const wanted = byFamily(entries);
  const ops: Op[] = [];
  for (const family of FAMILIES) {
    const target = FamilyEntries.of(wanted[family]);
    const before = swapEntries(state, family, target, undo);
    const stale = before.entries().filter((entry) => !target.has(entry));
    const fresh = target.entries().filter((entry) => !before.has(entry));
    ops.push(...shrinkOps(state.names[family], stale, target, fresh));
  }
  return ops;
}

function emptyAll(state: OwnerState, undo: (() => void)[]): void {
  for (const family of FAMILIES) swapEntries(state, family, new FamilyEntries(), undo);
}

/**
 * Makes the owner's sets and records. A live owner whose sets were removed
 * by hand (see pipeline.ts, resync) gets them back with the content it was
 * last given; any other starts empty.
 */
function createOps(state: OwnerState, ctx: PlanContext, undo: (() => void)[]): Op[] {
  const ops: Op[] = FAMILIES.map((family) => ({ op: 'createSet', name: state.names[family], family }));
  ops.push(...recordOps(state, ctx, undefined));
  if (state.status !== 'live') emptyAll(state, undo);
  for (const family of FAMILIES) {
    if (state.entries[family].size > 0) ops.push({ op: 'addElements', name: state.names[family], elements: state.entries[family].entries() });
  }
  setField(state, 'inKernel', true, undo);
  return ops;
}

function planEnsure(state: OwnerState, entries: Entry[] | undefined, ctx: PlanContext, plan: Plan): void {
  const { ops, undo } = plan;
  if (!state.inKernel) {
    ops.push(...createOps(state, ctx, undo));
    plan.outcome = { effect: 'created' };
  } else if (state.status === 'pending') {
    ops.push(...recordOps(state, ctx, undefined));
    plan.outcome = { effect: 'cancelled' };
  }
  setField(state, 'status', 'live', undo);
  setField(state, 'deadline', undefined, undo);
  setField(state, 'generation', state.generation + 1, undo);
  if (entries) ops.push(...replaceWith(state, entries, undo));
}

function planDelete(state: OwnerState, ctx: PlanContext, plan: Plan): void {
  if (state.status !== 'live' && state.status !== 'orphan') return;
  if (!state.inKernel) {
    // A live owner whose sets were removed by hand: nothing is left to empty or destroy.
    emptyAll(state, plan.undo);
    setField(state, 'status', 'absent', plan.undo);
    setField(state, 'generation', state.generation + 1, plan.undo);
    return;
  }
  const deadline = ctx.now + ctx.deleteDelayMs;
  for (const family of FAMILIES) plan.ops.push({ op: 'flushSet', name: state.names[family] });
  plan.ops.push(...recordOps(state, ctx, deadline));
  emptyAll(state, plan.undo);
  setField(state, 'status', 'pending', plan.undo);
  setField(state, 'deadline', deadline, plan.undo);
  setField(state, 'generation', state.generation + 1, plan.undo);
  plan.outcome = { effect: 'deferred' };
}

/** Why a destroy must wait, if it must: the one rule that keeps live sets alive. */
export function keptReason(state: OwnerState, request: RequestKind, now: number): KeptReason | undefined {
  if (state.status === 'live') return 'live in this process';
  if (request.kind === 'collect' && request.liveHashes.has(state.hash)) return 'live';
  if (state.status === 'pending' && state.deadline! > now) return 'pending delete';
  return undefined;
}

function planDestroy(state: OwnerState, request: RequestKind & { kind: 'destroy' | 'collect' }, ctx: PlanContext, plan: Plan): void {
  if (request.kind === 'destroy' && (state.generation !== request.generation || state.status !== 'pending')) {
    plan.outcome = { effect: 'stale' }; // the owner came back (or went) since this destroy was scheduled
    return;
  }
  const kept = keptReason(state, request, ctx.now);
  if (kept !== undefined) {
    plan.outcome = request.kind === 'destroy' ? { effect: 'early' } : { effect: 'kept', reason: kept };
    return;
  }
  if (!state.inKernel) return;
  for (const family of FAMILIES) {
    plan.ops.push({ op: 'deleteSet', name: state.names[family] });
    plan.ops.push({ op: 'deleteRecord', registry: ctx.registry, key: state.names[family] });
  }
  emptyAll(state, plan.undo);
  setField(state, 'inKernel', false, plan.undo);
  setField(state, 'status', 'absent', plan.undo);
  setField(state, 'deadline', undefined, plan.undo);
  plan.outcome = { effect: 'destroyed' };
}

/** Plans one request against the model (changing it; see plan.undo). Throws for bad requests, changing nothing. */
export function planRequest(state: OwnerState, request: RequestKind, ctx: PlanContext): Plan {
  const plan: Plan = { ops: [], undo: [], outcome: { effect: 'none' } };
  try {
    switch (request.kind) {
      case 'ensure':
        planEnsure(state, request.entries, ctx, plan);
        break;
      case 'add':
        requireLive(state, ctx, plan);
        plan.ops.push(...addTo(state, request.entries, plan.undo));
        break;
      case 'remove':
        requireLive(state, ctx, plan);
        plan.ops.push(...removeFrom(state, request.entries, plan.undo));
        break;
      case 'replace':
        requireLive(state, ctx, plan);
        plan.ops.push(...replaceWith(state, request.entries, plan.undo));
        break;
      case 'delete':
        planDelete(state, ctx, plan);
        break;
      case 'destroy':
      case 'collect':
        planDestroy(state, request, ctx, plan);
        break;
    }
  } catch (error) {
    undoPlan(plan);
    throw error;
  }
  if (plan.ops.length > 0 && plan.outcome.effect === 'none') plan.outcome = { effect: 'updated' };
  return plan;
}

export function undoPlan(plan: Plan): void {
  for (const step of plan.undo.reverse()) step();
  plan.undo = [];
}
