// Who made a fixture or lab namespace, as its name records it:
// <pid>-t<start>-<random>, where <start> is the owner's start time in clock
// ticks after boot (/proc/<pid>/stat's 22nd field). A pid alone is not
// enough: the kernel hands a dead owner's pid to another process, which would
// keep the leftovers of a crashed run alive for as long as it runs. Names of
// older versions, <pid>-<random>, are judged by the pid alone.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';

/** The owner a namespace name records. */
export interface Owner {
  pid: number;
  /** Its start time, absent in names of older versions. */
  start?: string;
}

/** A process's start time as /proc shows it (undefined once it is gone). */
export function processStartTime(pid: number): string | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
  } catch {
    return undefined;
  }
  // The command name (field 2) may hold spaces and parentheses: count the fields after its last ')'.
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
}

let ownStart: string | null | undefined;

/**
 * What this process's namespaces are named after the prefix:
 * `<pid>-t<start>-<6 hex digits>` (`random` given: a stand-in, to check a
 * name's length). Without /proc, `<pid>-<random>`: judged by the pid alone.
 */
export function ownerStem(random = randomBytes(3).toString('hex')): string {
  ownStart ??= processStartTime(process.pid) ?? null;
  return ownStart === null ? `${process.pid}-${random}` : `${process.pid}-t${ownStart}-${random}`;
}

/**
 * The owner recorded in `name` after `prefix`, or undefined where the name is
 * not one of a fixture's or an unnamed lab's. A named lab's namespace
 * (`<prefix><lab>.<node>`) is never one: no node key has a dot.
 */
export function ownerOf(name: string, prefix: string): Owner | undefined {
  if (!name.startsWith(prefix) || name.includes('.', prefix.length)) return undefined;
  const match = /^(\d+)-(?:t(\d+)-)?[0-9a-f]+-/.exec(name.slice(prefix.length));
  if (!match) return undefined;
  return match[2] === undefined ? { pid: Number(match[1]) } : { pid: Number(match[1]), start: match[2] };
}

/**
 * Whether the owner still runs: its pid, started when the name says (a pid
 * taken over by another process is not it). Where /proc does not show the
 * pid (hidepid), a signal probe decides, which errs on the side of alive.
 */
export function ownerAlive({ pid, start }: Owner): boolean {
  const now = processStartTime(pid);
  if (now !== undefined) return start === undefined || now === start;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
