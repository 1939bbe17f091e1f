// One owner's model and the planning of each request against it: the ops a
// transaction carries, the outcome the manager acts on (events, timers), and
// the undo that puts the model back when the kernel refuses. Pure and
// deterministic: the state machine alone, on hand-made states.
import { describe, expect, it } from 'vitest';
import { parseEntries } from '../../dist/addrset/addresses.js';
import { FamilyEntries } from '../../dist/addrset/entries.js';
import { encodeRecord, ownerHash } from '../../dist/addrset/naming.js';
import { keptReason, OwnerState, planRequest, undoPlan, type Plan } from '../../dist/addrset/owner.js';

const ctx = { registry: 'as_owners', now: 1_000, deleteDelayMs: 500 };
const OWNER = 'ns/pod';

/** A state as the manager would hold it: status, in the kernel or not, with these addresses. */
function state(status: OwnerState['status'], inKernel: boolean, addresses: string[] = []): OwnerState {
  const s = new OwnerState(OWNER, ownerHash(OWNER), 'as');
  s.status = status;
  s.inKernel = inKernel;
  for (const entry of parseEntries(addresses)) s.entries[entry.family].add(entry);
  return s;
}

const texts = (s: OwnerState) => ({ 4: s.entries[4].entries().map((e) => e.text), 6: s.entries[6].entries().map((e) => e.text) });
/** Ops with their elements as text. */
const ops = (plan: Plan) => plan.ops.map((op) => ('elements' in op ? { ...op, elements: op.elements.map((e) => e.text) } : op));
const snapshot = (s: OwnerState) => ({ status: s.status, inKernel: s.inKernel, generation: s.generation, deadline: s.deadline, entries: texts(s) });
const [v4, v6] = [new OwnerState(OWNER, ownerHash(OWNER), 'as').names[4], new OwnerState(OWNER, ownerHash(OWNER), 'as').names[6]];
const records = (deadline?: number) => [v4, v6].map((key) => ({ op: 'putRecord', registry: 'as_owners', key, comment: encodeRecord(OWNER, deadline) }));

describe('an owner state', () => {
  it('is forgettable only when absent, out of the kernel, with no request or timer', () => {
    expect(state('absent', false).forgettable).toBe(true);
    expect(state('orphan', false).forgettable).toBe(false);
    expect(state('absent', true).forgettable).toBe(false);
    const asked = state('absent', false);
    asked.requests = 1;
    expect(asked.forgettable).toBe(false);
    const timed = state('absent', false);
    timed.cancelTimer = () => {};
    expect(timed.forgettable).toBe(false);
  });

  it('is labelled by its owner, or by its hash when only that is known', () => {
    expect(state('live', true).label).toBe(OWNER);
    expect(new OwnerState(null, ownerHash(OWNER), 'as').label).toBe(`sha256:${ownerHash(OWNER)}`);
  });
});

describe('planning', () => {
  it('an add to an owner not live here is ERR_NETNS_ADDRSET_UNKNOWN_OWNER, naming it, and changes nothing', () => {
    const s = state('orphan', true, ['10.0.0.1']);
    expect(() => planRequest(s, { kind: 'add', entries: parseEntries(['10.0.0.2']) }, ctx)).toThrow(
      expect.objectContaining({ code: 'ERR_NETNS_ADDRSET_UNKNOWN_OWNER', message: `owner "${OWNER}" is not live here: ensure() it first` }),
    );
    expect(texts(s)).toEqual({ 4: ['10.0.0.1'], 6: [] });
  });

  it('adds and removes only in the family concerned, and a no-op is outcome none', () => {
    const s = state('live', true, ['10.0.0.1', 'fd00::1']);
    const added = planRequest(s, { kind: 'add', entries: parseEntries(['10.0.0.2']) }, ctx);
    expect(ops(added)).toEqual([{ op: 'addElements', name: v4, elements: ['10.0.0.2'] }]);
    expect(added.outcome).toEqual({ effect: 'updated' });
    const removed = planRequest(s, { kind: 'remove', entries: parseEntries(['fd00::1']) }, ctx);
    expect(ops(removed)).toEqual([{ op: 'deleteElements', name: v6, elements: ['fd00::1'] }]);
    const nothing = planRequest(s, { kind: 'remove', entries: parseEntries(['10.9.9.9']) }, ctx);
    expect(nothing).toMatchObject({ ops: [], outcome: { effect: 'none' } });
  });

  it('removes up to 15 elements one by one, and from 16 flushes and adds back what stays (nothing when nothing does)', () => {
    const many = Array.from({ length: 17 }, (_, i) => `10.0.1.${i + 1}`);
    const fifteen = planRequest(state('live', true, many), { kind: 'remove', entries: parseEntries(many.slice(0, 15)) }, ctx);
    expect(ops(fifteen)).toEqual([{ op: 'deleteElements', name: v4, elements: many.slice(0, 15) }]);
    const sixteen = planRequest(state('live', true, many), { kind: 'remove', entries: parseEntries(many.slice(0, 16)) }, ctx);
    expect(ops(sixteen)).toEqual([{ op: 'flushSet', name: v4 }, { op: 'addElements', name: v4, elements: [many[16]] }]);
    const all = planRequest(state('live', true, many.slice(0, 16)), { kind: 'remove', entries: parseEntries(many.slice(0, 16)) }, ctx);
    expect(ops(all)).toEqual([{ op: 'flushSet', name: v4 }]);
  });

  it('a replace sends only what changes', () => {
    const s = state('live', true, ['10.0.0.1', '10.0.0.2']);
    const plan = planRequest(s, { kind: 'replace', entries: parseEntries(['10.0.0.2', '10.0.0.3']) }, ctx);
    expect(ops(plan)).toEqual([
      { op: 'deleteElements', name: v4, elements: ['10.0.0.1'] },
      { op: 'addElements', name: v4, elements: ['10.0.0.3'] },
    ]);
  });

  it('an ensure of an owner not in the kernel creates both sets and records; an orphan starts empty, a live owner gets its addresses back', () => {
    const orphan = state('orphan', false, ['10.0.0.1']);
    const created = planRequest(orphan, { kind: 'ensure', entries: undefined }, ctx);
    expect(ops(created)).toEqual([{ op: 'createSet', name: v4, family: 4 }, { op: 'createSet', name: v6, family: 6 }, ...records()]);
    expect(created.outcome).toEqual({ effect: 'created' });
    expect(snapshot(orphan)).toEqual({ status: 'live', inKernel: true, generation: 1, deadline: undefined, entries: { 4: [], 6: [] } });

    const removedByHand = state('live', false, ['10.0.0.1']);
    expect(ops(planRequest(removedByHand, { kind: 'add', entries: parseEntries(['10.0.0.2']) }, ctx))).toEqual([
      { op: 'createSet', name: v4, family: 4 },
      { op: 'createSet', name: v6, family: 6 },
      ...records(),
      { op: 'addElements', name: v4, elements: ['10.0.0.1'] },
      { op: 'addElements', name: v4, elements: ['10.0.0.2'] },
    ]);
  });

  it('an ensure cancels a pending delete (records without a deadline), and of a live owner in the kernel sends nothing', () => {
    const pending = state('pending', true);
    pending.deadline = 1_500;
    const cancelled = planRequest(pending, { kind: 'ensure', entries: undefined }, ctx);
    expect(ops(cancelled)).toEqual(records());
    expect(cancelled.outcome).toEqual({ effect: 'cancelled' });
    expect(snapshot(pending)).toMatchObject({ status: 'live', deadline: undefined, generation: 1 });

    const live = state('live', true, ['10.0.0.1']);
    expect(planRequest(live, { kind: 'ensure', entries: undefined }, ctx)).toMatchObject({ ops: [], outcome: { effect: 'none' } });
    expect(live.generation).toBe(1);
  });

  it('a delete empties the sets now and records the deadline; of an owner whose sets are gone, it only forgets it', () => {
    const live = state('live', true, ['10.0.0.1']);
    const deferred = planRequest(live, { kind: 'delete' }, ctx);
    expect(ops(deferred)).toEqual([{ op: 'flushSet', name: v4 }, { op: 'flushSet', name: v6 }, ...records(1_500)]);
    expect(deferred.outcome).toEqual({ effect: 'deferred' });
    expect(snapshot(live)).toEqual({ status: 'pending', inKernel: true, generation: 1, deadline: 1_500, entries: { 4: [], 6: [] } });

    const gone = state('live', false, ['10.0.0.1']);
    const forgotten = planRequest(gone, { kind: 'delete' }, ctx);
    expect(forgotten).toMatchObject({ ops: [], outcome: { effect: 'none' } });
    expect(snapshot(gone)).toEqual({ status: 'absent', inKernel: false, generation: 1, deadline: undefined, entries: { 4: [], 6: [] } });
  });

  it('a scheduled destroy is stale once the owner came back or went, early before its deadline, and destroys after', () => {
    const pending = () => {
      const s = state('pending', true);
      s.generation = 3;
      s.deadline = 1_500;
      return s;
    };
    expect(planRequest(pending(), { kind: 'destroy', generation: 2 }, ctx)).toMatchObject({ ops: [], outcome: { effect: 'stale' } });
    const cameBack = pending();
    cameBack.status = 'live';
    expect(planRequest(cameBack, { kind: 'destroy', generation: 3 }, ctx)).toMatchObject({ ops: [], outcome: { effect: 'stale' } });
    expect(planRequest(pending(), { kind: 'destroy', generation: 3 }, ctx)).toMatchObject({ ops: [], outcome: { effect: 'early' } });
    const due = pending();
    const destroyed = planRequest(due, { kind: 'destroy', generation: 3 }, { ...ctx, now: 1_500 });
    expect(ops(destroyed)).toEqual([
      { op: 'deleteSet', name: v4 },
      { op: 'deleteRecord', registry: 'as_owners', key: v4 },
      { op: 'deleteSet', name: v6 },
      { op: 'deleteRecord', registry: 'as_owners', key: v6 },
    ]);
    expect(destroyed.outcome).toEqual({ effect: 'destroyed' });
    expect(snapshot(due)).toEqual({ status: 'absent', inKernel: false, generation: 3, deadline: undefined, entries: { 4: [], 6: [] } });
  });

  it("gc's collect keeps with a reason, and sends nothing for an owner no longer in the kernel", () => {
    const live = new Set<string>([ownerHash(OWNER)]);
    expect(planRequest(state('live', true), { kind: 'collect', liveHashes: new Set() }, ctx).outcome).toEqual({ effect: 'kept', reason: 'live in this process' });
    expect(planRequest(state('orphan', true), { kind: 'collect', liveHashes: live }, ctx).outcome).toEqual({ effect: 'kept', reason: 'live' });
    expect(planRequest(state('orphan', false), { kind: 'collect', liveHashes: new Set() }, ctx)).toMatchObject({ ops: [], outcome: { effect: 'none' } });
    const orphan = state('orphan', true);
    orphan.deadline = 5_000; // an orphan's recorded deadline does not keep it: only a pending delete's does
    expect(keptReason(orphan, { kind: 'collect', liveHashes: new Set() }, 1_000)).toBeUndefined();
  });
});

describe('undoing a plan', () => {
  it('puts the model back exactly, undoing in reverse (an ensure that empties an orphan and then fills it)', () => {
    const s = state('orphan', false, ['10.0.0.1']);
    s.deadline = 7;
    const before = snapshot(s);
    const plan = planRequest(s, { kind: 'ensure', entries: parseEntries(['10.0.0.2', 'fd00::2']) }, ctx);
    expect(snapshot(s)).not.toEqual(before);
    undoPlan(plan);
    expect(snapshot(s)).toEqual(before);
    expect(plan.undo).toEqual([]);
  });

  it('of a remove and an add gives back what was taken and takes back what was added', () => {
    const s = state('live', true, ['10.0.0.1', 'fd00::1']);
    undoPlan(planRequest(s, { kind: 'remove', entries: parseEntries(['10.0.0.1', 'fd00::1']) }, ctx));
    undoPlan(planRequest(s, { kind: 'add', entries: parseEntries(['10.0.0.2', 'fd00::2']) }, ctx));
    expect(texts(s)).toEqual({ 4: ['10.0.0.1'], 6: ['fd00::1'] });
  });

  it('a fresh state has an empty set of entries for each family', () => {
    const fresh = new OwnerState(OWNER, ownerHash(OWNER), 'as');
    expect(fresh.status).toBe('absent');
    expect(fresh.entries[4]).toBeInstanceOf(FamilyEntries);
    expect(fresh.entries[6].size).toBe(0);
  });
});
