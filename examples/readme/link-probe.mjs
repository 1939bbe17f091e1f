// A worker module: ordinary module code, bundled or compiled as you like.
import { readFileSync } from 'node:fs';

const started = Date.now(); // module state: made once per pool thread

export function interfaces(prefix) {
  const lines = readFileSync('/proc/thread-self/net/dev', 'utf8').split('\n').slice(2);
  return lines.map((line) => line.split(':')[0].trim()).filter((name) => name && name.startsWith(prefix));
}

export const threadAgeMs = () => Date.now() - started;
