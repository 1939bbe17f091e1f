// What the process looks like from /proc: namespace of each thread, fd and thread counts, run state.
import { readdirSync, readFileSync, readlinkSync, statSync } from 'node:fs';

export function inodeOf(path: string): number {
  return statSync(path).ino;
}

const PF_EXITING = 0x4; // include/linux/sched.h: set when the thread enters do_exit

/**
 * Every thread of this process whose network namespace is not `home`, leaving
 * out threads already exiting: pthread_join (and so a Worker's 'exit' event)
 * returns when the kernel clears the thread's tid, which do_exit does before
 * it drops the thread's namespaces, so a joined thread may still show one.
 */
export function threadsAwayFrom(home: number): string[] {
  const away: string[] = [];
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      const link = readlinkSync(`/proc/self/task/${tid}/ns/net`);
      if (link !== `net:[${home}]` && !exiting(tid)) away.push(`${tid}: ${link}`);
    } catch {
      // the thread exited while we looked
    }
  }
  return away;
}

function exiting(tid: string): boolean {
  const flags = Number(statFields(`/proc/self/task/${tid}/stat`)[6]);
  return (flags & PF_EXITING) !== 0;
}

export function openFdCount(): number {
  return readdirSync('/proc/self/fd').length;
}

/** This process's open sockets (netlink, packet, TCP...): what a lab or a capture holds, unlike the pool's namespace descriptors, which grow with the pool. */
export function socketCount(): number {
  return openSockets().size;
}

/**
 * This process's open sockets by identity (`socket:[inode]`): which ones a
 * piece of work opened and whether those are gone, whatever other work's
 * sockets (freed in the background, say) do meanwhile, which a count cannot tell.
 */
export function openSockets(): Set<string> {
  const links = new Set<string>();
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      const link = readlinkSync(`/proc/self/fd/${fd}`);
      if (link.startsWith('socket:')) links.add(link);
    } catch {
      // closed while we looked
    }
  }
  return links;
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
function statFields(statPath: string): string[] {
  const stat = readFileSync(statPath, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** The state letter: R, S, T (stopped), Z (zombie), ... */
export function stateOf(pid: number): string {
  return statFields(`/proc/${pid}/stat`)[0]!;
}

export function parentOf(pid: number): number {
  return Number(statFields(`/proc/${pid}/stat`)[1]);
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
