// Whether uid 65534 (nobody), which a few tests run programs as (setpriv),
// can reach a file of this checkout: every folder on the way must let it pass
// (x) and the file itself be readable. A checkout under a 0700 home folder is
// not, and those tests would fail with a bare EACCES. Self-contained (no code
// under test): scripts/test-isolated.mjs checks before a run, the tests
// (test/helpers/nobody-access.ts) when they start such a program.
import { statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

const NOBODY = 65534;

// The permission bits that apply to nobody (ACLs aside): owner's, group's or others'.
function bitsForNobody(stat) {
  if (stat.uid === NOBODY) return (stat.mode >> 6) & 7;
  if (stat.gid === NOBODY) return (stat.mode >> 3) & 7;
  return stat.mode & 7;
}

/** Why nobody cannot reach `path` (one line naming the folder and the fix), or undefined if it can. */
export function nobodyCannotReach(path) {
  const target = resolve(path);
  const chain = [];
  for (let dir = dirname(target); ; dir = dirname(dir)) {
    chain.unshift(dir);
    if (dir === dirname(dir)) break;
  }
  for (const dir of chain) {
    const stat = statSync(dir);
    if ((bitsForNobody(stat) & 1) === 0) {
      return (
        `${target} cannot be reached by nobody (uid ${NOBODY}), which some tests run programs as: ${dir} is mode ` +
        `${(stat.mode & 0o7777).toString(8).padStart(4, '0')}. Fix: chmod o+x ${dir}, or move the checkout somewhere every user can enter (e.g. /srv)`
      );
    }
  }
  const stat = statSync(target);
  const needed = stat.isDirectory() ? 1 : 4;
  if ((bitsForNobody(stat) & needed) === 0) {
    return `${target} is not ${needed === 1 ? 'enterable' : 'readable'} by nobody (uid ${NOBODY}), which some tests run programs as. Fix: chmod o+${needed === 1 ? 'x' : 'r'} ${target}`;
  }
  return undefined;
}
