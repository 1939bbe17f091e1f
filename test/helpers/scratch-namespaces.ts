// Namespaces a test file makes under its own unique prefix, and `ip` run
// inside them (to compare with what the package reports, or to make things
// the package then reads). removeAll() in afterEach deletes them.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { NetNS } from '../../dist/index.js';

export const nsName = (ns: NetNS): string => ns.path.slice('/run/netns/'.length);

// `any`: ip prints a different shape for each kind of object.
export const ipJson = (ns: NetNS, ...args: string[]): Record<string, any>[] =>
  JSON.parse(execFileSync('ip', ['-n', nsName(ns), '-j', ...args], { encoding: 'utf8' }) || '[]');

export const ip = (ns: NetNS, ...args: string[]): void => void execFileSync('ip', ['-n', nsName(ns), ...args]);

export interface ScratchNamespaces {
  create(): Promise<NetNS>;
  removeAll(): Promise<void>;
}

/** `tag` names the test file's namespaces: <tag><random>-<pid>-<n>. */
export function scratchNamespaces(tag: string): ScratchNamespaces {
  const prefix = `${tag}${randomBytes(2).toString('hex')}-${process.pid}-`;
  let made: NetNS[] = [];
  let counter = 0;
  return {
    async create() {
      const ns = await NetNS.create(`${prefix}${counter++}`);
      made.push(ns);
      return ns;
    },
    async removeAll() {
      for (const ns of made) {
        ns.close();
        await NetNS.delete(nsName(ns)).catch(() => {});
      }
      made = [];
    },
  };
}
