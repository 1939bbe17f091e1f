// Fixture namespaces are named PREFIX<pid>-<random>-<host>; a leftover whose
// creating process is gone belongs to a crashed run and may be removed.
// Namespaces of live processes, or with other names, are never touched.
import { ErrorCodes, netnsError } from '../core/errors.js';
import type { RunDirOption } from '../core/names.js';
import { deleteNamespace, listNamespaces } from '../lifecycle.js';
import { hostsFolders, removeHostsFolder } from './lab/hosts-file.js';
import { fixtureRunDir } from './run-dir.js';

export const DEFAULT_PREFIX = 'nsfix-';

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The pid that created a fixture namespace, or undefined if the name is not one of ours. */
export function creatorPid(name: string, prefix: string): number | undefined {
  if (!name.startsWith(prefix)) return undefined;
  const match = /^(\d+)-[0-9a-f]+-/.exec(name.slice(prefix.length));
  return match ? Number(match[1]) : undefined;
}

/** Whether `name` was made under `prefix` by a process that is gone. */
function crashedRun(name: string, prefix: string): boolean {
  const pid = creatorPid(name, prefix);
  return pid !== undefined && pid !== process.pid && !processAlive(pid);
}

/**
 * Deletes the namespaces createTestNetwork and createLab made under `prefix` (default
 * 'nsfix-') whose creating process is gone, and the hosts folders of such a
 * lab (/etc/netns/NAME): what crashed test runs left.
 * Namespaces of live processes, and names it did not make, are never touched.
 * `runDir` is the run directory the networks were made in (as given to
 * createTestNetwork or createLab; default /run/netns). Async; resolves with the
 * names it deleted (one it could not delete is left, unreported);
 * ERR_NETNS_INVALID_ARG for a bad prefix or runDir, or an unknown option. Run
 * it before a suite.
 */
export async function sweep(prefix = DEFAULT_PREFIX, options?: RunDirOption): Promise<string[]> {
  if (typeof prefix !== 'string') throw netnsError(ErrorCodes.INVALID_ARG, `prefix must be a string such as '${DEFAULT_PREFIX}', got ${typeof prefix}`);
  const runDir = fixtureRunDir(options, 'sweep options');
  const removed: string[] = [];
  for (const { name } of listNamespaces({ runDir })) {
    if (!crashedRun(name, prefix)) continue;
    // one it may not delete (EACCES: a user namespace's root in the real root's /run/netns) is left, and not reported
    if (await deleteNamespace(name, { runDir }).then(() => true, () => false)) removed.push(name);
  }
  // A lab's hosts folders (/etc/netns/NAME), found by themselves: a process killed between deleting a namespace and its folder leaves one alone.
  for (const name of hostsFolders()) if (crashedRun(name, prefix)) removeHostsFolder(name);
  return removed;
}
