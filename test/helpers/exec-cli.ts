// `netns exec` started as the signal tests need it: spawned here (not through
// runCli) so that signals can be sent to it, with its output and that of the
// helper processes read line by line.
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';

export const cliPath = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

export function fixture(file: string): string {
  return fileURLToPath(new URL(`../fixtures/${file}`, import.meta.url));
}

/** The lines of a stream, awaited one at a time; `seen` keeps them all. */
export class Lines {
  readonly seen: string[] = [];
  private readonly lines: AsyncIterator<string>;

  constructor(stream: Readable) {
    this.lines = createInterface({ input: stream, crlfDelay: Number.POSITIVE_INFINITY })[Symbol.asyncIterator]();
  }

  async next(): Promise<string> {
    const { value, done } = await this.lines.next();
    if (done) throw new Error(`the stream ended after ${JSON.stringify(this.seen)}`);
    this.seen.push(value);
    return value;
  }

  /** Every line until the stream ends. */
  async rest(): Promise<string[]> {
    for (let line = await this.lines.next(); !line.done; line = await this.lines.next()) this.seen.push(line.value);
    return this.seen;
  }
}

export interface Started {
  child: ChildProcess;
  stdout: Lines;
  exit: Promise<[code: number | null, signal: NodeJS.Signals | null]>;
}

/** Spawns `argv` with piped stdio (unless told otherwise); its exit is awaited through `exit`. */
export function start(argv: string[], options: SpawnOptions = {}): Started {
  const child = spawn(argv[0]!, argv.slice(1), { stdio: 'pipe', ...options });
  child.stderr?.setEncoding('utf8').on('data', (text: string) => process.stderr.write(text));
  const exit = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  return { child, stdout: new Lines(child.stdout!), exit };
}

/** `netns exec NAME -- command...`, optionally through a wrapper that execs it (prlimit, unshare, perl). */
export function execArgv(name: string, command: string[], prefix: string[] = []): string[] {
  return [...prefix, process.execPath, cliPath, 'exec', name, '--', ...command];
}

/** The recorder fixture as the command, listening for `signals`. */
export function recorder(signals: string[]): string[] {
  return [process.execPath, fixture('signal-recorder.mjs'), ...signals];
}

/**
 * Watches process `pid` through a pidfd (held by a small perl program), so its
 * exit is awaited whoever its parent is. Resolves once the watch holds, to the
 * promise of the exit (in an object: an async function cannot return a bare promise).
 */
export async function watchExit(pid: number): Promise<{ exited: Promise<void> }> {
  const watcher = start(['perl', fixture('await-exit.pl'), String(pid)]);
  if ((await watcher.stdout.next()) !== 'watching') throw new Error(`cannot watch ${pid}`);
  const exited = watcher.stdout.next().then((line) => {
    if (line !== 'exited') throw new Error(`watching ${pid}: ${line}`);
  });
  return { exited };
}
