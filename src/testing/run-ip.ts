// `network.ip()` runs iproute2 (arguments go straight to the command, never
// through a shell). The fixtures themselves build over netlink and need no `ip`.
import { execFileSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ErrorCodes, netnsError, toolMissing, type NetnsError } from '../core/errors.js';
import { NETNS_RUN_DIR } from '../core/names.js';
import type { NetNS } from '../netns.js';

/** The one error for a missing `ip`, naming the package to install. */
export function ipMissing(cause?: unknown): NetnsError {
  return toolMissing(ErrorCodes.IP_MISSING, 'ip', 'iproute2', cause);
}

/**
 * `ip ...args` inside `ns`, entered by its handle rather than `ip -n NAME`:
 * ip looks names up in /run/netns only, and a fixture's namespace may be
 * named in another run directory. With `etc` it is what `ip -n` does: /sys
 * remounted for the namespace, /etc/netns/NAME bound over /etc.
 */
export async function runIpIn(ns: NetNS, args: string[]): Promise<string> {
  try {
    return (await ns.execFile('ip', args, { etc: true })).stdout;
  } catch (error) {
    const { code, syscall, stderr } = error as NetnsError & { stderr?: string };
    if (code === 'ENOENT' && syscall === 'spawn ip') throw ipMissing(error);
    const detail = stderr?.trim() || (error as Error).message;
    throw netnsError(ErrorCodes.FIXTURE, `ip ${args.join(' ')} in ${ns.path} failed: ${detail}`, { cause: error });
  }
}

const LIFECYCLE = fileURLToPath(new URL('../lifecycle.js', import.meta.url));

/** A namespace made under a name, as an exit hook may delete it: only while the name still holds it. */
export interface MadeNamespace {
  name: string;
  dev: number;
  inode: number;
}

/** Whether RUN_DIR/NAME still holds the namespace made there (not one made again under the name by someone else). */
function stillOurs({ name, dev, inode }: MadeNamespace, runDir: string): boolean {
  try {
    const now = statSync(join(runDir, name));
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
 * netns del` is the fallback, for /run/netns only (ip knows no other run
 * directory). Whatever is already gone is fine; a name that now holds another
 * namespace is left alone.
 */
export function deleteNamespacesSync(made: readonly MadeNamespace[], runDir = NETNS_RUN_DIR): void {
  const names = made.filter((ns) => stillOurs(ns, runDir)).map(({ name }) => name);
  if (names.length === 0) return;
  if (existsSync(LIFECYCLE)) {
    const script = `const { deleteNamespace } = await import(${JSON.stringify(new URL('../lifecycle.js', import.meta.url).href)});
      for (const name of ${JSON.stringify(names)}) await deleteNamespace(name, { runDir: ${JSON.stringify(runDir)} }).catch(() => {});`;
    try {
      execFileSync(process.execPath, ['--input-type=module', '-e', script], { stdio: 'ignore', timeout: 10_000 });
      return;
    } catch {
      // fall through to ip
    }
  }
  if (runDir !== NETNS_RUN_DIR) return; // left for sweep(prefix, { runDir })
  for (const name of names) {
    try {
      execFileSync('ip', ['netns', 'del', name], { stdio: 'ignore' });
    } catch {
      // already gone, or no ip
    }
  }
}
