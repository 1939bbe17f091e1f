// FRR daemons of a lab's routers, children of the process that built the lab:
// zebra then the routing daemons, started in the router's network namespace
// with every path (config, pid file, zebra's socket, vty sockets, logs) in
// a directory of the lab's, so nothing under /etc/frr or /var/run/frr is used
// (ospfd still writes /var/run/frr/ospfd-gr.json, a path FRR 8.4 fixes).
// The daemons read their configuration after dropping to user frr: their
// directory and files must be frr's, or a config is silently read as empty.
import type { ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, watch } from 'node:fs';
import { chown, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ErrorCodes, netnsError } from '../../core/errors.js';
import type { LabNode } from './build.js';
import type { FrrFiles } from './frr-config.js';

/** Where Debian's frr package puts the daemons. */
export const FRR_BIN = '/usr/lib/frr';
const ZEBRA_SOCKET = 'zserv.api';
/** How long zebra may take to open its socket, and a daemon to exit on SIGTERM (zebra takes ~1.5 s) before SIGKILL. */
const START_MS = 10_000;
const STOP_MS = 5_000;

/** The uid and gid of user frr, as the daemons run. */
export interface FrrAccount {
  uid: number;
  gid: number;
}

/** User frr from /etc/passwd; ERR_NETNS_UNSUPPORTED when FRR is not installed. */
export function frrAccount(): FrrAccount {
  if (!existsSync(join(FRR_BIN, 'zebra'))) throw netnsError(ErrorCodes.UNSUPPORTED, `createLab: FRR is not installed (no ${FRR_BIN}/zebra; Debian: apt-get install frr)`);
  const line = readFileSync('/etc/passwd', 'utf8').split('\n').find((entry) => entry.startsWith('frr:'));
  const [uid, gid] = (line?.split(':') ?? []).slice(2, 4).map(Number);
  if (!Number.isSafeInteger(uid) || !Number.isSafeInteger(gid)) throw netnsError(ErrorCodes.UNSUPPORTED, 'createLab: FRR has no user frr in /etc/passwd (reinstall frr)');
  if (!mapsId('/proc/self/uid_map', uid!) || !mapsId('/proc/self/gid_map', gid!)) {
    throw netnsError(
      ErrorCodes.UNSUPPORTED,
      `createLab: FRR's daemons drop to user frr (uid ${uid}, gid ${gid}), which this user namespace does not map (a rootless sandbox maps only its caller): run a lab with FRR routers as real root`,
    );
  }
  return { uid: uid!, gid: gid! };
}

/** Whether this process's user namespace maps `id` (a line of the map: inside, outside, count); without the map, everything is. */
function mapsId(mapFile: string, id: number): boolean {
  let text: string;
  try {
    text = readFileSync(mapFile, 'utf8');
  } catch {
    return true;
  }
  return text.split('\n').some((line) => {
    const [inside, , count] = line.trim().split(/\s+/).map(Number);
    return inside! <= id && id < inside! + count!;
  });
}

/** A directory (or file) of frr's. */
async function ownedByFrr(path: string, account: FrrAccount): Promise<void> {
  await chown(path, account.uid, account.gid);
}

/** One router's running daemons. */
export class FrrRouter {
  readonly #node: LabNode;
  /** Its directory: configuration, pid files, sockets (`vtysh --vty_socket DIR`), `<daemon>.log`. */
  readonly dir: string;
  readonly #children = new Map<string, ChildProcess>();

  /** A router whose daemons will live in `dir`, which start() makes: its caller holds it before, to stop what a failed start left. */
  constructor(node: LabNode, dir: string) {
    this.#node = node;
    this.dir = dir;
  }

  /** Writes the files into the directory (made, frr's) and starts zebra, then, once its socket is open, the other daemons. */
  async start(files: FrrFiles, account: FrrAccount): Promise<void> {
    await mkdir(this.dir, { mode: 0o750 });
    await ownedByFrr(this.dir, account);
    for (const [name, text] of Object.entries(files.files)) {
      await writeFile(join(this.dir, name), text, { mode: 0o640 });
      await ownedByFrr(join(this.dir, name), account);
    }
    for (const { daemon, file } of files.daemons) {
      const child = this.#spawn(daemon, file);
      if (daemon === 'zebra') await this.#socketOpened(child);
    }
  }

  #spawn(daemon: string, file: string): ChildProcess {
    const path = (name: string): string => join(this.dir, name);
    // -P 0: no vty on TCP; the unix vty sockets in dir are enough for vtysh.
    const args = ['-f', path(file), '-i', path(`${daemon}.pid`), '-z', path(ZEBRA_SOCKET), '--vty_socket', this.dir, '--log', `file:${path(`${daemon}.log`)}`, '-P', '0'];
    const child = this.#node.ns!.spawn(join(FRR_BIN, daemon), args, { stdio: 'ignore' });
    child.on('error', () => {}); // a failed start shows as its exit, which start() and stop() await
    child.unref(); // a daemon must not keep the process alive: its exit is what kills the daemons of a lab not deleted
    this.#children.set(daemon, child);
    return child;
  }

  /** Resolves when zebra's socket exists; rejects (ERR_NETNS_FIXTURE, with its log) when zebra exits first or takes too long. */
  async #socketOpened(zebra: ChildProcess): Promise<void> {
    const socket = join(this.dir, ZEBRA_SOCKET);
    const watcher = watch(this.dir);
    try {
      await new Promise<void>((resolve, reject) => {
        const fail = (why: string): void => reject(netnsError(ErrorCodes.FIXTURE, `FRR zebra in ${this.#node.name} ${why}; its log: ${this.#logTail('zebra')}`));
        const timer = setTimeout(() => fail(`opened no socket within ${START_MS} ms`), START_MS);
        const done = (): void => {
          clearTimeout(timer);
          resolve();
        };
        watcher.on('change', () => existsSync(socket) && done());
        zebra.once('exit', (code, signal) => {
          clearTimeout(timer);
          fail(`exited (${signal ?? `code ${code}`}) before opening its socket`);
        });
        if (existsSync(socket)) done();
      });
    } finally {
      watcher.close();
    }
  }

  #logTail(daemon: string): string {
    try {
      return readFileSync(join(this.dir, `${daemon}.log`), 'utf8').trim().split('\n').slice(-5).join(' | ') || '(empty)';
    } catch {
      return '(none)';
    }
  }

  /** The daemons' process ids, by daemon (those that started). */
  pids(): Record<string, number> {
    return Object.fromEntries([...this.#children].flatMap(([daemon, child]) => (child.pid === undefined ? [] : [[daemon, child.pid]])));
  }

  /** Each daemon's log so far, by daemon. */
  async logs(): Promise<Record<string, string>> {
    const logs: Record<string, string> = {};
    for (const daemon of this.#children.keys()) logs[daemon] = await readFile(join(this.dir, `${daemon}.log`), 'utf8').catch(() => '');
    return logs;
  }

  /** SIGTERM to every daemon, awaited; SIGKILL to one still running after STOP_MS. Never rejects. */
  async stop(): Promise<void> {
    await Promise.all([...this.#children.values()].map(stopChild));
  }

  /** SIGKILL to every daemon, synchronously (the process is exiting); returns the pids killed. */
  killNow(): number[] {
    const killed = [...this.#children.values()].filter(running);
    for (const child of killed) child.kill('SIGKILL');
    return killed.map((child) => child.pid!);
  }
}

const running = (child: ChildProcess): boolean => child.pid !== undefined && child.exitCode === null && child.signalCode === null;

async function stopChild(child: ChildProcess): Promise<void> {
  if (!running(child)) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), STOP_MS)));
  if (await Promise.race([exited.then(() => false), late])) child.kill('SIGKILL');
  clearTimeout(timer);
  await exited;
}
