// Names in a lab, the `ip netns exec` way: the lab writes /etc/netns/<node's
// namespace name>/hosts for every node, which the exec helper binds over
// /etc/hosts for a command run in that node (lab exec, lab.spawn), so
// `ping h3` resolves. A folder is removed only when its hosts file carries
// the lab's first line, or when it is empty under a lab's own name: a
// /etc/netns folder holding anything the lab did not write is never touched.
import { mkdirSync, readdirSync, readFileSync, rmdirSync, unlinkSync, writeFileSync } from 'node:fs';
import { ErrorCodes, netnsError, type NetnsError } from '../../core/errors.js';
import type { LabPlan } from './plan.js';

/** Where `ip netns exec` looks for a namespace's own /etc files. */
export const ETC_NETNS = '/etc/netns';

/** The first line of every hosts file a lab writes: what marks its folder as the lab's to remove. */
const MARK = '# written by a netns lab; removed with the lab';

const LOCALHOST = ['127.0.0.1\tlocalhost', '::1\tlocalhost ip6-localhost ip6-loopback'];

/** One hosts file for every node: each host's and router's addresses, by node key, in plan order. */
export function hostsFileText(plan: LabPlan): string {
  const lines = [MARK, ...LOCALHOST];
  const ends = plan.links.flatMap((link) => [link.a, link.b]);
  for (const { key, kind } of plan.nodes) {
    if (kind === 'switch') continue; // a switch has no address
    for (const end of ends) if (end.node === key) for (const cidr of end.addresses) lines.push(`${cidr.split('/')[0]}\t${key}`);
  }
  return `${lines.join('\n')}\n`;
}

/**
 * Makes /etc/netns/NAME/hosts for each name, adding each name to `made` once
 * its folder is made. A folder already there is not the lab's, and is
 * refused rather than written into; a refused write says how to build
 * without names. Synchronous: see HostsFiles.
 */
function writeHostsFiles(plan: LabPlan, names: string[], made: string[]): void {
  const text = hostsFileText(plan);
  attempt(`mkdir ${ETC_NETNS}`, () => mkdirSync(ETC_NETNS, { recursive: true }));
  for (const name of names) {
    const dir = `${ETC_NETNS}/${name}`;
    attempt(`mkdir ${dir}`, () => mkdirSync(dir));
    made.push(name);
    attempt(`write ${dir}/hosts`, () => writeFileSync(`${dir}/hosts`, text));
  }
}

function attempt(what: string, write: () => void): void {
  try {
    write();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const hint = code === 'EEXIST' ? "it exists and is not this lab's: remove it" : (code ?? (error as Error).message);
    throw netnsError(ErrorCodes.FIXTURE, `${what} failed: ${hint} (or pass createLab { hosts: false })`, { cause: error });
  }
}

/**
 * A lab's hosts files, written in two halves while this thread would only
 * wait: one while the addon's threads make the namespaces, one while they
 * make the links. Each half is synchronous (a folder and a file per node:
 * 0.5 ms each on an ext4 /etc that has just freed many inodes, where libuv's
 * pool, its calls and their callbacks competing with the build's, cost more).
 * The first refusal ends the writing and is kept for the end of the build.
 */
export class HostsFiles {
  readonly #plan: LabPlan;
  readonly #halves: string[][];
  /** The first refusal, once one happened. */
  failure: NetnsError | undefined;
  /**
   * The names whose folder was made here. They are written while the
   * namespaces are made, so a name found taken meanwhile (someone else's
   * namespace) may have one too: the lab removes these as well as its
   * namespaces' own, or `ip netns exec` in that namespace would find the
   * lab's names for good.
   */
  readonly made: string[] = [];

  constructor(plan: LabPlan, names: string[]) {
    this.#plan = plan;
    const half = Math.ceil(names.length / 2);
    this.#halves = [names.slice(0, half), names.slice(half)];
  }

  /** Writes the next half; never throws. */
  readonly writeNext = (): void => {
    const names = this.#halves.shift();
    if (names === undefined || this.failure) return;
    try {
      writeHostsFiles(this.#plan, names, this.made);
    } catch (error) {
      this.failure = error as NetnsError;
    }
  };
}

/**
 * Removes /etc/netns/NAME if the lab made it: its hosts file, then the
 * folder unless someone put more in it. A folder with no hosts file goes only
 * when empty: what a lab killed between making the folder and writing its file
 * leaves (the caller knows the name for the lab's). Synchronous (it runs at
 * process exit too); never throws: what cannot be removed is left.
 */
export function removeHostsFolder(name: string): void {
  const dir = `${ETC_NETNS}/${name}`;
  try {
    if (removeLabHostsFile(`${dir}/hosts`)) rmdirSync(dir);
  } catch {
    // gone already, not ours, or no longer empty: left as it is
  }
}

/** Removes the hosts file at `path` if the lab wrote it; whether none is left there (removed, or never written). */
function removeLabHostsFile(path: string): boolean {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT';
  }
  if (!text.startsWith(`${MARK}\n`)) return false;
  unlinkSync(path);
  return true;
}

/** The folders of /etc/netns (none when it is missing or unreadable). */
export function hostsFolders(): string[] {
  try {
    return readdirSync(ETC_NETNS);
  } catch {
    return [];
  }
}

