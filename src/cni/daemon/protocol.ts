// The resident mode's wire format, one call per connection on a unix stream
// socket; native/cni_shim.c is the other end and holds the same constants.
//
//   request:  "NCS1", u32 env length, env ("NAME=value\0" each, as
//             /proc/PID/environ has them), then the plugin's stdin until the
//             shim shuts its side down (half-close)
//   response: "NCR1", u32 exit code, u32 stdout length, u32 stderr length,
//             stdout, stderr
//
// Integers are big-endian. The limits bound what a peer can make the daemon
// hold; the shim keeps stdout in a static buffer of MAX_STDOUT bytes.
import type { CallEnvironment, CallOutcome } from '../skel.js';

export const REQUEST_MAGIC = 'NCS1';
export const RESPONSE_MAGIC = 'NCR1';
const HEADER_BYTES = 8;
/** execve allows at most 2 MiB of arguments and environment together. */
export const MAX_ENV = 4 << 20;
export const MAX_STDIN = 16 << 20;
export const MAX_STDOUT = 1 << 20;

export class BadRequest extends Error {}

/** The environment block: the first of two entries with one name wins, as getenv(3) has it. */
function parseEnvironment(block: Buffer): CallEnvironment {
  const env: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const entry of block.toString('utf8').split('\0')) {
    const equals = entry.indexOf('=');
    if (equals <= 0) continue; // an empty trailing piece, or an entry with no name
    const name = entry.slice(0, equals);
    if (!(name in env)) env[name] = entry.slice(equals + 1);
  }
  return env;
}

/**
 * Collects one request as its bytes arrive: `push` each chunk (BadRequest as
 * soon as the header or a limit is broken), `finish` at the peer's end.
 */
export class RequestReader {
  #chunks: Buffer[] = [];
  #length = 0;
  #envLength: number | undefined;

  push(chunk: Buffer): void {
    this.#chunks.push(chunk);
    this.#length += chunk.length;
    if (this.#envLength === undefined && this.#length >= HEADER_BYTES) this.#envLength = this.#header();
    if (this.#envLength !== undefined && this.#length - HEADER_BYTES - this.#envLength > MAX_STDIN) {
      throw new BadRequest(`stdin longer than ${MAX_STDIN} bytes`);
    }
  }

  finish(): { env: CallEnvironment; stdin: Buffer } {
    if (this.#envLength === undefined || this.#length < HEADER_BYTES + this.#envLength) throw new BadRequest('the request ended before its environment did');
    const all = Buffer.concat(this.#chunks, this.#length);
    const envEnd = HEADER_BYTES + this.#envLength;
    return { env: parseEnvironment(all.subarray(HEADER_BYTES, envEnd)), stdin: all.subarray(envEnd) };
  }

  #header(): number {
    const head = Buffer.concat(this.#chunks, this.#length);
    this.#chunks = [head];
    if (head.toString('latin1', 0, 4) !== REQUEST_MAGIC) throw new BadRequest('not a netns CNI shim request (another program, or a shim of another version)');
    const envLength = head.readUInt32BE(4);
    if (envLength > MAX_ENV) throw new BadRequest(`environment longer than ${MAX_ENV} bytes`);
    return envLength;
  }
}

/** The response frame for one call's outcome. */
export function encodeResponse(outcome: CallOutcome): Buffer {
  const stderr = Buffer.from(outcome.stderr, 'utf8');
  const header = Buffer.alloc(16);
  header.write(RESPONSE_MAGIC, 0, 'latin1');
  header.writeUInt32BE(outcome.exitCode >>> 0, 4);
  header.writeUInt32BE(outcome.stdout.length, 8);
  header.writeUInt32BE(stderr.length, 12);
  return Buffer.concat([header, outcome.stdout, stderr]);
}
