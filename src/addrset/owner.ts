// One owner's sets (one per family) and what this process knows of them. The
// owner's requests are planned one group at a time: planning changes the model
// at once and keeps an undo list, which runs if the kernel transaction fails,
// so the model always matches what the kernel has. Only one group per owner
// is ever in flight, so nothing observes a plan that is later undone except
// status reads, which err on the side of "live".
import { netnsError } from '../errors.js';
import type { Entry, Family } from './addresses.js';
import { AddrsetCodes } from './codes.js';
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
  readonly entries: Record<Family, FamilyEntries> = { 4: new FamilyEntries(), 6: new FamilyEntries() };
  timer: unknown = undefined;
  retryDelayMs = 0;
  /** Requests waiting for this owner's turn, and whether a group is in flight. */
  readonly queue: OwnerRequest[] = [];
  draining = false;

  constructor(owner: string | null, hash: string, prefix: string) {
    this.owner = owner;
    this.hash = hash;
    this.names = { 4: setName(prefix, 4, hash), 6: setName(prefix, 6, hash) };
  }

  get label(): string {
    return this.owner ?? `sha256:${this.hash}`;
  }
}

export type RequestKind =
  | { kind: 'ensure'; entries: Entry[] | undefined }
  | { kind: 'add'; entries: Entry[] }
  | { kind: 'remove'; entries: Entry[] }
  | { kind: 'replace'; entries: Entry[] }
  | { kind: 'delete' }
  | { kind: 'destroy'; generation: number }
  | { kind: 'collect' };

export type OwnerRequest = RequestKind & {
  resolve(value: PlanOutcome): void;
  reject(error: unknown): void;
};

export interface PlanOutcome {
  /** What happened, for events and reports. */
  effect: 'none' | 'created' | 'updated' | 'cancelled' | 'deferred' | 'destroyed' | 'stale' | 'kept-live';
}

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

function recordOps(state: OwnerState, ctx: PlanContext, deadline: number | undefined, replace: boolean): Op[] {
  return FAMILIES.flatMap((family): Op[] => [
    ...(replace ? [{ op: 'deleteRecord', registry: ctx.registry, key: state.names[family] } as const] : []),
    { op: 'addRecord', registry: ctx.registry, key: state.names[family], comment: encodeRecord(state.owner!, deadline) },
  ]);
}

function requireLive(state: OwnerState): void {
  if (state.status !== 'live') {
    throw netnsError(AddrsetCodes.UNKNOWN_OWNER, `owner ${JSON.stringify(state.label)} is not live here: ensure() it first`);
  }
}

function addTo(state: OwnerState, entries: Entry[], undo: (() => void)[]): Op[] {
  const split = byFamily(entries);
  const ops: Op[] = [];
  for (const family of FAMILIES) {
    const added = addEntries(state.entries[family], split[family]);
    if (added.length === 0) continue;
    undo.push(() => added.forEach((text) => state.entries[family].delete(text)));
    ops.push({ op: 'addElements', name: state.names[family], elements: added });
  }
  return ops;
}

function removeFrom(state: OwnerState, texts: Record<Family, string[]>, undo: (() => void)[]): Op[] {
  const ops: Op[] = [];
  for (const family of FAMILIES) {
    const taken = texts[family].flatMap((text) => state.entries[family].take(text, family) ?? []);
    if (taken.length === 0) continue;
    undo.push(() => taken.forEach((entry) => state.entries[family].add(entry)));
    ops.push({ op: 'deleteElements', name: state.names[family], elements: taken.map((entry) => entry.text) });
  }
  return ops;
}

function replaceWith(state: OwnerState, entries: Entry[], undo: (() => void)[]): Op[] {
  const wanted = byFamily(entries);
  const ops: Op[] = [];
  for (const family of FAMILIES) {
    const target = new FamilyEntries();
    addEntries(target, wanted[family]);
    const stale = state.entries[family].texts().filter((text) => !target.has(text));
    const fresh = target.texts().filter((text) => !state.entries[family].has(text));
    const before = state.entries[family];
    state.entries[family] = target;
    undo.push(() => (state.entries[family] = before));
    if (stale.length > 0) ops.push({ op: 'deleteElements', name: state.names[family], elements: stale });
    if (fresh.length > 0) ops.push({ op: 'addElements', name: state.names[family], elements: fresh });
  }
  return ops;
}

function emptyAll(state: OwnerState, undo: (() => void)[]): void {
  for (const family of FAMILIES) {
    const before = state.entries[family];
    state.entries[family] = new FamilyEntries();
    undo.push(() => (state.entries[family] = before));
  }
}

function planEnsure(state: OwnerState, entries: Entry[] | undefined, ctx: PlanContext, plan: Plan): void {
  const { ops, undo } = plan;
  const wasPending = state.status === 'pending';
  if (!state.inKernel) {
    for (const family of FAMILIES) ops.push({ op: 'addSet', name: state.names[family], family });
    ops.push(...recordOps(state, ctx, undefined, false));
    setField(state, 'inKernel', true, undo);
    plan.outcome.effect = 'created';
  } else if (wasPending) {
    ops.push(...recordOps(state, ctx, undefined, true));
    plan.outcome.effect = 'cancelled';
  }
  setField(state, 'status', 'live', undo);
  setField(state, 'deadline', undefined, undo);
  setField(state, 'generation', state.generation + 1, undo);
  if (entries) ops.push(...replaceWith(state, entries, undo));
}

function planDelete(state: OwnerState, ctx: PlanContext, plan: Plan): void {
  if (state.status === 'absent' || state.status === 'pending' || !state.inKernel) return;
  const deadline = ctx.now + ctx.deleteDelayMs;
  for (const family of FAMILIES) plan.ops.push({ op: 'flushSet', name: state.names[family] });
  plan.ops.push(...recordOps(state, ctx, deadline, true));
  emptyAll(state, plan.undo);
  setField(state, 'status', 'pending', plan.undo);
  setField(state, 'deadline', deadline, plan.undo);
  setField(state, 'generation', state.generation + 1, plan.undo);
  plan.outcome.effect = 'deferred';
}

function planDestroy(state: OwnerState, ctx: PlanContext, plan: Plan, generation: number | undefined): void {
  if (generation !== undefined && (state.generation !== generation || state.status !== 'pending')) {
    plan.outcome.effect = 'stale'; // the owner came back (or went) since this destroy was scheduled
    return;
  }
  if (generation === undefined && state.status === 'live') {
    plan.outcome.effect = 'kept-live';
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
  plan.outcome.effect = 'destroyed';
}

/** Plans one request against the model (changing it; see plan.undo). Throws for bad requests. */
export function planRequest(state: OwnerState, request: RequestKind, ctx: PlanContext): Plan {
  const plan: Plan = { ops: [], undo: [], outcome: { effect: 'none' } };
  try {
    switch (request.kind) {
      case 'ensure':
        planEnsure(state, request.entries, ctx, plan);
        break;
      case 'add':
        requireLive(state);
        plan.ops.push(...addTo(state, request.entries, plan.undo));
        break;
      case 'remove': {
        requireLive(state);
        const split = byFamily(request.entries);
        plan.ops.push(...removeFrom(state, { 4: split[4].map((e) => e.text), 6: split[6].map((e) => e.text) }, plan.undo));
        break;
      }
      case 'replace':
        requireLive(state);
        plan.ops.push(...replaceWith(state, request.entries, plan.undo));
        break;
      case 'delete':
        planDelete(state, ctx, plan);
        break;
      case 'destroy':
        planDestroy(state, ctx, plan, request.generation);
        break;
      case 'collect':
        planDestroy(state, ctx, plan, undefined);
        break;
    }
  } catch (error) {
    undoPlan(plan);
    throw error;
  }
  if (plan.ops.length > 0 && plan.outcome.effect === 'none') plan.outcome.effect = 'updated';
  return plan;
}

export function undoPlan(plan: Plan): void {
  for (const step of plan.undo.reverse()) step();
  plan.undo = [];
}
