// What the process looks like from /proc: namespace of each thread, fd and thread counts, run state.
import { readdirSync, readFileSync, readlinkSync, statSync } from 'node:fs';

export function inodeOf(path: string): number {
  return statSync(path).ino;
}

/** Every thread of this process whose network namespace is not `home`. */
export function threadsAwayFrom(home: number): string[] {
  const away: string[] = [];
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      const link = readlinkSync(`/proc/self/task/${tid}/ns/net`);
      if (link !== `net:[${home}]`) away.push(`${tid}: ${link}`);
    } catch {
      // the thread exited while we looked
    }
  }
  return away;
}

export function openFdCount(): number {
  return readdirSync('/proc/self/fd').length;
}

/** This process's descriptors whose link reads `target` (e.g. 'anon_inode:inotify'): a count that other work's closes cannot move. */
export function fdCountOf(target: string): number {
  return readdirSync('/proc/self/fd').filter((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`) === target;
    } catch {
      return false; // closed while we looked
    }
  }).length;
}

export function threadCount(): number {
  return readdirSync('/proc/self/task').length;
}

/** Fields of /proc/PID/stat from the state on, read after the command name (which may hold spaces and parentheses). */
function statFields(pid: number): string[] {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** The state letter: R, S, T (stopped), Z (zombie), ... */
export function stateOf(pid: number): string {
  return statFields(pid)[0]!;
}

export function parentOf(pid: number): number {
  return Number(statFields(pid)[1]);
}

/**
 * Resolves once `pid` is in `state`. No event tells a stop to anyone but the
 * parent (Node's child_process has no WUNTRACED), so this polls, bounded.
 */
export async function untilState(pid: number, state: string, timeoutMs = 10_000): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; stateOf(pid) !== state; ) {
    if (Date.now() > deadline) throw new Error(`process ${pid} is ${stateOf(pid)}, not ${state}, after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
