// A plugin process's stdin, stdout and stderr through their descriptors with
// node:fs, for pluginMain. process.stdin and process.stdout are, for the pipes
// runtimes give, net.Sockets: their first use loads node:net and the streams,
// a few ms of each command. The streams still serve where a descriptor will not
// block (EAGAIN: the rest goes through them, which wait), and pluginMain waits
// for those that were made, by it or by a handler, before it exits.
import { fs } from '../core/builtins.js';

type Name = 'stdout' | 'stderr';
const made = new Set<Name>();

/**
 * From now on, notes which of process.stdout and stderr are made (on
 * first use), so that waitForStreams waits for those alone: making one to
 * flush it would load what this module avoids. One not made through the
 * getter (Node's own descriptor may be absent) counts as made.
 */
export function noteStdioStreams(): void {
  for (const name of ['stdout', 'stderr'] as const) {
    const own = Object.getOwnPropertyDescriptor(process, name);
    // Stryker disable next-line OptionalChaining: Node defines both on process; the ?. is for a host that does not
    if (!own?.get || !own.configurable) {
      made.add(name);
      continue;
    }
    const get = own.get;
    Object.defineProperty(process, name, { ...own, get: () => (made.add(name), get.call(process)) });
  }
}

const wouldBlock = (error: unknown): boolean => (error as NodeJS.ErrnoException).code === 'EAGAIN';

/** All of stdin, to its end. */
export async function readStdin(): Promise<Buffer> {
  const chunks: Buffer[] = [];
  try {
    for (;;) {
      const chunk = Buffer.allocUnsafe(64 * 1024);
      const got = fs().readSync(0, chunk, 0, chunk.length, null);
      if (got === 0) return Buffer.concat(chunks);
      chunks.push(chunk.subarray(0, got));
    }
  } catch (error) {
    if (!wouldBlock(error)) throw error;
  }
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Writes all of `data` to stdout (1) or stderr (2). */
export function writeOut(fd: 1 | 2, data: Buffer | string): void {
  // Stryker disable next-line ConditionalExpression: Buffer.from copies a Buffer: the same bytes, one copy more
  let bytes = typeof data === 'string' ? Buffer.from(data) : data;
  try {
    while (bytes.length > 0) bytes = bytes.subarray(fs().writeSync(fd, bytes));
    return;
  } catch (error) {
    if (!wouldBlock(error)) throw error;
  }
  (fd === 1 ? process.stdout : process.stderr).write(bytes);
}

/** Resolves once process.stdout and process.stderr, those made, have written what they were given. */
export async function waitForStreams(): Promise<void> {
  const flushed = (stream: NodeJS.WriteStream): Promise<void> => new Promise((resolve) => stream.write('', () => resolve()));
  await Promise.all([...made].map((name) => flushed(process[name])));
}
