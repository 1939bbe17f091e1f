// What `netns exec` does once it has the namespace: the command runs as if the
// CLI had become it.
import type { NetNS } from '../netns.js';
import { exitLikeChild, forwardSignals } from './signal-forwarding.js';

export interface Ended {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/**
 * Runs the command in `ns` with the CLI's stdio, passing signals on while it
 * runs; if the CLI is SIGKILLed the command is too. Resolves with how it
 * ended; rejects only when it cannot start (ENOENT for a missing program),
 * with the spawn error.
 */
export function runChild(ns: NetNS, command: string, args: string[], options: { etc: boolean }): Promise<Ended> {
  return new Promise((resolve, reject) => {
    const child = ns.spawn(command, args, { stdio: 'inherit', etc: options.etc, parentDeathSignal: 'SIGKILL' });
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

/** As runChild, then ends the process as the command ended. */
export async function runForwarded(ns: NetNS, command: string, args: string[], options: { etc: boolean }): Promise<never> {
  const { code, signal } = await runChild(ns, command, args, options);
  return exitLikeChild(code, signal);
}
