// The fixtures drive iproute2 for links and addresses; arguments go straight
// to execFile, never through a shell.
import { execFile, execFileSync } from 'node:child_process';

export function runIp(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('ip', args, { encoding: 'utf8' }, (error, stdout, stderr) => {
      if (error) reject(Object.assign(new Error(`ip ${args.join(' ')} failed: ${stderr.trim() || error.message}`), { code: 'ERR_NETNS_FIXTURE' }));
      else resolve(stdout);
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
