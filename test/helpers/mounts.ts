import { readFileSync } from 'node:fs';

/** Mount points (field 5 of /proc/self/mountinfo) equal to `path` or under it. */
export function mountsAt(path: string, { under = false } = {}): string[] {
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((line) => line.split(' ')[4] ?? '')
    .filter((point) => point === path || (under && point.startsWith(`${path}/`)));
}

/** The propagation tags (shared:N, master:N, ...) of the mount at `path`, top one; null when nothing is mounted there. */
export function propagationAt(path: string): string[] | null {
  const lines = readFileSync('/proc/self/mountinfo', 'utf8').split('\n').filter((line) => line.split(' ')[4] === path);
  const fields = lines.at(-1)?.split(' ');
  return fields ? fields.slice(6, fields.indexOf('-')) : null;
}
