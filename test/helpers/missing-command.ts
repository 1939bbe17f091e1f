// What Node's own spawn says of a command found in no PATH folder: ENOENT, or
// EACCES when some PATH folder cannot be searched (execvp remembers that), as
// when the suite runs as a user whose PATH names another user's home (root's
// /root/.cargo/bin, in a rootless sandbox). The package must say what Node says.
import { spawnSync } from 'node:child_process';

/** The code and errno Node's spawn gives for `command` on this process's PATH. */
export function nodeSpawnError(command: string): { code: string; errno: number } {
  const { error } = spawnSync(command, [], { stdio: 'ignore' });
  const { code, errno } = error as NodeJS.ErrnoException;
  return { code: code!, errno: errno! };
}
