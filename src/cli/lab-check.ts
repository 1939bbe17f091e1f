// A `netns lab` state file checked before anything acts on the names it
// holds: a damaged or hostile file must never make `down` delete a namespace
// the lab did not make, nor break `status` with a TypeError.
import { ErrorCodes, kindOf, netnsError } from '../core/errors.js';
import { refuseUnknownKeys } from '../core/known-keys.js';
import type { LabState } from '../testing/lab/lab.js';
import { checkPlanAndNames, checkRunState } from '../testing/lab/state.js';

const STORED_KEYS = ['name', 'file', 'building', 'state', 'identities', 'started'];

function checkIdentities(identities: unknown, keys: string[]): void {
  if (kindOf(identities) !== 'object') throw new Error(`identities must be an object, got ${kindOf(identities)}`);
  for (const key of keys) {
    const identity = (identities as Record<string, unknown>)[key];
    const { dev, inode, made } = (kindOf(identity) === 'object' ? identity : {}) as Record<string, unknown>;
    if (!Object.hasOwn(identities as object, key) || !Number.isSafeInteger(dev) || !Number.isSafeInteger(inode) || typeof made !== 'string' || !/^\d+$/.test(made)) {
      throw new Error(`identities has no {dev, inode, made} for node ${key}`);
    }
  }
}

/**
 * Why the data read from lab `name`'s state file is not a lab's (a message),
 * or undefined when it is: the shape createLab's state has, and every
 * namespace name exactly `<prefix><name>.<node>` for a node of its plan.
 */
export async function whyNotStoredLab(data: unknown, name: string): Promise<string | undefined> {
  const { namedLabNamespace } = await import('../testing/lab/lab.js');
  try {
    if (kindOf(data) !== 'object') return `it must hold an object, got ${kindOf(data)}`;
    refuseUnknownKeys(data, STORED_KEYS, 'the lab', (message) => netnsError(ErrorCodes.INVALID_ARG, message));
    const stored = data as Record<string, unknown>;
    if (stored.name !== name) return `it names lab ${JSON.stringify(stored.name)}, not ${name}`;
    if (typeof stored.file !== 'string' || typeof stored.building !== 'boolean') return 'file must be a string and building a boolean';
    if (kindOf(stored.state) !== 'object') return `state must be an object, got ${kindOf(stored.state)}`;
    const state = stored.state as LabState;
    checkPlanAndNames(state.plan, state.names);
    checkRunState(state as unknown as Record<string, unknown>, state.plan);
    const keys = state.plan.nodes.map((node) => node.key);
    for (const [key, ns] of Object.entries(state.names)) {
      if (!keys.includes(key) || ns !== namedLabNamespace(state.plan.prefix, name, key)) return `namespace ${JSON.stringify(ns)} (node ${key}) is not one lab ${name} makes`;
    }
    if (stored.building && stored.identities !== undefined) return 'a lab still building has no identities yet';
    if (stored.building && (typeof stored.started !== 'string' || !/^\d+$/.test(stored.started))) return 'a lab still building has its start time';
    if (!stored.building) checkIdentities(stored.identities, keys);
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}
