// `network.ip()` runs iproute2 (arguments go straight to execFile, never
// through a shell). The fixtures themselves build over netlink and need no `ip`.
import { execFile, execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
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

const LIFECYCLE = fileURLToPath(new URL('../lifecycle.js', import.meta.url));

/**
 * For exit hooks, where nothing asynchronous runs any more: one short Node
 * child deletes the namespaces with this package's own deleteNamespace (the
 * unmount is the addon's, asynchronous; Node has no synchronous umount), so no
 * `ip` is needed. Where that module is not beside this one (a bundle), `ip
 * netns del` is the fallback. Whatever is already gone is fine.
 */
export function deleteNamespacesSync(names: readonly string[]): void {
  if (names.length === 0) return;
  if (existsSync(LIFECYCLE)) {
    const script = `const { deleteNamespace } = await import(${JSON.stringify(new URL('../lifecycle.js', import.meta.url).href)});
      for (const name of ${JSON.stringify(names)}) await deleteNamespace(name).catch(() => {});`;
    try {
      execFileSync(process.execPath, ['--input-type=module', '-e', script], { stdio: 'ignore', timeout: 10_000 });
      return;
    } catch {
      // fall through to ip
    }
  }
  for (const name of names) {
    try {
      execFileSync('ip', ['netns', 'del', name], { stdio: 'ignore' });
    } catch {
      // already gone, or no ip
    }
  }
}
