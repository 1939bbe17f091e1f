// What `netns exec` and `netns sandbox` do once they can start the command:
// it runs as if the CLI had become it.
import type { ChildProcess } from 'node:child_process';
import type { NetNS } from '../netns.js';
import type { PrivateDir } from '../io/spawn.js';
import { exitLikeChild, forwardSignals } from './signal-forwarding.js';

export interface Ended {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/**
 * Starts the command (`start` gives it the CLI's stdio), passing signals on
 * while it runs. Resolves with how it ended; rejects only when it cannot
 * start (ENOENT for a missing program, a sandbox the kernel refuses), with
 * the spawn error.
 */
export function forwardUntilExit(start: () => ChildProcess): Promise<Ended> {
  return new Promise((resolve, reject) => {
    const child = start();
    const undo = forwardSignals(child);
    child.once('error', (error) => {
      undo();
      reject(error);
    });
    child.once('exit', (code, signal) => {
      undo();
      resolve({ code, signal });
    });
  });
}

/** How the command is started: as `ip netns exec` (etc), under a hostname of its own. */
export interface ChildSetting {
  etc: boolean;
  hostname?: string;
  /** A lab node's own directories (`netns lab exec`). */
  dirs?: PrivateDir[];
}

/** Runs the command in `ns` with the CLI's stdio; if the CLI is SIGKILLed the command is too. */
export function runChild(ns: NetNS, command: string, args: string[], options: ChildSetting): Promise<Ended> {
  return forwardUntilExit(() => ns.spawn(command, args, { stdio: 'inherit', ...options, parentDeathSignal: 'SIGKILL' }));
}

/** As runChild, then ends the process as the command ended. */
export async function runForwarded(ns: NetNS, command: string, args: string[], options: ChildSetting): Promise<never> {
  const { code, signal } = await runChild(ns, command, args, options);
  return exitLikeChild(code, signal);
}
