// The resident mode's wire format, one call per connection on a unix stream
// socket; native/cni_shim.c is the other end and holds the same constants.
//
//   request:  "NCS3", u32 env length, u32 stdin length, env ("NAME=value\0"
//             each, as /proc/PID/environ has them), the plugin's stdin; the
//             first bytes carry one descriptor (SCM_RIGHTS): the shim's
//             network namespace, where the call runs (caller-netns.ts)
//   response: "NCR1", u32 exit code, u32 stdout length, u32 stderr length,
//             stdout, stderr
//
// The request says its own length and the shim keeps its side open until the
// answer: the end of the connection before the answer means the caller went
// away (gave up at its deadline, or was killed), and the daemon cancels the
// call. Protocol 1 ("NCS1") sent stdin until a half-close, so that end could
// not be told from "done sending"; protocol 2 ("NCS2") sent no namespace, and
// the daemon plumbed in its own. The response is unchanged, so a shim and a
// daemon of different versions still read each other's refusal.
//
// Integers are big-endian. The limits bound what a peer can make the daemon
// hold; the shim keeps stdout in a static buffer of MAX_STDOUT bytes.
import type { CallEnvironment, CallOutcome } from '../skel.js';

export const REQUEST_MAGIC = 'NCS3';
/** Older shims' magic, by protocol version: refused, naming the version. */
const OLD_REQUEST_MAGICS: Readonly<Record<string, number>> = { NCS1: 1, NCS2: 2 };
export const RESPONSE_MAGIC = 'NCR1';
const HEADER_BYTES = 12;
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

/** One request: the call's environment and the plugin's stdin. */
export interface Request {
  env: CallEnvironment;
  stdin: Buffer;
}

/**
 * Collects one request as its bytes arrive: `push` each chunk; it returns the
 * request once the last of its bytes came, else undefined. BadRequest as soon
 * as the header, a limit or the length is broken (a byte past the end too).
 */
export class RequestReader {
  #chunks: Buffer[] = [];
  #length = 0;
  #lengths: { env: number; stdin: number } | undefined;

  push(chunk: Buffer): Request | undefined {
    this.#chunks.push(chunk);
    this.#length += chunk.length;
    if (this.#lengths === undefined && this.#length >= HEADER_BYTES) this.#lengths = this.#header();
    if (this.#lengths === undefined) return undefined;
    const total = HEADER_BYTES + this.#lengths.env + this.#lengths.stdin;
    if (this.#length > total) throw new BadRequest('more bytes than the request announced');
    if (this.#length < total) return undefined;
    const all = Buffer.concat(this.#chunks, this.#length);
    const envEnd = HEADER_BYTES + this.#lengths.env;
    return { env: parseEnvironment(all.subarray(HEADER_BYTES, envEnd)), stdin: all.subarray(envEnd) };
  }

  #header(): { env: number; stdin: number } {
    const head = Buffer.concat(this.#chunks, this.#length);
    this.#chunks = [head];
    const magic = head.toString('latin1', 0, 4);
    const old = Object.hasOwn(OLD_REQUEST_MAGICS, magic) ? OLD_REQUEST_MAGICS[magic] : undefined;
    if (old !== undefined) throw new BadRequest(`the shim speaks protocol ${old}, this daemon 3: install the shim of the same netns version as the daemon`);
    if (magic !== REQUEST_MAGIC) throw new BadRequest('not a netns CNI shim request (another program, or a shim of another version)');
    const env = head.readUInt32BE(4);
    const stdin = head.readUInt32BE(8);
    if (env > MAX_ENV) throw new BadRequest(`environment longer than ${MAX_ENV} bytes`);
    if (stdin > MAX_STDIN) throw new BadRequest(`stdin longer than ${MAX_STDIN} bytes`);
    return { env, stdin };
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
