// Garbage collection of owned sets. What exists is judged from one view read
// between transactions (so it matches the model exactly); what is removed is
// decided again when each removal is planned, in its turn on the road to the
// kernel, so that an owner made live in the meantime is never touched.
import type { KernelView } from './backend.js';
import { ownerHash } from './naming.js';
import type { Op } from './ops.js';
import { FAMILIES, keptReason, type OwnerState, type PlanOutcome } from './owner.js';
import type { Job } from './pipeline.js';
import { reconcile, type Leftover, type Reconciled } from './reconcile.js';
import type { GcEntry, GcReport } from './types.js';

/** What gc needs of the manager. */
export interface GcHost {
  readonly prefix: string;
  readonly registry: string;
  now(): number;
  read(elements: boolean): Promise<KernelView>;
  /** Runs `work` between transactions (see Pipeline.exclusive). */
  exclusive<T>(work: () => Promise<T>): Promise<T>;
  submitJob(job: Job): void;
  submitCollect(state: OwnerState, liveHashes: ReadonlySet<string>): Promise<PlanOutcome>;
  /** The state of an owner this process knows to be in the kernel. */
  known(hash: string): OwnerState | undefined;
  /** Takes in recorded owners this process does not know yet. */
  adopt(found: Reconciled): void;
  /** Whether an owner of this process holds or is about to create a set of that name. */
  claimed(name: string): boolean;
}

function entriesOf(state: OwnerState): GcEntry[] {
  return FAMILIES.map((family) => ({ owner: state.owner, family, name: state.names[family] }));
}

// One view that matches the model; records this process does not know (made
// by hand, or by an older writer) are adopted first, with their elements.
async function survey(host: GcHost): Promise<{ states: OwnerState[]; leftovers: Leftover[] }> {
  return host.exclusive(async () => {
    let found = reconcile(await host.read(false), host.prefix);
    if (found.owners.some(({ record }) => !host.known(record.ownerHash))) {
      found = reconcile(await host.read(true), host.prefix);
      host.adopt(found);
    }
    const states = found.owners.map(({ record }) => host.known(record.ownerHash)!); // adopt() took in every one it did not know
    return { states, leftovers: found.leftovers };
  });
}

function dryRun(host: GcHost, states: OwnerState[], leftovers: Leftover[], liveHashes: ReadonlySet<string>): GcReport {
  const report: GcReport = { dryRun: true, removed: [], kept: [] };
  const now = host.now();
  for (const state of states) {
    const reason = keptReason(state, { kind: 'collect', liveHashes }, now);
    if (reason === undefined) report.removed.push(...entriesOf(state));
    else report.kept.push(...entriesOf(state).map((entry) => withReason(entry, reason, state)));
  }
  for (const leftover of leftovers) {
    if (host.claimed(leftover.name)) report.kept.push({ ...leftoverEntry(leftover), reason: 'live in this process' });
    else report.removed.push(leftoverEntry(leftover));
  }
  return report;
}

function withReason(entry: GcEntry, reason: string, state: OwnerState): GcEntry {
  return { ...entry, reason, ...(reason === 'pending delete' ? { deadline: state.deadline } : {}) };
}

function leftoverEntry(leftover: Leftover): GcEntry {
  return { owner: leftover.owner, family: leftover.family, name: leftover.name };
}

async function collectOwner(host: GcHost, state: OwnerState, liveHashes: ReadonlySet<string>, report: GcReport): Promise<void> {
  try {
    const outcome = await host.submitCollect(state, liveHashes);
    if (outcome.effect === 'kept') report.kept.push(...entriesOf(state).map((entry) => withReason(entry, outcome.reason, state)));
    else if (outcome.effect === 'destroyed') report.removed.push(...entriesOf(state));
  } catch (error) {
    report.kept.push(...entriesOf(state).map((entry) => ({ ...entry, reason: `destroy failed: ${(error as Error).message}` })));
  }
}

function leftoverOps(host: GcHost, leftover: Leftover): Op[] {
  return [
    ...(leftover.hasSet ? [{ op: 'deleteSet', name: leftover.name } as const] : []),
    ...(leftover.hasRecord ? [{ op: 'deleteRecord', registry: host.registry, key: leftover.name } as const] : []),
  ];
}

function removeLeftover(host: GcHost, leftover: Leftover, report: GcReport): Promise<void> {
  const entry = leftoverEntry(leftover);
  return new Promise((resolve) => {
    // Stryker disable next-line BooleanLiteral: plan() always sets it before landed() reads it
    let kept = false;
    host.submitJob({
      plan: () => {
        kept = host.claimed(leftover.name);
        // Stryker disable next-line ObjectLiteral,StringLiteral: a leftover job's outcome is read by nobody (landed() reports from `kept`)
        return { ops: kept ? [] : leftoverOps(host, leftover), undo: [], outcome: { effect: 'none' } };
      },
      landed: () => {
        if (kept) report.kept.push({ ...entry, reason: 'live in this process' });
        else report.removed.push(entry);
        resolve();
      },
      failed: (error) => {
        report.kept.push({ ...entry, reason: `destroy failed: ${(error as Error).message}` });
        resolve();
      },
    });
  });
}

/**
 * Removes owned sets whose owner is not in `live`, is not live in this
 * process, and has no pending deadline ahead; also debris of our names that
 * no owner of this process claims. Reports what it removed and kept, and why.
 */
export async function collectGarbage(host: GcHost, live: Iterable<string>, dry: boolean): Promise<GcReport> {
  const liveHashes = new Set([...live].map((owner) => ownerHash(owner)));
  const { states, leftovers } = await survey(host);
  if (dry) return dryRun(host, states, leftovers, liveHashes);
  const report: GcReport = { dryRun: false, removed: [], kept: [] };
  await Promise.all([
    ...states.map((state) => collectOwner(host, state, liveHashes, report)),
    ...leftovers.map((leftover) => removeLeftover(host, leftover, report)),
  ]);
  return report;
}
