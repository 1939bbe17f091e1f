// Fixture and lab namespaces are named PREFIX<pid>-t<start>-p<pidns>-<random>-<node>
// (see owner.ts); a leftover whose owner is gone belongs to a crashed run and
// may be removed. Namespaces of live owners, or with other names, are never touched.
import { ErrorCodes, netnsError } from '../core/errors.js';
import type { RunDirOption } from '../core/names.js';
import { deleteNamespace, listNamespaces } from '../lifecycle.js';
import { killOrphanedDaemons } from './lab/frr-orphans.js';
import { hostsFolders, removeHostsFolder } from './lab/hosts-file.js';
import { namesWithDirs, removeNodeDirs } from './lab/private-dirs.js';
import { DEFAULT_PREFIX, ownerAlive, ownerOf } from './owner.js';
import { fixtureRunDir } from './run-dir.js';


/** Whether `name` was made under `prefix` by an owner that is gone. */
function crashedRun(name: string, prefix: string): boolean {
  const owner = ownerOf(name, prefix);
  return owner !== undefined && owner.pid !== process.pid && !ownerAlive(owner);
}

/**
 * Deletes the namespaces createTestNetwork and createLab made under `prefix`
 * (default 'nsfix-') whose owner is gone (killed, SIGKILL included), and the
 * hosts folders of such a lab (/etc/netns/NAME): what crashed test runs left.
 * createLab runs it for its own prefix.
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
  const crashed = listNamespaces({ runDir }).map(({ name }) => name).filter((name) => crashedRun(name, prefix));
  // A lab's FRR daemons outlive a SIGKILLed owner and would hold the namespaces alive once unmounted.
  await killOrphanedDaemons(crashed.map((name) => `${runDir}/${name}`));
  const removed: string[] = [];
  for (const name of crashed) {
    // one it may not delete (EACCES: a user namespace's root in the real root's /run/netns) is left, and not reported
    if (await deleteNamespace(name, { runDir }).then(() => true, () => false)) removed.push(name);
  }
  // A lab's hosts folders (/etc/netns/NAME), found by themselves: a process killed between deleting a namespace and its folder leaves one alone.
  for (const name of hostsFolders()) if (crashedRun(name, prefix)) removeHostsFolder(name);
  // and its nodes' own directories (<tmpdir>/netns-dirs-NAME), likewise
  for (const name of namesWithDirs()) if (crashedRun(name, prefix)) removeNodeDirs(name);
  return removed;
}
