// The conformance and stress runner: any CNI plugin executable, Go or ours,
// put through what a runtime and a busy node put it through, in namespaces of
// its own (the machine's network is never touched), with a leak check after
// each scenario. `netns cni check PLUGIN --conf FILE` prints its table.
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { ErrorCodes, netnsError } from '../../../core/errors.js';
import { PluginGroups } from './process-groups.js';
import { formatReport, type ScenarioReport } from './report.js';
import { assertExecFormat } from './runnable.js';
import * as scenarios from './scenarios.js';
import type { ScenarioContext, ScenarioOutcome } from './scenarios.js';
import { Stand } from './stand.js';

export { formatReport };
export type { ScenarioReport };

/** What checkPlugin takes. */
export interface ConformanceOptions {
  /** The plugin executable. */
  plugin: string;
  /** Its network configuration (one plugin's, with `type`, `cniVersion`, and `ipam` if it delegates). `name` is replaced by one of the run's own. */
  conf: Record<string, unknown>;
  /** CNI_PATH before the defaults (the plugin's directory, /opt/cni/bin, /usr/lib/cni). */
  path?: readonly string[];
  /** Attachments in the parallel scenario (default 10). */
  parallel?: number;
  /** Rounds of the killed-ADD scenario (default 10). */
  rounds?: number;
  /** Only these scenarios (default: all, in SCENARIOS' order). */
  only?: readonly ScenarioName[];
  /** Each plugin call's deadline in ms (default 30,000): then the plugin's process group is killed and the call fails. */
  timeoutMs?: number;
  /** Aborting it kills the running plugins, cleans up, and rejects with its reason. */
  signal?: AbortSignal;
  /** Called as each scenario ends, e.g. to print progress. */
  onScenario?: (report: ScenarioReport) => void;
}

/** Each plugin call's deadline when none is given: a runtime's CNI timeout is of this order, and no sane plugin call comes near it. */
export const DEFAULT_TIMEOUT_MS = 30_000;

// Every scenario, in the order they run.
const SCENARIOS: Record<ScenarioName, (ctx: ScenarioContext) => Promise<ScenarioOutcome>> = {
  version: scenarios.versionScenario,
  'warm-up': scenarios.warmUpScenario,
  errors: scenarios.errorsScenario,
  lifecycle: scenarios.lifecycleScenario,
  'netns-gone': scenarios.netnsGoneScenario,
  parallel: scenarios.parallelScenario,
  'killed-add': scenarios.killedAddScenario,
  'abandoned-add': scenarios.abandonedAddScenario,
};

/**
 * A scenario's name: `version` (VERSION lists the configuration's version),
 * `warm-up` (a first ADD and DEL; what they keep is shared state, listed, not
 * failed), `errors` (an unknown version, bad JSON, missing variables: the
 * spec's codes 1, 6, 4), `lifecycle` (ADD, CHECK, DEL, DEL again),
 * `netns-gone` (DEL after the namespace is deleted, with its path and with
 * none), `parallel` (ADDs, CHECKs, DELs at once), `killed-add` (ADD SIGKILLed
 * at moments spread over an ADD, then DEL, then ADD again), `abandoned-add`
 * (IPAM slowed, ADD killed at a deadline, DEL at once, then nothing may
 * appear once the ADD's work has ended).
 */
export type ScenarioName = 'version' | 'warm-up' | 'errors' | 'lifecycle' | 'netns-gone' | 'parallel' | 'killed-add' | 'abandoned-add';

/** Every scenario's name, in the order they run. */
export const SCENARIO_NAMES = Object.keys(SCENARIOS) as readonly ScenarioName[];

function invalid(what: string): never {
  throw netnsError(ErrorCodes.INVALID_ARG, `checkPlugin: ${what}`);
}

function checkOptions(options: ConformanceOptions): void {
  if (typeof options !== 'object' || options === null) invalid('takes { plugin, conf, path?, parallel?, rounds?, only?, timeoutMs?, signal? }');
  if (typeof options.plugin !== 'string' || !existsSync(options.plugin)) invalid(`no plugin executable at ${JSON.stringify(options.plugin)}`);
  const conf = options.conf as unknown;
  if (typeof conf !== 'object' || conf === null || Array.isArray(conf)) invalid('conf must be a network configuration object');
  if (typeof options.conf.cniVersion !== 'string') invalid('conf needs a cniVersion');
  for (const key of ['parallel', 'rounds'] as const) {
    const n = options[key];
    if (n !== undefined && !(Number.isSafeInteger(n) && n >= 1 && n <= 200)) invalid(`${key} must be a whole number from 1 to 200`);
  }
  const { timeoutMs, signal } = options;
  if (timeoutMs !== undefined && !(Number.isSafeInteger(timeoutMs) && timeoutMs >= 1 && timeoutMs <= 3_600_000)) invalid('timeoutMs must be a whole number of ms from 1 to 3,600,000');
  if (signal !== undefined && !(signal instanceof AbortSignal)) invalid('signal must be an AbortSignal');
  const unknown = (options.only ?? []).filter((name) => !(name in SCENARIOS));
  if (unknown.length > 0) invalid(`no scenario ${unknown.join(', ')}; there are ${SCENARIO_NAMES.join(', ')}`);
}

/** The configuration as the run uses it: its own network name, and host-local's allocations in a directory of its own. */
function runConf(conf: Record<string, unknown>, name: string, ipamDir: string): { conf: Record<string, unknown>; ipamDir?: string } {
  const ipam = conf.ipam as Record<string, unknown> | undefined;
  if (ipam?.type !== 'host-local') return { conf: { ...conf, name } };
  return { conf: { ...conf, name, ipam: { ...ipam, dataDir: ipamDir } }, ipamDir: join(ipamDir, name) };
}

function cniPath(options: ConformanceOptions): string[] {
  const dirs = [...(options.path ?? []), dirname(resolve(options.plugin)), '/opt/cni/bin', '/usr/lib/cni'];
  return [...new Set(dirs)].filter((dir) => existsSync(dir));
}

/** Whether an error ends the whole run rather than one scenario: an abort, or a plugin that cannot be started at all. */
const endsTheRun = (error: unknown, signal: AbortSignal | undefined): boolean =>
  signal?.aborted === true || (error as { code?: unknown } | null)?.code === ErrorCodes.CNI_PLUGIN_UNRUNNABLE;

async function runScenario(name: ScenarioName, ctx: ScenarioContext): Promise<ScenarioReport> {
  let outcome: ScenarioOutcome;
  try {
    outcome = await SCENARIOS[name](ctx);
  } catch (error) {
    if (endsTheRun(error, ctx.plugin.signal)) throw error;
    outcome = { failures: [`the runner failed: ${error instanceof Error ? error.message : String(error)}`] };
  }
  const result = outcome.skipped ? 'skip' : outcome.failures.length ? 'FAIL' : 'pass';
  return { scenario: name, result, detail: outcome.skipped ?? [...outcome.failures, outcome.note].filter(Boolean).join('; ') };
}

/**
 * Runs the scenarios against one plugin executable and resolves with a row per
 * scenario. Needs root (it makes namespaces); the plugin runs in a namespace
 * that stands for the host. The network's name is the run's own and host-local
 * allocates in a temporary directory, so nothing of the machine is touched.
 * A call past `timeoutMs`, or printing more than 4 MiB, has its plugin's
 * process group killed and fails its scenario. A plugin that cannot be
 * started rejects with ERR_NETNS_CNI_PLUGIN_UNRUNNABLE; an abort of `signal`
 * with its reason. Either way its namespaces, files and processes are gone first.
 */
export async function checkPlugin(options: ConformanceOptions): Promise<ScenarioReport[]> {
  checkOptions(options);
  const path = resolve(options.plugin);
  await assertExecFormat(path);
  options.signal?.throwIfAborted();
  const stand = await Stand.create();
  const dataDir = await mkdtemp(join(tmpdir(), 'netns-cni-check-'));
  const groups = new PluginGroups();
  const killAll = () => groups.killAll();
  options.signal?.addEventListener('abort', killAll, { once: true });
  try {
    const { conf, ipamDir } = runConf(options.conf, stand.prefix, dataDir);
    const plugin = { path, cniPath: cniPath(options), host: stand.host, timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS, groups, signal: options.signal };
    const ctx: ScenarioContext = { plugin, stand, conf, ipamDir, parallel: options.parallel ?? 10, rounds: options.rounds ?? 10, addMs: 200 };
    const reports: ScenarioReport[] = [];
    for (const name of SCENARIO_NAMES) {
      if (options.only && !options.only.includes(name)) continue;
      const report = await runScenario(name, ctx);
      options.onScenario?.(report);
      reports.push(report);
    }
    return reports;
  } finally {
    options.signal?.removeEventListener('abort', killAll);
    groups.killAll(); // what plugins left running (a delegate of a killed one) goes before its namespace
    await stand.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}
