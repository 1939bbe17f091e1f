// FRR daemons whose lab's owner was killed (SIGKILL: no exit hook ran). They
// drop to user frr at start, which clears a parent-death signal, so nothing
// stops them, and each holds its router's namespace alive after sweep has
// unmounted it. sweep stops them: a process counts as one only when it runs
// in the namespace being swept and its command line reads its configuration
// from a lab's daemon directory (<tmpdir>/netns-frr-XXXXXX/<router>/), so
// nothing else running there (a user's shell) is touched. A lab's directory
// holds every router's files, so it is removed only once the daemons of all
// its routers have ended: one still running writes on into its folder.
import { readdirSync, readFileSync, readlinkSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname } from 'node:path';
import { untilEnded } from './process-end.js';

/** The prefix of a lab's daemon directory, as createLab makes it with mkdtemp. */
export const FRR_DIR_PREFIX = 'netns-frr-';

/** The lab directory (<tmpdir>/netns-frr-XXXXXX) a daemon's `-f <dir>/<router>/<file>` names, if any. */
function labDirOf(args: string[]): string | undefined {
  const at = args.indexOf('-f');
  const config = at < 0 ? undefined : args[at + 1];
  if (config === undefined) return undefined;
  const labDir = dirname(dirname(config));
  return dirname(labDir) === tmpdir() && labDir.slice(tmpdir().length + 1).startsWith(FRR_DIR_PREFIX) ? labDir : undefined;
}

/** The processes in the network namespace `inode`, with their arguments; those gone meanwhile are left out. */
function processesIn(inode: number): { pid: number; args: string[] }[] {
  const found: { pid: number; args: string[] }[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readlinkSync(`/proc/${entry}/ns/net`) !== `net:[${inode}]`) continue;
      found.push({ pid: Number(entry), args: readFileSync(`/proc/${entry}/cmdline`, 'latin1').split('\0') });
    } catch {
      // gone, or not ours to read
    }
  }
  return found;
}

/** The inode of the namespace mounted at `path` (undefined once it is gone). */
function namespaceInode(path: string): number | undefined {
  try {
    return statSync(path).ino;
  } catch {
    return undefined;
  }
}

/**
 * Kills the FRR daemons of labs running in the namespaces mounted at `paths`,
 * waits for them to die, and removes their labs' directories (one still busy
 * after the wait is left).
 */
export async function killOrphanedDaemons(paths: string[]): Promise<void> {
  const labDirs = new Set<string>();
  const killed: number[] = [];
  for (const path of paths) {
    const inode = namespaceInode(path);
    if (inode === undefined) continue;
    for (const { pid, args } of processesIn(inode)) {
      const labDir = labDirOf(args);
      if (labDir === undefined) continue;
      try {
        process.kill(pid, 'SIGKILL');
        killed.push(pid);
      } catch {
        // gone already
      }
      labDirs.add(labDir);
    }
  }
  await untilEnded(killed);
  for (const labDir of labDirs) {
    try {
      rmSync(labDir, { recursive: true, force: true });
    } catch {
      // a daemon that outlived the wait still writes there
    }
  }
}
