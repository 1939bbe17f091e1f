// Who made a fixture or lab namespace, as its name records it:
// <pid>-t<start>-p<pidns>-<random>, where <start> is the owner's start time in
// clock ticks after boot (/proc/<pid>/stat's 22nd field) and <pidns> the inode
// of its PID namespace. A pid alone is not enough: the kernel hands a dead
// owner's pid to another process, which would keep the leftovers of a crashed
// run alive for as long as it runs. Nor is a pid of another PID namespace (a
// container sharing /run/netns) one this process can look up: its owner is
// never judged from here. Names of older versions, <pid>-[t<start>-]<random>,
// are judged as if made in this PID namespace.
import { randomBytes } from 'node:crypto';
import { statSync } from 'node:fs';
import { procStatFields } from '../core/proc-stat.js';

/** The prefix of fixture and lab namespace names when none is given. */
export const DEFAULT_PREFIX = 'nsfix-';

/** The owner a namespace name records. */
export interface Owner {
  pid: number;
  /** Its start time, absent in names of older versions. */
  start?: string;
  /** The inode of its PID namespace, absent in names of older versions. */
  pidns?: string;
}

/** A process's start time as /proc shows it (undefined once it is gone). */
export function processStartTime(pid: number): string | undefined {
  return procStatFields(pid)?.[19];
}

/** The inode of this process's PID namespace (undefined without /proc). */
function ownPidNamespace(): string | undefined {
  try {
    return String(statSync('/proc/self/ns/pid').ino);
  } catch {
    return undefined;
  }
}

let ownIdentity: string | null | undefined;

/**
 * What this process's namespaces are named after the prefix:
 * `<pid>-t<start>-p<pidns>-<6 hex digits>` (`random` given: a stand-in, to
 * check a name's length). Without /proc, `<pid>-<random>`: judged by the pid alone.
 */
export function ownerStem(random = randomBytes(3).toString('hex')): string {
  if (ownIdentity === undefined) {
    const start = processStartTime(process.pid);
    const pidns = ownPidNamespace();
    ownIdentity = start === undefined || pidns === undefined ? null : `t${start}-p${pidns}-`;
  }
  return `${process.pid}-${ownIdentity ?? ''}${random}`;
}

/**
 * The owner recorded in `name` after `prefix`, or undefined where the name is
 * not one of a fixture's or an unnamed lab's. A named lab's namespace
 * (`<prefix><lab>.<node>`) is never one: no node key has a dot.
 */
export function ownerOf(name: string, prefix: string): Owner | undefined {
  if (!name.startsWith(prefix) || name.includes('.', prefix.length)) return undefined;
  const match = /^(\d+)-(?:t(\d+)-(?:p(\d+)-)?)?[0-9a-f]+-/.exec(name.slice(prefix.length));
  if (!match) return undefined;
  const [, pid, start, pidns] = match;
  return { pid: Number(pid), ...(start === undefined ? {} : { start }), ...(pidns === undefined ? {} : { pidns }) };
}

/**
 * Whether the owner still runs: its pid, started when the name says (a pid
 * taken over by another process is not it). Where /proc does not show the
 * pid (hidepid), a signal probe decides, which errs on the side of alive; an
 * owner in another PID namespace is taken for alive.
 */
export function ownerAlive({ pid, start, pidns }: Owner): boolean {
  if (pidns !== undefined && pidns !== ownPidNamespace()) return true;
  const now = processStartTime(pid);
  if (now !== undefined) return start === undefined || now === start;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
