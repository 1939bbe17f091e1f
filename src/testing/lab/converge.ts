// Waiting for a lab to reach a state: a predicate polled on a short interval
// up to a deadline (routing daemons announce no "done"; the kernel's routes
// are the judge), and the state "every routing daemon's router has a route to
// every subnet the daemons can announce".
import { ErrorCodes, kindOf, netnsError, type NetnsError } from '../../core/errors.js';
import { refuseUnknownKeys } from '../../core/known-keys.js';
import { ownOptions } from '../../core/own.js';
import { MAX_TIMER_MS } from '../../core/timer-limit.js';
import type { LabPlan } from './plan.js';

/** Options of lab.waitFor() and lab.waitConverged(). */
export interface WaitOptions {
  /** Give up after this many ms (default 30,000). */
  timeoutMs?: number;
  /** Check again this many ms after a check ends (default 50). */
  intervalMs?: number;
}

const invalid = (message: string): NetnsError => netnsError(ErrorCodes.INVALID_ARG, message);

function checkWaitOptions(given: WaitOptions | undefined, what: string): Required<WaitOptions> {
  const options = ownOptions(given);
  refuseUnknownKeys(options, ['timeoutMs', 'intervalMs'], `${what} options`, invalid);
  const { timeoutMs = 30_000, intervalMs = 50 } = options;
  for (const [name, value] of [['timeoutMs', timeoutMs], ['intervalMs', intervalMs]] as const) {
    if (!Number.isSafeInteger(value) || value < 1 || value > MAX_TIMER_MS) throw invalid(`${what}: ${name} must be an integer from 1 to ${MAX_TIMER_MS} ms, got ${String(value)}`);
  }
  return { timeoutMs, intervalMs };
}

/**
 * Resolves with the first truthy value `check` returns; rejects with
 * ETIMEDOUT when none came by the deadline, the message ending with what
 * `explain` says of the last value (what is still missing), and with the
 * error of a check that throws.
 */
export async function pollUntil<T>(check: () => Promise<T> | T, given: WaitOptions | undefined, what: string, explain: (last: T) => string): Promise<T> {
  if (typeof check !== 'function') throw invalid(`${what} takes a function, got ${kindOf(check)}`);
  const { timeoutMs, intervalMs } = checkWaitOptions(given, what);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() >= deadline) throw netnsError('ETIMEDOUT', `${what}: not reached within ${timeoutMs} ms: ${explain(value)}`);
    await new Promise((resolve) => setTimeout(resolve, Math.min(intervalMs, Math.max(1, deadline - Date.now()))));
  }
}

/** What waitConverged needs of a router's IPv4 routes: each destination with its next hops' addresses. */
export interface RouteSeen {
  destination: string;
  gateways: string[];
}

/** The nodes on each segment through a link that is up (switches aside: they route nothing). */
function membersUp(plan: LabPlan, down: ReadonlySet<string>): Set<string>[] {
  const kinds = new Map(plan.nodes.map(({ key, kind }) => [key, kind]));
  const members = plan.segments.map(() => new Set<string>());
  for (const link of plan.links) {
    if (down.has(`${link.a.node}>${link.b.node}`)) continue;
    for (const end of [link.a, link.b]) if (kinds.get(end.node) !== 'switch') members[link.segment]!.add(end.node);
  }
  return members;
}

/** Each node's distance to `segment` in routers crossed, over links up: 0 on it, absent where it cannot be reached. */
function hopsTo(segment: number, members: Set<string>[], routers: ReadonlySet<string>): Map<string, number> {
  const hops = new Map([...members[segment]!].map((node) => [node, 0]));
  const queue = [...members[segment]!].filter((node) => routers.has(node));
  while (queue.length > 0) {
    const router = queue.shift()!;
    for (const nodes of members.filter((on) => on.has(router))) {
      for (const node of nodes) {
        if (hops.has(node)) continue;
        hops.set(node, hops.get(router)! + 1);
        if (routers.has(node)) queue.push(node);
      }
    }
  }
  return hops;
}

/**
 * What keeps FRR router `router` from agreeing with the topology: each subnet
 * the FRR routers are on (through links up) and `router` can reach, that its
 * routes lack or reach through a neighbour not on a shortest way (in routers
 * crossed: the generated OSPF gives every interface one cost). Empty: agrees.
 */
export function routeProblems(plan: LabPlan, frrRouters: ReadonlySet<string>, down: ReadonlySet<string>, router: string, routes: RouteSeen[]): string[] {
  const members = membersUp(plan, down);
  const routers = new Set(plan.nodes.filter((node) => node.kind === 'router').map((node) => node.key));
  const owner = new Map(plan.links.flatMap((link) => [link.a, link.b]).flatMap((end) => end.addresses.map((cidr) => [cidr.split('/')[0]!, end.node] as const)));
  const problems: string[] = [];
  plan.segments.forEach(({ subnet }, segment) => {
    if (![...members[segment]!].some((node) => frrRouters.has(node))) return;
    const hops = hopsTo(segment, members, routers);
    const mine = hops.get(router);
    if (mine === undefined) return;
    const route = routes.find((seen) => seen.destination === subnet);
    if (!route) return problems.push(subnet);
    const astray = route.gateways.filter((gateway) => mine === 0 || hops.get(owner.get(gateway) ?? '') !== mine - 1);
    if (astray.length > 0) problems.push(`${subnet} (through ${astray.join(', ')}, not on a shortest way)`);
  });
  return problems;
}

/** "r1 lacks 10.0.3.0/30; r2 lacks …" of each router's problems, or '' when there are none. */
export function describeMissing(missing: Map<string, string[]>): string {
  return [...missing].filter(([, prefixes]) => prefixes.length > 0).map(([router, prefixes]) => `${router} lacks ${prefixes.join(', ')}`).join('; ');
}
