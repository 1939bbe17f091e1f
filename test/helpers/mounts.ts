import { readFileSync } from 'node:fs';

/** Mount points (field 5 of /proc/self/mountinfo) equal to `path` or under it. */
export function mountsAt(path: string, { under = false } = {}): string[] {
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((line) => line.split(' ')[4] ?? '')
    .filter((point) => point === path || (under && point.startsWith(`${path}/`)));
}
