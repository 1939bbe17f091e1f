// A run directory of a test's own under /tmp, so the namespaces made there
// stay out of /run/netns. A create makes it a shared mount point, as `ip netns
// add` makes /run/netns; remove() deletes what is left in it, unmounts it and
// removes it, and says if anything stays mounted.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { NetNS } from '../../dist/index.js';
import { mountsAt } from './mounts.js';

export interface ScratchRunDir {
  readonly dir: string;
  remove(): Promise<void>;
}

/** `prefix` names the directory (e.g. nslife2-<pid>-). */
export function scratchRunDir(prefix: string): ScratchRunDir {
  const dir = mkdtempSync(`/tmp/${prefix}`);
  return {
    dir,
    async remove() {
      for (const name of readdirSync(dir)) await NetNS.delete(name, { runDir: dir }).catch(() => {});
      // lazy: detaches anything still mounted below it too
      while (mountsAt(dir).length > 0) execFileSync('umount', ['-l', dir]);
      rmSync(dir, { recursive: true, force: true });
      const left = mountsAt(dir, { under: true });
      if (left.length > 0) throw new Error(`still mounted: ${left.join(', ')}`);
    },
  };
}
