// Namespaces made for one test file with `ip netns add`, under a prefix unique
// to this run, and removed afterwards whatever happened.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readlinkSync, statSync } from 'node:fs';

export const RUN_PREFIX = `nstest-${process.pid}-${randomBytes(3).toString('hex')}`;
let counter = 0;
const made = new Set<string>();

export function ip(...args: string[]): string {
  return execFileSync('ip', args, { encoding: 'utf8' });
}

export function addNamespace(): string {
  const name = `${RUN_PREFIX}-${counter++}`;
  ip('netns', 'add', name);
  made.add(name);
  ip('-n', name, 'link', 'set', 'lo', 'up');
  return name;
}

export function removeNamespaces(): void {
  for (const name of made) {
    try {
      ip('netns', 'del', name);
    } catch {
      // already gone
    }
  }
  made.clear();
}

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

/** A veth pair named veth0 on both sides, with addresses (CIDR), both ends up. */
export function linkPair(a: string, b: string, addressA: string, addressB: string): void {
  ip('-n', a, 'link', 'add', 'veth0', 'type', 'veth', 'peer', 'name', 'veth0', 'netns', b);
  ip('-n', a, 'addr', 'add', addressA, 'dev', 'veth0');
  ip('-n', b, 'addr', 'add', addressB, 'dev', 'veth0');
  ip('-n', a, 'link', 'set', 'veth0', 'up');
  ip('-n', b, 'link', 'set', 'veth0', 'up');
}
