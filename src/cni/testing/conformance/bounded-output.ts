// What a plugin prints, kept up to a cap. A result or an error object is a
// few kB, so a plugin that writes without end is a failure to report, not the
// runner's memory to fill.
import type { Readable } from 'node:stream';

/** What is kept of each of a plugin's stdout and stderr. */
export const MAX_OUTPUT_BYTES = 4 * 1024 * 1024;

/**
 * Collects `stream` until it ends or passes `limit` bytes; past the limit it
 * keeps the first `limit`, stops reading (destroyed, so a process that holds
 * the pipe cannot keep the call open) and calls `onOverflow` once.
 * Returns what was kept, as text.
 */
export function collectBounded(stream: Readable, onOverflow: () => void, limit = MAX_OUTPUT_BYTES): () => string {
  const chunks: Buffer[] = [];
  let size = 0;
  stream.on('data', (chunk: Buffer) => {
    const room = limit - size;
    size += chunk.length;
    chunks.push(chunk.length > room ? chunk.subarray(0, room) : chunk);
    if (size <= limit) return;
    stream.destroy();
    onOverflow();
  });
  return () => Buffer.concat(chunks).toString('utf8');
}
