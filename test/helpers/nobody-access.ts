// For a test that runs a program of this checkout as nobody (setpriv
// --reuid=65534): fails first with what is wrong and how to fix it when the
// checkout is where nobody cannot reach (a parent folder 0700), rather than
// with the program's bare EACCES. Never a skip: that would hide it.
import { nobodyCannotReach } from '../../scripts/nobody-access.mjs';

/** Throws the reason nobody cannot reach `path`, if it cannot. */
export function assertNobodyCanReach(path: string): void {
  const problem = nobodyCannotReach(path);
  if (problem !== undefined) throw new Error(problem);
}
