// `network.ip()` runs iproute2 (arguments go straight to execFile, never
// through a shell). The fixtures themselves build over netlink and need no `ip`.
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ErrorCodes, netnsError, toolMissing, type NetnsError } from '../core/errors.js';
import { NETNS_RUN_DIR } from '../core/names.js';

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

/** A namespace made under a name, as an exit hook may delete it: only while the name still holds it. */
export interface MadeNamespace {
  name: string;
  dev: number;
  inode: number;
}

/** Whether /run/netns/NAME still holds the namespace made there (not one made again under the name by someone else). */
function stillOurs({ name, dev, inode }: MadeNamespace): boolean {
  try {
    const now = statSync(join(NETNS_RUN_DIR, name));
    return now.dev === dev && now.ino === inode;
  } catch {
    return false;
  }
}

/**
 * For exit hooks, where nothing asynchronous runs any more: one short Node
 * child deletes the namespaces with this package's own deleteNamespace (the
 * unmount is the addon's, asynchronous; Node has no synchronous umount), so no
 * `ip` is needed. Where that module is not beside this one (a bundle), `ip
 * netns del` is the fallback. Whatever is already gone is fine; a name that
 * now holds another namespace is left alone.
 */
export function deleteNamespacesSync(made: readonly MadeNamespace[]): void {
  const names = made.filter(stillOurs).map(({ name }) => name);
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
