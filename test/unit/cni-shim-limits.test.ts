// The shim's limits (native/cni_shim.c keeps stdin and the daemon's stdout in
// fixed buffers of the protocol's sizes): an answer one byte over MAX_STDOUT is
// refused with the shim's error rather than read past the buffer, one exactly
// MAX_STDOUT long is passed on whole; a configuration one byte over MAX_STDIN is
// refused before any daemon is asked, one exactly MAX_STDIN long is sent whole.
// The daemon here is a fake that answers with the frame the test chooses, so
// that the shim meets an answer the real daemon would never send (it keeps
// to the limit itself).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MAX_STDIN, MAX_STDOUT } from '../../dist/cni/daemon/protocol.js';
import { SHIM } from '../helpers/cni-shim.mjs';

interface ShimRun {
  code: number | null;
  stdout: Buffer;
}

/** Runs the shim with `env` (and nothing else), `stdin` written and closed; resolves with its exit code and stdout. */
function runShim(env: Record<string, string>, stdin: Buffer): Promise<ShimRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(SHIM, [], { env, stdio: ['pipe', 'pipe', 'inherit'] });
    const out: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stdin.on('error', () => {}); // a shim that refuses early closes its stdin unread
    child.stdin.end(stdin);
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout: Buffer.concat(out) }));
  });
}

/** The response frame: "NCR1", exit code, stdout length, stderr length, then stdout. */
function response(stdout: Buffer): Buffer {
  const header = Buffer.alloc(16);
  header.write('NCR1', 0, 'latin1');
  header.writeUInt32BE(0, 4);
  header.writeUInt32BE(stdout.length, 8);
  header.writeUInt32BE(0, 12);
  return Buffer.concat([header, stdout]);
}

/** What a fake daemon saw of one request: its announced stdin length and how many bytes came in all. */
interface Seen {
  stdinLength: number;
  bytes: number;
}

/** A fake daemon on `socketPath`: answers each connection with `answer` at once, and reads the whole request. */
function fakeDaemon(socketPath: string, answer: Buffer): Promise<{ server: Server; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = createServer((socket: Socket) => {
    const request: Seen = { stdinLength: -1, bytes: 0 };
    seen.push(request);
    socket.on('data', (chunk: Buffer) => {
      if (request.bytes === 0 && chunk.length >= 12) request.stdinLength = chunk.readUInt32BE(8);
      request.bytes += chunk.length;
    });
    socket.on('error', () => {});
    socket.on('end', () => socket.end());
    socket.write(answer);
  });
  return new Promise((resolve) => server.listen(socketPath, () => resolve({ server, seen })));
}

describe('the shim', () => {
  let dir: string;
  let socketPath: string;
  let server: Server | undefined;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'netns-shim-limits-'));
    socketPath = join(dir, 'plugin.sock');
  });

  afterEach(async () => {
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    server = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  const version = () => ({ NETNS_CNI_SOCKET: socketPath, CNI_COMMAND: 'VERSION' });

  it('refuses an answer one byte over its stdout limit with its error, printing none of it', async () => {
    ({ server } = await fakeDaemon(socketPath, response(Buffer.alloc(MAX_STDOUT + 1, 'x'))));
    const run = await runShim(version(), Buffer.alloc(0));
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stdout.toString())).toMatchObject({ code: 999, msg: expect.stringContaining('answer is larger than this shim passes on') });
  });

  it('passes on an answer exactly as long as its stdout limit, whole', async () => {
    const stdout = Buffer.alloc(MAX_STDOUT, 'y');
    ({ server } = await fakeDaemon(socketPath, response(stdout)));
    const run = await runShim(version(), Buffer.alloc(0));
    expect(run.code).toBe(0);
    expect(run.stdout.equals(stdout)).toBe(true);
  });

  it("refuses a configuration one byte over the daemon's stdin limit with its error, asking no daemon", async () => {
    let seen: Seen[];
    ({ server, seen } = await fakeDaemon(socketPath, response(Buffer.from('{}'))));
    const run = await runShim({ NETNS_CNI_SOCKET: socketPath, CNI_COMMAND: 'ADD' }, Buffer.alloc(MAX_STDIN + 1, ' '));
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stdout.toString())).toMatchObject({ code: 999, msg: expect.stringContaining('larger than the daemon accepts') });
    expect(seen).toEqual([]);
  });

  it("sends a configuration exactly as long as the daemon's stdin limit, whole", async () => {
    let seen: Seen[];
    ({ server, seen } = await fakeDaemon(socketPath, response(Buffer.from('{}'))));
    const run = await runShim({ NETNS_CNI_SOCKET: socketPath, CNI_COMMAND: 'ADD' }, Buffer.alloc(MAX_STDIN, ' '));
    expect(run.code).toBe(0);
    expect(seen).toHaveLength(1);
    expect(seen[0]!.stdinLength).toBe(MAX_STDIN);
  });
});
