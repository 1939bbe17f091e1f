// Where `netns lab` keeps the labs it brought up: one JSON file per lab in
// /run/netns-lab (NETNS_LAB_DIR overrides), made before the lab is built (so
// `down` finds what a killed `up` left) and replaced atomically after every
// change, under the lab's lock (one command at a time changes a lab). /run is
// a tmpfs: a reboot forgets the labs with their namespaces.
import { randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ErrorCodes, netnsError } from '../core/errors.js';
import { type FileLock, lockFile, lockHolder } from '../core/file-lock.js';
import type { LabState } from '../testing/lab/lab.js';
import { LAB_KEY } from '../testing/lab/spec.js';
import { whyNotStoredLab } from './lab-check.js';

/** A namespace as `up` made it: nsfs device and inode, and the inode's ctime in ns (inode numbers are reused). */
export interface NsStamp {
  dev: number;
  inode: number;
  /** The nsfs inode's ctime, in nanoseconds, as a decimal string. */
  made: string;
}

/** The state file's contents: the lab's state, and whether it was still being built. */
export interface StoredLab {
  name: string;
  /** The file it was brought up from. */
  file: string;
  /** true from before the build until it finished: a lab `up` never completed. */
  building: boolean;
  state: LabState;
  /** Each node's namespace as `up` made it (once built): `down` deletes a namespace only while it is still that one. */
  identities?: Record<string, NsStamp>;
  /**
   * When `up` began, in ns of the realtime clock (a namespace's `made` stamp is on the same clock): `down` of a
   * lab whose `up` died deletes only namespaces made since, never one that was there before.
   */
  started?: string;
}

/** A state file that holds no lab (truncated, edited, not ours): `down` removes it and deletes nothing. */
export interface DamagedLab {
  name: string;
  /** What is wrong with it. */
  damaged: string;
}

/** How long a command waits for another one working the same lab (an `up` of a big lab takes a while). */
const LOCK_TIMEOUT_MS = 120_000;

export function labDir(): string {
  return process.env.NETNS_LAB_DIR || '/run/netns-lab';
}

function pathOf(name: string): string {
  if (!LAB_KEY.test(name)) throw netnsError(ErrorCodes.INVALID_ARG, `a lab name must match ${LAB_KEY}, got ${JSON.stringify(name)}`);
  return join(labDir(), `${name}.json`);
}

/** The lab's contents in a new file of a name no one can guess or plant a symlink at. */
function writeTemporary(path: string, lab: StoredLab): string {
  mkdirSync(labDir(), { recursive: true, mode: 0o755 });
  const temporary = `${path}.${randomBytes(8).toString('hex')}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(lab, null, 2)}\n`, { mode: 0o644, flag: 'wx' });
  return temporary;
}

/** Writes the lab's file whole (a temporary file renamed over it): a reader never sees half of one. */
export function saveLab(lab: StoredLab): void {
  const path = pathOf(lab.name);
  const temporary = writeTemporary(path, lab);
  try {
    renameSync(temporary, path);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
}

/** Makes the lab's file whole, EEXIST if the lab has one already (a link fails where a rename replaces). */
export function createLabFile(lab: StoredLab): void {
  const path = pathOf(lab.name);
  const temporary = writeTemporary(path, lab);
  try {
    linkSync(temporary, path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    throw netnsError('EEXIST', `lab ${lab.name} is already up: netns lab down ${lab.name} first`);
  } finally {
    unlinkSync(temporary);
  }
}

function notUp(name: string): Error {
  const up = labNames();
  return netnsError('ENOENT', `no lab ${name} is up (${up.length === 0 ? 'none is' : `up: ${up.join(', ')}`})`);
}

/** The lab of that name, or what is wrong with its file; ENOENT (coded, naming the labs that are up) when there is none. */
export async function inspectLab(name: string): Promise<StoredLab | DamagedLab> {
  let text: string;
  try {
    text = readFileSync(pathOf(name), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw notUp(name);
    throw error;
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    return { name, damaged: `not JSON (${(error as Error).message})` };
  }
  const damaged = await whyNotStoredLab(data, name);
  return damaged === undefined ? (data as StoredLab) : { name, damaged };
}

/** Whether inspectLab found a damaged file. */
export function isDamaged(lab: StoredLab | DamagedLab): lab is DamagedLab {
  return 'damaged' in lab;
}

/** The lab of that name: ENOENT when there is none, ERR_NETNS_INVALID_ARG naming the file when it is damaged. */
export async function loadLab(name: string): Promise<StoredLab> {
  const lab = await inspectLab(name);
  if (isDamaged(lab)) throw netnsError(ErrorCodes.INVALID_ARG, `the state file ${pathOf(name)} is damaged (${lab.damaged}): netns lab down ${name} removes it`);
  return lab;
}

/** Takes lab `name`'s lock (a file beside its state file), waiting for whoever works the lab now. */
async function lockLab(name: string): Promise<FileLock> {
  const path = `${pathOf(name).slice(0, -'.json'.length)}.lock`;
  mkdirSync(labDir(), { recursive: true, mode: 0o755 });
  return lockFile(path, LOCK_TIMEOUT_MS, () =>
    netnsError('EBUSY', `lab ${name} is being worked on by another command${lockHolder(path)}; waited ${LOCK_TIMEOUT_MS / 1000} s`),
  );
}

/** Runs `work` holding lab `name`'s lock: up, down and each change hold it throughout, so none loses another's update. */
export async function underLabLock<T>(name: string, work: () => Promise<T>): Promise<T> {
  const lock = await lockLab(name);
  try {
    return await work();
  } finally {
    lock.release();
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
      .filter((name) => LAB_KEY.test(name))
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
