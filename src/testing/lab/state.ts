// A lab's state as another process hands it back (the CLI's state file, a
// test runner's fixture): checked for shape before any namespace is opened by
// the names it holds, so a damaged file is a coded error, not a TypeError
// half-way through an attach.
import { ErrorCodes, kindOf, netnsError, type NetnsError } from '../../core/errors.js';
import { assertValidName, checkRunDir } from '../../core/names.js';
import { checkLinkName } from '../../netlink/validate.js';
import type { LabPlan } from './plan.js';
import { checkDirsShape } from './private-dirs.js';
import { LAB_KEY } from './spec.js';
import { checkImpairment } from './units.js';

const invalid = (message: string): NetnsError => netnsError(ErrorCodes.INVALID_ARG, `lab state: ${message}`);
const KINDS = ['host', 'router', 'switch'];

function expectKind(value: unknown, kind: 'object' | 'array' | 'string' | 'number' | 'boolean', what: string): void {
  const actual = kindOf(value);
  const ok = kind === 'array' ? actual === 'an array' : actual === kind;
  if (!ok) throw invalid(`${what} must be ${kind === 'array' || kind === 'object' ? `an ${kind}` : `a ${kind}`}, got ${actual}`);
}

function checkEnd(end: unknown, keys: Set<string>, what: string): void {
  expectKind(end, 'object', what);
  const { node, iface, addresses } = end as Record<string, unknown>;
  if (typeof node !== 'string' || !keys.has(node)) throw invalid(`${what} names unknown node ${JSON.stringify(node)}`);
  try {
    checkLinkName(iface, `${what}'s interface`);
  } catch (error) {
    throw invalid((error as Error).message);
  }
  expectKind(addresses, 'array', `${what}'s addresses`);
  for (const address of addresses as unknown[]) expectKind(address, 'string', `${what}'s address`);
}

/** A node's dirs as a state file holds them: what a spec could have given (the machine's folders may have changed since). */
function checkStateDirs(key: string, dirs: unknown): void {
  try {
    checkDirsShape(key, dirs);
  } catch (error) {
    throw invalid((error as Error).message.replace(/^createLab: /, ''));
  }
}

/** Checks the plan and the names a Lab is made from (ERR_NETNS_INVALID_ARG). */
export function checkPlanAndNames(plan: unknown, names: unknown): asserts plan is LabPlan {
  expectKind(plan, 'object', 'plan');
  const { nodes, segments, links, routes, prefix, ipv6 } = plan as Record<string, unknown>;
  expectKind(prefix, 'string', 'plan.prefix');
  expectKind(ipv6, 'boolean', 'plan.ipv6');
  expectKind(nodes, 'array', 'plan.nodes');
  expectKind(segments, 'array', 'plan.segments');
  expectKind(links, 'array', 'plan.links');
  expectKind(routes, 'object', 'plan.routes');
  expectKind(names, 'object', 'names');
  const keys = new Set<string>();
  const taken = new Set<unknown>();
  for (const node of nodes as unknown[]) {
    expectKind(node, 'object', 'a plan node');
    const { key, kind, dirs } = node as Record<string, unknown>;
    if (typeof key !== 'string' || !LAB_KEY.test(key) || !KINDS.includes(kind as string)) throw invalid(`bad node ${JSON.stringify(node)}`);
    if (dirs !== undefined) checkStateDirs(key, dirs);
    const name = (names as Record<string, unknown>)[key];
    if (!Object.hasOwn(names as object, key)) throw invalid(`names has none for node ${key}`);
    assertValidName(name);
    if (keys.has(key) || taken.has(name)) throw invalid(`node ${key} or its namespace ${name} appears twice`);
    keys.add(key);
    taken.add(name);
  }
  (links as unknown[]).forEach((link, i) => {
    expectKind(link, 'object', `link ${i}`);
    checkEnd((link as Record<string, unknown>).a, keys, `link ${i}'s a`);
    checkEnd((link as Record<string, unknown>).b, keys, `link ${i}'s b`);
  });
  for (const [key, list] of Object.entries(routes as object)) {
    if (!keys.has(key)) throw invalid(`routes of unknown node ${JSON.stringify(key)}`);
    expectKind(list, 'array', `routes of ${key}`);
    for (const route of list as unknown[]) {
      expectKind(route, 'object', `a route of ${key}`);
      for (const field of ['destination', 'gateway', 'device']) expectKind((route as Record<string, unknown>)[field], 'string', `a route of ${key}'s ${field}`);
    }
  }
  if ((plan as Record<string, unknown>).nat !== undefined) checkNat((plan as Record<string, unknown>).nat, keys);
}

/** A plan's way out: a known node, and the fields makeUplink uses. */
function checkNat(nat: unknown, keys: Set<string>): void {
  expectKind(nat, 'object', 'plan.nat');
  const fields = nat as Record<string, unknown>;
  for (const field of ['node', 'subnet', 'iface', 'routerAddress', 'machineIface', 'machineAddress']) expectKind(fields[field], 'string', `plan.nat.${field}`);
  if (!keys.has(fields.node as string)) throw invalid(`plan.nat names unknown node ${JSON.stringify(fields.node)}`);
  try {
    checkLinkName(fields.machineIface, "plan.nat's machine interface");
  } catch (error) {
    throw invalid((error as Error).message);
  }
}

/** Checks what Lab.attach takes beyond the plan and names (checked already): the run directory, impairments, links down, partitions, all of known nodes and links. */
export function checkRunState(state: Record<string, unknown>, plan: LabPlan): void {
  const { runDir, impairments, down, partitions, nextPartition } = state;
  try {
    checkRunDir(runDir);
  } catch (error) {
    throw invalid((error as Error).message);
  }
  const keys = new Set(plan.nodes.map((node) => node.key));
  const linked = new Set(plan.links.flatMap(({ a, b }) => [`${a.node}>${b.node}`, `${b.node}>${a.node}`]));
  expectKind(impairments, 'array', 'impairments');
  for (const entry of impairments as unknown[]) {
    if (!Array.isArray(entry) || entry.length !== 3 || !linked.has(`${String(entry[0])}>${String(entry[1])}`)) throw invalid(`an impairment is [from, to, impairment] of a link, got ${JSON.stringify(entry)}`);
    checkImpairment(entry[2], `${entry[0]}→${entry[1]}`);
  }
  expectKind(down, 'array', 'down');
  for (const key of down as unknown[]) if (typeof key !== 'string' || !linked.has(key)) throw invalid(`a link down is "a>b" of a link, got ${JSON.stringify(key)}`);
  expectKind(partitions, 'array', 'partitions');
  let highest = 0;
  for (const partition of partitions as unknown[]) {
    expectKind(partition, 'object', 'a partition');
    const { id, sides } = partition as Record<string, unknown>;
    const ok = Number.isSafeInteger(id) && (id as number) > highest && Array.isArray(sides) && sides.length === 2 && sides.every((side) => Array.isArray(side) && side.every((key) => keys.has(key)));
    if (!ok) throw invalid(`bad partition ${JSON.stringify(partition)} (ids rise, sides are node keys)`);
    highest = id as number;
  }
  if (!Number.isSafeInteger(nextPartition) || (nextPartition as number) <= highest) throw invalid(`nextPartition must be an integer above every partition's id, got ${String(nextPartition)}`);
}
