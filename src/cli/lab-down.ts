// `netns lab down NAME`, and the check it shares with the commands that work a
// lab: a namespace is the lab's only while it is the very one `up` made, so a
// name someone deleted and made again since is never deleted, entered or
// changed in the lab's name. Device and inode alone do not tell: the kernel
// hands a freed namespace's inode number to the next one (measured: del, add,
// same inode). The nsfs inode's ctime, set when it is made and kept while the
// bind mount pins it, does.
import { statSync } from 'node:fs';
import { ErrorCodes, fromNodeError, netnsError } from '../core/errors.js';
import { resolveNamespacePath } from '../core/names.js';
import { inspectLab, isDamaged, type NsStamp, removeLab, type StoredLab, underLabLock } from './lab-state.js';

/** The namespace of that name now (what its bind mount shows), or undefined when there is none. */
export function stampOf(ns: string): NsStamp | undefined {
  try {
    const stat = statSync(resolveNamespacePath(ns), { bigint: true });
    return { dev: Number(stat.dev), inode: Number(stat.ino), made: String(stat.ctimeNs) };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw fromNodeError(error, `(looking at namespace ${ns})`);
  }
}

/** The lab's namespaces that exist but are not the ones `up` made (none while it was still building: it recorded none). */
export function replacedNamespaces(lab: StoredLab): string[] {
  const replaced: string[] = [];
  for (const [key, made] of Object.entries(lab.identities ?? {})) {
    const ns = lab.state.names[key]!;
    const now = stampOf(ns);
    if (now !== undefined && (now.dev !== made.dev || now.inode !== made.inode || now.made !== made.made)) replaced.push(ns);
  }
  return replaced;
}

/** Of a lab whose `up` died (no identities), the namespaces that were there before that `up` began: never its own. */
function olderThanUp(lab: StoredLab): string[] {
  if (!lab.building || lab.started === undefined) return [];
  return Object.values(lab.state.names).filter((ns) => {
    const now = stampOf(ns);
    return now !== undefined && BigInt(now.made) < BigInt(lab.started!);
  });
}

/** Refuses (ERR_NETNS_FIXTURE) to work a lab one of whose namespaces is no longer the one `up` made. */
export function assertNotReplaced(lab: StoredLab): void {
  const replaced = replacedNamespaces(lab);
  if (replaced.length > 0) {
    throw netnsError(ErrorCodes.FIXTURE, `lab ${lab.name}: ${replaced.join(', ')} replaced since up (not the namespace the lab made): netns lab down ${lab.name}`);
  }
}

async function deleteIfThere(ns: string): Promise<void> {
  const { deleteNamespace } = await import('../lifecycle.js');
  await deleteNamespace(ns).catch((error: { code?: string }) => {
    if (error.code !== 'ENOENT') throw error;
  });
}

/** Deletes the lab's namespaces that are still the ones it made, with their hosts folders and own directories, then its state file; says what it left and why. */
export async function down(name: string): Promise<void> {
  const said = await underLabLock(name, async () => {
    const lab = await inspectLab(name);
    if (isDamaged(lab)) {
      removeLab(name);
      return [`lab ${name}: its state file was damaged (${lab.damaged}): removed it, deleted no namespace`];
    }
    const replaced = new Set([...replacedNamespaces(lab), ...olderThanUp(lab)]);
    const { removeHostsFolder } = await import('../testing/lab/hosts-file.js');
    const { removeNodeDirs } = await import('../testing/lab/private-dirs.js');
    for (const ns of Object.values(lab.state.names)) {
      if (replaced.has(ns)) continue;
      await deleteIfThere(ns);
      removeHostsFolder(ns); // its names (/etc/netns/NAME/hosts), if up wrote them
      removeNodeDirs(ns); // its nodes' own directories, if the spec gave any
    }
    removeLab(name);
    return [...replaced].map((ns) => `lab ${name}: left ${ns}: not the namespace the lab made (replaced since up, or there before it)`);
  });
  if (said.length > 0) process.stdout.write(`${said.join('\n')}\n`);
}
