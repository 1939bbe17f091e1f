import { readFileSync } from 'node:fs';

interface Mount {
  id: string;
  parent: string;
  point: string;
  fields: string[];
}

function mounts(): Mount[] {
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const fields = line.split(' ');
      return { id: fields[0]!, parent: fields[1]!, point: fields[4]!, fields };
    });
}

/**
 * The mounts this process can reach by path. mountinfo also lists mounts a
 * later mount covers (a sandbox's tmpfs over /run hides the host's
 * /run/netns, which stays listed): a mount is hidden when a sibling (same
 * parent) sits on one of the folders above it, or its parent is hidden.
 */
function visibleMounts(): Mount[] {
  const all = mounts();
  const byId = new Map(all.map((mount) => [mount.id, mount]));
  const covered = (mount: Mount): boolean =>
    all.some((other) => other.parent === mount.parent && other !== mount && mount.point.startsWith(other.point === '/' ? '/' : `${other.point}/`));
  const visible = (mount: Mount, seen = new Set<string>()): boolean => {
    if (covered(mount)) return false;
    const parent = byId.get(mount.parent);
    if (parent === undefined || parent === mount || seen.has(mount.id)) return true;
    seen.add(mount.id);
    return visible(parent, seen);
  };
  return all.filter((mount) => visible(mount));
}

/** Mount points (field 5 of /proc/self/mountinfo) equal to `path` or under it, of the mounts reachable by path. */
export function mountsAt(path: string, { under = false } = {}): string[] {
  return visibleMounts()
    .map((mount) => mount.point)
    .filter((point) => point === path || (under && point.startsWith(`${path}/`)));
}

/** The propagation tags (shared:N, master:N, ...) of the mount at `path`, top one; null when nothing is mounted there. */
export function propagationAt(path: string): string[] | null {
  const fields = visibleMounts()
    .filter((mount) => mount.point === path)
    .at(-1)?.fields;
  return fields ? fields.slice(6, fields.indexOf('-')) : null;
}
