// What the process looks like from /proc: namespace of each thread, fd and thread counts.
import { readdirSync, readlinkSync, statSync } from 'node:fs';

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

export function threadCount(): number {
  return readdirSync('/proc/self/task').length;
}
