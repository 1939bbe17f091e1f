// The fixtures drive iproute2 for links and addresses; arguments go straight
// to execFile, never through a shell.
import { execFile, execFileSync } from 'node:child_process';
import { ErrorCodes, netnsError, toolMissing, type NetnsError } from '../core/errors.js';

/** The one error for a missing `ip`, naming the package to install. */
export function ipMissing(cause?: unknown): NetnsError {
  return toolMissing(ErrorCodes.IP_MISSING, 'ip', 'iproute2', cause);
}

export function runIp(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('ip', args, { encoding: 'utf8' }, (error, stdout, stderr) => {
      if (!error) resolve(stdout);
      else if ((error as NodeJS.ErrnoException).code === 'ENOENT') reject(ipMissing(error));
      else reject(netnsError(ErrorCodes.FIXTURE, `ip ${args.join(' ')} failed: ${stderr.trim() || error.message}`, { cause: error }));
    });
  });
}

/** For exit hooks, where nothing asynchronous runs any more. */
export function deleteNamespaceSync(name: string): void {
  try {
    execFileSync('ip', ['netns', 'del', name], { stdio: 'ignore' });
  } catch {
    // already gone
  }
}
