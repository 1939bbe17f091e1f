// /proc/<pid>/stat, whose second field is the command name in parentheses: a
// name may itself hold spaces and parentheses, so the fields are counted from
// the last ')'.
import { fs } from './builtins.js';

/**
 * The fields of /proc/<pid>/stat after the command name: [0] is field 3 of
 * proc(5) (the state), [2] the process group, [5] the terminal's foreground
 * group, [19] the start time. Undefined once the process is gone, or without /proc.
 */
export function procStatFields(pid: number | 'self'): string[] | undefined {
  let stat: string;
  try {
    stat = fs().readFileSync(`/proc/${pid}/stat`, 'latin1');
  } catch {
    return undefined;
  }
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}
