// Where `netns lab` keeps the labs it brought up: one JSON file per lab in
// /run/netns-lab (NETNS_LAB_DIR overrides), written before the lab is built
// (so `down` finds what a killed `up` left) and replaced atomically after
// every change. /run is a tmpfs: a reboot forgets the labs with their namespaces.
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ErrorCodes, netnsError } from '../core/errors.js';
import type { LabState } from '../testing/lab/lab.js';

/** The state file's contents: the lab's state, and whether it was still being built. */
export interface StoredLab {
  name: string;
  /** The file it was brought up from. */
  file: string;
  /** true from before the build until it finished: a lab `up` never completed. */
  building: boolean;
  state: LabState;
}

const NAME = /^[A-Za-z0-9_-]{1,32}$/;

export function labDir(): string {
  return process.env.NETNS_LAB_DIR || '/run/netns-lab';
}

function pathOf(name: string): string {
  if (!NAME.test(name)) throw netnsError(ErrorCodes.INVALID_ARG, `a lab name must match ${NAME}, got ${JSON.stringify(name)}`);
  return join(labDir(), `${name}.json`);
}

/** Writes the lab's file whole (a temporary file renamed over it): a reader never sees half of one. */
export function saveLab(lab: StoredLab): void {
  const path = pathOf(lab.name);
  mkdirSync(labDir(), { recursive: true, mode: 0o755 });
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(lab, null, 2)}\n`, { mode: 0o644 });
  renameSync(temporary, path);
}

/** The lab of that name; ENOENT (coded, naming the labs that are up) when there is none. */
export function loadLab(name: string): StoredLab {
  try {
    return JSON.parse(readFileSync(pathOf(name), 'utf8')) as StoredLab;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    const up = labNames();
    throw netnsError('ENOENT', `no lab ${name} is up (${up.length === 0 ? 'none is' : `up: ${up.join(', ')}`})`);
  }
}

/** Whether a lab of that name has a state file. */
export function labExists(name: string): boolean {
  try {
    readFileSync(pathOf(name));
    return true;
  } catch {
    return false;
  }
}

export function removeLab(name: string): void {
  rmSync(pathOf(name), { force: true });
}

/** The names of the labs that are up, sorted. */
export function labNames(): string[] {
  try {
    return readdirSync(labDir())
      .filter((file) => file.endsWith('.json'))
      .map((file) => file.slice(0, -'.json'.length))
      .filter((name) => NAME.test(name))
      .sort();
  } catch {
    return [];
  }
}

/** The lab a command means: the one named, or the only one up (a usage error otherwise). */
export function chooseLab(name: string | undefined): string {
  if (name !== undefined) return name;
  const up = labNames();
  if (up.length === 1) return up[0]!;
  const detail = up.length === 0 ? 'no lab is up' : `labs up: ${up.join(', ')}`;
  throw Object.assign(netnsError(ErrorCodes.INVALID_ARG, `say which lab with --lab NAME (${detail})`), { exitCode: 2 });
}
