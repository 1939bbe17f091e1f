// One plugin process in the stand's host namespace, as a runtime starts it:
// the CNI_* environment and the configuration on stdin. A scenario may kill it
// at a moment of its choosing (SIGKILL to the plugin alone, as Go's
// exec.CommandContext does when a runtime's context ends). The runner's own
// limits, a deadline per call and a cap on what it prints, kill the plugin's
// whole process group instead: a hung or runaway plugin must not hang the run.
import type { ChildProcess } from 'node:child_process';
import type { NetNS } from '../../../netns.js';
import type { CniCommand } from '../../types.js';
import { collectBounded, MAX_OUTPUT_BYTES } from './bounded-output.js';
import type { PluginGroups } from './process-groups.js';
import { cannotRun } from './runnable.js';

/** The per-call part of the environment. */
export interface CallEnv {
  containerId?: string;
  netns?: string;
  ifname?: string;
}

/** How the call ended. */
export interface CallExit {
  /** The exit status; null when killed. */
  code: number | null;
  /** The CNI error code the plugin printed, when it printed one. */
  cniCode?: number;
  stdout: string;
  stderr: string;
  /** Whether the scenario's kill (killAfterMs) ended it. */
  killed: boolean;
  /** Why the runner ended it itself: the call's deadline passed, or it printed too much. */
  cutShort?: string;
  /** Wall time in ms. */
  ms: number;
}

/** What the runner knows of the plugin under test. */
export interface PluginUnderTest {
  /** The executable. */
  path: string;
  /** CNI_PATH, in order. */
  cniPath: readonly string[];
  /** The namespace that stands for the host: where the plugin runs. */
  host: NetNS;
  /** Each call's deadline (ms), after which the plugin's process group is killed. */
  timeoutMs: number;
  /** The process groups of the plugins started, killed at a deadline, at the run's end or on abort. */
  groups: PluginGroups;
  /** Once aborted, no call starts. */
  signal?: AbortSignal;
}

function cniCodeOf(stdout: string): number | undefined {
  try {
    const code = (JSON.parse(stdout) as { code?: unknown }).code;
    return typeof code === 'number' ? code : undefined;
  } catch {
    return undefined;
  }
}

function environment(plugin: PluginUnderTest, command: CniCommand | '', call: CallEnv): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    CNI_COMMAND: command,
    CNI_CONTAINERID: call.containerId ?? '',
    CNI_NETNS: call.netns ?? '',
    CNI_IFNAME: call.ifname ?? '',
    CNI_ARGS: '',
    CNI_PATH: plugin.cniPath.join(':'),
  };
}

/** The plugin's process group, killed and its pipes let go, once, with the reason the call is cut short. */
function cutter(child: ChildProcess, groups: PluginGroups): { cut(why: string): void; why(): string | undefined } {
  let reason: string | undefined;
  return {
    cut(why) {
      if (reason !== undefined) return;
      reason = why;
      groups.kill(child.pid);
      // a process that left the group may hold them open: the call ends when the plugin does
      child.stdout!.destroy();
      child.stderr!.destroy();
    },
    why: () => reason,
  };
}

function collect(plugin: PluginUnderTest, child: ChildProcess, started: number, wasKilled: () => boolean): Promise<CallExit> {
  const { cut, why } = cutter(child, plugin.groups);
  const overflow = (name: string) => () => cut(`printed more than ${MAX_OUTPUT_BYTES / 1024 / 1024} MiB on ${name}: its process group was killed`);
  const stdout = collectBounded(child.stdout!, overflow('stdout'));
  const stderr = collectBounded(child.stderr!, overflow('stderr'));
  const deadline = setTimeout(() => cut(`timed out after ${plugin.timeoutMs} ms: its process group was killed`), plugin.timeoutMs);
  child.stdin!.on('error', () => {}); // a plugin may exit without reading stdin
  return new Promise((resolve, reject) => {
    const settle = () => {
      clearTimeout(deadline);
      plugin.groups.settle(child.pid);
    };
    child.on('error', (error: NodeJS.ErrnoException) => {
      settle();
      reject(cannotRun(plugin.path, error.code ?? 'EIO', error));
    });
    child.on('close', (code) => {
      settle();
      const out = stdout();
      resolve({ code, cniCode: code ? cniCodeOf(out) : undefined, stdout: out, stderr: stderr(), killed: wasKilled(), cutShort: why(), ms: performance.now() - started });
    });
  });
}

/**
 * Runs one command; `killAfterMs` kills the plugin (alone) at that time if it
 * has not ended. Rejects with ERR_NETNS_CNI_PLUGIN_UNRUNNABLE when the plugin
 * cannot be started, and with the abort's reason once the run is aborted.
 */
export async function callPlugin(plugin: PluginUnderTest, command: CniCommand | '', stdin: string, call: CallEnv = {}, killAfterMs?: number): Promise<CallExit> {
  plugin.signal?.throwIfAborted();
  const started = performance.now();
  // a session of its own, so its group is the plugin and what it forks; killed too if the runner dies
  const child = plugin.host.spawn(plugin.path, [], { env: environment(plugin, command, call), stdio: ['pipe', 'pipe', 'pipe'], detached: true, parentDeathSignal: 'SIGKILL' });
  plugin.groups.add(child.pid);
  let killed = false;
  const kill = killAfterMs === undefined ? undefined : setTimeout(() => (killed = child.kill('SIGKILL')), killAfterMs);
  const exit = collect(plugin, child, started, () => killed);
  child.stdin!.end(stdin);
  return exit.finally(() => clearTimeout(kill));
}

/** A call's failure in a line: its exit and what it printed. */
export function describeExit(exit: CallExit): string {
  if (exit.cutShort) return exit.cutShort;
  if (exit.killed) return 'killed by the scenario, as planned';
  const said = (exit.stdout.trim() || exit.stderr.trim()).slice(0, 200);
  return `exit ${String(exit.code)}${said ? `: ${said}` : ''}`;
}
