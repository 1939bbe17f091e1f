// What `netns exec` does once it has the namespace: the command runs as if the
// CLI had become it.
import type { NetNS } from '../netns.js';
import { exitLikeChild, forwardSignals } from './signal-forwarding.js';

/**
 * Runs the command in `ns` with the CLI's stdio, passes signals on, and ends
 * the process as the command ended; if the CLI is SIGKILLed the command is
 * too. Rejects only when the command cannot start (ENOENT for a missing
 * program), with the spawn error.
 */
export function runForwarded(ns: NetNS, command: string, args: string[], options: { etc: boolean }): Promise<never> {
  return new Promise((_resolve, reject) => {
    const child = ns.spawn(command, args, { stdio: 'inherit', etc: options.etc, parentDeathSignal: 'SIGKILL' });
    const undo = forwardSignals(child);
    child.once('error', (error) => {
      undo();
      reject(error);
    });
    child.once('exit', (code, signal) => {
      undo();
      exitLikeChild(code, signal);
    });
  });
}
