// The scenarios a runtime puts a plugin through on a busy node, each ending in
// a leak check of the host and container namespaces: what the spec asks
// (errors, version negotiation, DEL idempotent and after the namespace is
// gone), and what kills and deadlines do (an ADD killed at a spread of
// moments, an ADD abandoned while its IPAM is slow), and a storm of parallel
// ADDs and DELs.
import { setTimeout as sleep } from 'node:timers/promises';
import type { NetNS } from '../../../netns.js';
import { callPlugin, describeExit, type CallEnv, type CallExit, type PluginUnderTest } from './plugin-run.js';
import { describeDiff, diff, EMPTY_RESERVATION, snapshot, type Snapshot } from './snapshot.js';
import { slowIpam } from './slow-ipam.js';
import type { Stand } from './stand.js';
import { versionAtLeast } from '../../version.js';

/** What every scenario gets. */
export interface ScenarioContext {
  plugin: PluginUnderTest;
  stand: Stand;
  /** The network configuration, name and IPAM directory already set for this run. */
  conf: Record<string, unknown>;
  /** host-local's directory for this network, when the configuration uses it. */
  ipamDir?: string;
  parallel: number;
  rounds: number;
  /** The median ADD wall time seen so far (ms): kill moments and deadlines follow it. */
  addMs: number;
}

/** One scenario's outcome: failures as lines (none: it passed), or why it did not run. */
export interface ScenarioOutcome {
  failures: string[];
  skipped?: string;
  /** What was measured or noticed, for the report. */
  note?: string;
}

const IFNAME = 'eth0';

const stdinOf = (conf: Record<string, unknown>, prevResult?: unknown): string => JSON.stringify(prevResult === undefined ? conf : { ...conf, prevResult });

function attachment(container: { ns: NetNS; id: string }): CallEnv {
  return { containerId: container.id, netns: container.ns.path, ifname: IFNAME };
}

/** The host's and a container's state, to compare after a scenario. */
async function states(ctx: ScenarioContext, container?: NetNS): Promise<Snapshot[]> {
  return Promise.all([snapshot(ctx.stand.host, ctx.ipamDir), ...(container ? [snapshot(container)] : [])]);
}

function leaks(before: Snapshot[], after: Snapshot[], when: string): string[] {
  return before.flatMap((state, i) => {
    const change = diff(state, after[i]!);
    if (change.added.length + change.removed.length === 0) return [];
    return [`${when}, ${i === 0 ? 'host' : 'container'}: ${describeDiff(change)}`];
  });
}

function expectOk(exit: CallExit, what: string): string[] {
  return exit.code === 0 ? [] : [`${what}: ${describeExit(exit)}`];
}

function parseResult(exit: CallExit): unknown {
  try {
    return JSON.parse(exit.stdout);
  } catch {
    return undefined;
  }
}

const hasCheck = (conf: Record<string, unknown>): boolean => versionAtLeast(String(conf.cniVersion), '0.4.0');

export async function versionScenario(ctx: ScenarioContext): Promise<ScenarioOutcome> {
  const exit = await callPlugin(ctx.plugin, 'VERSION', JSON.stringify({ cniVersion: ctx.conf.cniVersion }));
  if (exit.code !== 0) return { failures: [`VERSION: ${describeExit(exit)}`] };
  const supported = (parseResult(exit) as { supportedVersions?: unknown } | undefined)?.supportedVersions;
  if (!Array.isArray(supported)) return { failures: [`VERSION printed no supportedVersions: ${exit.stdout.slice(0, 200)}`] };
  const failures = supported.includes(ctx.conf.cniVersion) ? [] : [`VERSION does not list the configuration's ${String(ctx.conf.cniVersion)}`];
  return { failures, note: `supports ${supported.join(', ')}` };
}

/** A bad call must fail with the spec's code and leave nothing behind. */
export async function errorsScenario(ctx: ScenarioContext): Promise<ScenarioOutcome> {
  const container = await ctx.stand.container();
  const before = await states(ctx, container.ns);
  const env = attachment(container);
  const cases: [string, number, string, CallEnv][] = [
    ['an unknown cniVersion', 1, stdinOf({ ...ctx.conf, cniVersion: '99.0.0' }), env],
    ['a configuration that is not JSON', 6, '{', env],
    ['no CNI_CONTAINERID', 4, stdinOf(ctx.conf), { ...env, containerId: '' }],
    ['no CNI_IFNAME', 4, stdinOf(ctx.conf), { ...env, ifname: '' }],
  ];
  // all at once, awaited together: a plugin that cannot start rejects every one, and none may go unhandled
  const exits = await Promise.all(cases.map(([, , stdin, callEnv]) => callPlugin(ctx.plugin, 'ADD', stdin, callEnv)));
  const failures = cases.flatMap(([what, code], i) => {
    const exit = exits[i]!;
    return exit.code === 0 || exit.cniCode !== code ? [`ADD with ${what}: wanted error code ${code}, got ${describeExit(exit)}`] : [];
  });
  failures.push(...leaks(before, await states(ctx, container.ns), 'after the refused calls'));
  return { failures };
}

/**
 * One ADD and DEL before the others, so that what a plugin makes once per host
 * and keeps (a shared masquerade chain, iptables' nat table) is in every later
 * scenario's starting state; what it left is listed, not failed.
 */
export async function warmUpScenario(ctx: ScenarioContext): Promise<ScenarioOutcome> {
  const container = await ctx.stand.container();
  const [before] = await states(ctx);
  const env = attachment(container);
  const add = await callPlugin(ctx.plugin, 'ADD', stdinOf(ctx.conf), env);
  if (add.code !== 0) return { failures: [`ADD: ${describeExit(add)}`] };
  ctx.addMs = add.ms;
  const failures = expectOk(await callPlugin(ctx.plugin, 'DEL', stdinOf(ctx.conf, parseResult(add)), env), 'DEL');
  await ctx.stand.remove(container.ns);
  const kept = diff(before!, (await states(ctx))[0]!);
  return { failures, note: `kept after the first DEL (shared state, not counted later): ${kept.added.length} lines` };
}

/** ADD, CHECK, DEL, DEL again: a clean attachment and a clean removal. */
export async function lifecycleScenario(ctx: ScenarioContext): Promise<ScenarioOutcome> {
  const container = await ctx.stand.container();
  const before = await states(ctx, container.ns);
  const env = attachment(container);
  const add = await callPlugin(ctx.plugin, 'ADD', stdinOf(ctx.conf), env);
  if (add.code !== 0) return { failures: [`ADD: ${describeExit(add)}`] };
  ctx.addMs = add.ms;
  const result = parseResult(add);
  const failures: string[] = result === undefined ? ['ADD printed no JSON result'] : [];
  if (hasCheck(ctx.conf)) failures.push(...expectOk(await callPlugin(ctx.plugin, 'CHECK', stdinOf(ctx.conf, result), env), 'CHECK'));
  const del = await callPlugin(ctx.plugin, 'DEL', stdinOf(ctx.conf, result), env);
  failures.push(...expectOk(del, 'DEL'), ...expectOk(await callPlugin(ctx.plugin, 'DEL', stdinOf(ctx.conf, result), env), 'DEL again'));
  failures.push(...leaks(before, await states(ctx, container.ns), 'after DEL'));
  return { failures, note: `ADD ${add.ms.toFixed(0)} ms, DEL ${del.ms.toFixed(0)} ms` };
}

/** DEL once the container's namespace is gone: with its old path, then with none. */
export async function netnsGoneScenario(ctx: ScenarioContext): Promise<ScenarioOutcome> {
  const container = await ctx.stand.container();
  const [before] = await states(ctx);
  const env = attachment(container);
  const add = await callPlugin(ctx.plugin, 'ADD', stdinOf(ctx.conf), env);
  if (add.code !== 0) return { failures: [`ADD: ${describeExit(add)}`] };
  await ctx.stand.remove(container.ns);
  const result = parseResult(add);
  const failures = [
    ...expectOk(await callPlugin(ctx.plugin, 'DEL', stdinOf(ctx.conf, result), env), 'DEL with the deleted namespace\'s path'),
    ...expectOk(await callPlugin(ctx.plugin, 'DEL', stdinOf(ctx.conf, result), { ...env, netns: '' }), 'DEL with no CNI_NETNS'),
  ];
  failures.push(...leaks([before!], await states(ctx), 'after DEL'));
  return { failures };
}

/** `parallel` ADDs at once, CHECK of each, then as many DELs at once. */
export async function parallelScenario(ctx: ScenarioContext): Promise<ScenarioOutcome> {
  const [before] = await states(ctx);
  const containers = await Promise.all(Array.from({ length: ctx.parallel }, () => ctx.stand.container()));
  const started = performance.now();
  const adds = await Promise.all(containers.map((c) => callPlugin(ctx.plugin, 'ADD', stdinOf(ctx.conf), attachment(c))));
  const addWall = performance.now() - started;
  const failures = adds.flatMap((exit, i) => expectOk(exit, `ADD ${i + 1}`));
  if (hasCheck(ctx.conf)) {
    for (const [i, c] of containers.entries()) {
      if (adds[i]!.code === 0) failures.push(...expectOk(await callPlugin(ctx.plugin, 'CHECK', stdinOf(ctx.conf, parseResult(adds[i]!)), attachment(c)), `CHECK ${i + 1}`));
    }
  }
  const delStarted = performance.now();
  const dels = await Promise.all(containers.map((c, i) => callPlugin(ctx.plugin, 'DEL', stdinOf(ctx.conf, parseResult(adds[i]!)), attachment(c))));
  const delWall = performance.now() - delStarted;
  failures.push(...dels.flatMap((exit, i) => expectOk(exit, `DEL ${i + 1}`)));
  for (const c of containers) await ctx.stand.remove(c.ns);
  failures.push(...leaks([before!], await states(ctx), `after ${ctx.parallel} DELs`));
  return { failures: failures.slice(0, 5), note: `${ctx.parallel} ADDs ${addWall.toFixed(0)} ms, ${ctx.parallel} DELs ${delWall.toFixed(0)} ms (wall)` };
}

/** One round of a killed ADD: the runtime's DEL, nothing left, then ADD works again; `cutShort` when a call hit the runner's limits. */
/**
 * A killed ADD kills its IPAM too (its process group; a plugin may also give
 * it PR_SET_PDEATHSIG). Killed between creating a reservation file and
 * writing the container's id into it, host-local leaves an empty file no DEL
 * can match: its own leak, which Go's ptp only escapes by leaving its IPAM
 * running (and allocating after the DEL). Counted apart, not as the plugin's.
 */
function killedIpamWrites(before: Snapshot, after: Snapshot): string[] {
  return diff(before, after).added.filter((line) => line.endsWith(EMPTY_RESERVATION));
}

async function killedRound(ctx: ScenarioContext, killAtMs: number): Promise<{ failures: string[]; cutShort: boolean; ipamKilledWriting: boolean }> {
  const container = await ctx.stand.container();
  const before = await states(ctx, container.ns);
  const env = attachment(container);
  const when = `killed at ${killAtMs.toFixed(0)} ms`;
  const killed = await callPlugin(ctx.plugin, 'ADD', stdinOf(ctx.conf), env, killAtMs);
  const del = await callPlugin(ctx.plugin, 'DEL', stdinOf(ctx.conf), env);
  const failures = expectOk(del, `${when}, then DEL`);
  const [host, ...others] = await states(ctx, container.ns);
  const ipamKilled = killed.killed ? killedIpamWrites(before[0]!, host!) : [];
  const hostLeft = host!.filter((line) => !ipamKilled.includes(line));
  failures.push(...leaks(before, [hostLeft, ...others], `${when}${killed.killed ? '' : ' (it ended first)'}, then DEL`));
  const again = await callPlugin(ctx.plugin, 'ADD', stdinOf(ctx.conf), env);
  failures.push(...expectOk(again, `${when}, then DEL, then ADD again`));
  const delAgain = await callPlugin(ctx.plugin, 'DEL', stdinOf(ctx.conf, parseResult(again)), env);
  failures.push(...expectOk(delAgain, `${when}, the second DEL`));
  await ctx.stand.remove(container.ns);
  return { failures, cutShort: [killed, del, again, delAgain].some((exit) => exit.cutShort !== undefined), ipamKilledWriting: ipamKilled.length > 0 };
}

/** ADDs killed (SIGKILL, as a runtime's deadline) at moments spread over a whole ADD; a round the runner's limits cut short ends the scenario (each further one would wait as long). */
export async function killedAddScenario(ctx: ScenarioContext): Promise<ScenarioOutcome> {
  const failures: string[] = [];
  let failedRounds = 0;
  let ipamKilledWriting = 0;
  let round = 0;
  while (round < ctx.rounds) {
    const outcome = await killedRound(ctx, (ctx.addMs * (round++ + 0.5)) / ctx.rounds);
    if (outcome.failures.length > 0) failedRounds++;
    if (outcome.ipamKilledWriting) ipamKilledWriting++;
    failures.push(...outcome.failures);
    if (outcome.cutShort) break;
  }
  const ipamNote = ipamKilledWriting > 0 ? `; in ${ipamKilledWriting}, host-local was killed while writing a reservation and left it empty (its own leak: no DEL can match it)` : '';
  return { failures: failures.slice(0, 3), note: `${failedRounds} of ${round} rounds left something or failed${round < ctx.rounds ? ` (stopped: a call was cut short)` : ''}${ipamNote}` };
}

/** An ADD whose IPAM is slow, abandoned at a deadline, DEL at once; nothing may appear once the ADD's work ends. */
export async function abandonedAddScenario(ctx: ScenarioContext): Promise<ScenarioOutcome> {
  const ipamType = (ctx.conf.ipam as { type?: unknown } | undefined)?.type;
  if (typeof ipamType !== 'string') return { failures: [], skipped: 'the configuration delegates to no IPAM plugin' };
  const delayMs = Math.max(1000, 4 * ctx.addMs);
  const slow = await slowIpam(ipamType, ctx.plugin.cniPath, delayMs);
  try {
    const plugin = { ...ctx.plugin, cniPath: [slow.dir, ...ctx.plugin.cniPath] };
    const container = await ctx.stand.container();
    const before = await states(ctx, container.ns);
    const env = attachment(container);
    const abandoned = await callPlugin(plugin, 'ADD', stdinOf(ctx.conf), env, delayMs / 2);
    const failures = abandoned.killed ? [] : [`the ADD ended before its deadline (${describeExit(abandoned)}): the IPAM was not slowed`];
    failures.push(...expectOk(await callPlugin(ctx.plugin, 'DEL', stdinOf(ctx.conf), env), 'DEL after the abandoned ADD'));
    // whatever the abandoned ADD still does happens after its IPAM ends: give it that, and as long again as a whole ADD takes
    await slow.finished(2 * delayMs, ctx.plugin.signal);
    await sleep(Math.max(500, 2 * ctx.addMs), undefined, { signal: ctx.plugin.signal });
    failures.push(...leaks(before, await states(ctx, container.ns), 'once the abandoned ADD had ended'));
    await callPlugin(ctx.plugin, 'DEL', stdinOf(ctx.conf), env); // the runner's own cleanup, whatever was left
    await ctx.stand.remove(container.ns);
    return { failures, note: `IPAM slowed by ${delayMs.toFixed(0)} ms, ADD abandoned at ${(delayMs / 2).toFixed(0)} ms` };
  } finally {
    await slow.remove();
  }
}
