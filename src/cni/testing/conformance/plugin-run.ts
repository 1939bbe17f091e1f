// One plugin process in the stand's host namespace, as a runtime starts it:
// the CNI_* environment, the configuration on stdin, and a deadline after which
// it is killed (SIGKILL, as Go's exec.CommandContext does when a runtime's
// context ends).
import type { ChildProcess } from 'node:child_process';
import type { NetNS } from '../../../netns.js';
import type { CniCommand } from '../../types.js';

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
  /** Whether the deadline killed it. */
  killed: boolean;
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

function collect(child: ChildProcess, started: number, deadline: NodeJS.Timeout | undefined, wasKilled: () => boolean): Promise<CallExit> {
  const stdout: Buffer[] = [];
  const stderr: Buffer[] = [];
  child.stdout!.on('data', (chunk: Buffer) => stdout.push(chunk));
  child.stderr!.on('data', (chunk: Buffer) => stderr.push(chunk));
  child.stdin!.on('error', () => {}); // a plugin may exit without reading stdin
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(deadline);
      const out = Buffer.concat(stdout).toString('utf8');
      resolve({ code, cniCode: code ? cniCodeOf(out) : undefined, stdout: out, stderr: Buffer.concat(stderr).toString('utf8'), killed: wasKilled(), ms: performance.now() - started });
    });
  });
}

/** Runs one command; `killAfterMs` kills it at that time if it has not ended. */
export function callPlugin(plugin: PluginUnderTest, command: CniCommand | '', stdin: string, call: CallEnv = {}, killAfterMs?: number): Promise<CallExit> {
  const started = performance.now();
  const child = plugin.host.spawn(plugin.path, [], { env: environment(plugin, command, call), stdio: ['pipe', 'pipe', 'pipe'] });
  let killed = false;
  const deadline = killAfterMs === undefined ? undefined : setTimeout(() => { killed = child.kill('SIGKILL'); }, killAfterMs);
  const exit = collect(child, started, deadline, () => killed);
  child.stdin!.end(stdin);
  return exit;
}

/** A call's failure in a line: its exit and what it printed. */
export function describeExit(exit: CallExit): string {
  if (exit.killed) return 'killed at the deadline';
  const said = (exit.stdout.trim() || exit.stderr.trim()).slice(0, 200);
  return `exit ${String(exit.code)}${said ? `: ${said}` : ''}`;
}
