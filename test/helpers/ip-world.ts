// A world of its own for comparing `netns` with `ip netns`: a process in a
// fresh mount namespace (a tmpfs over /run/netns, so only this world's names
// are listed) and a fresh network namespace (so the ids it assigns are its
// own). Everything made in it is gone when it ends, whatever the test did.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const RUNNER = fileURLToPath(new URL('./ip-world-runner.mjs', import.meta.url));

export interface WorldResult {
  status: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export class IpWorld {
  readonly #child: ChildProcessWithoutNullStreams;
  readonly #waiting = new Map<number, (result: WorldResult) => void>();
  #next = 0;

  private constructor(child: ChildProcessWithoutNullStreams) {
    this.#child = child;
  }

  static async open(): Promise<IpWorld> {
    const child = spawn('unshare', ['--mount', '--net', '--propagation', 'private', '--', process.execPath, RUNNER]);
    const world = new IpWorld(child);
    const lines = createInterface({ input: child.stdout });
    const ready = new Promise<void>((resolve, reject) => {
      child.once('exit', (code) => reject(new Error(`ip world ended (${code}) before it was ready`)));
      lines.on('line', (line) => {
        const message = JSON.parse(line) as { ready?: true; id?: number } & WorldResult;
        if (message.ready) resolve();
        else world.#waiting.get(message.id!)?.(message);
      });
    });
    child.stderr.pipe(process.stderr);
    await ready;
    return world;
  }

  /** Runs `shell` with sh -c in this world. */
  run(shell: string, env: Record<string, string> = {}): Promise<WorldResult> {
    const id = this.#next++;
    return new Promise((resolve) => {
      this.#waiting.set(id, resolve);
      this.#child.stdin.write(`${JSON.stringify({ id, shell, env })}\n`);
    });
  }

  /** Ends the world: its mounts, and with them its named namespaces, go with its mount namespace. */
  async close(): Promise<void> {
    const ended = new Promise((resolve) => this.#child.once('close', resolve));
    this.#child.stdin.end();
    await ended;
  }
}
