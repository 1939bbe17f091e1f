// The resident mode's wire format as the daemon reads it (native/cni_shim.c
// writes it): a request is taken whole however it is cut into chunks, and
// known to be whole by its own lengths (the shim does not close its side), the
// environment's first entry of a name wins as getenv(3) has it, and a request
// that is not the shim's (an older shim's included), too large or longer than
// it said is refused as soon as that is known.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { NetnsError } from '../../dist/index.js';
import { BadRequest, encodeResponse, MAX_ENV, MAX_STDIN, REQUEST_MAGIC, RequestReader } from '../../dist/cni/daemon/protocol.js';
import { serveResident } from '../../dist/cni/index.js';

function request(env: string[], stdin: string): Buffer {
  const block = Buffer.from(env.map((entry) => `${entry}\0`).join(''));
  const header = Buffer.alloc(12);
  header.write(REQUEST_MAGIC);
  header.writeUInt32BE(block.length, 4);
  header.writeUInt32BE(Buffer.byteLength(stdin), 8);
  return Buffer.concat([header, block, Buffer.from(stdin)]);
}

describe('the resident wire format', () => {
  it('reads a request cut anywhere, the first of two entries of a name winning', () => {
    const bytes = request(['CNI_COMMAND=ADD', 'CNI_PATH=/a:/b', 'CNI_PATH=/evil', 'NOEQUALS', '=nameless', 'EMPTY='], '{"name":"n"}');
    for (const size of [1, 3, 7, 8, 12, 13, bytes.length]) {
      const reader = new RequestReader();
      const pieces: (ReturnType<RequestReader['push']>)[] = [];
      for (let at = 0; at < bytes.length; at += size) pieces.push(reader.push(bytes.subarray(at, at + size)));
      // Only the last piece completes it.
      expect(pieces.slice(0, -1).every((piece) => piece === undefined)).toBe(true);
      const { env, stdin } = pieces.at(-1)!;
      expect({ ...env }).toEqual({ CNI_COMMAND: 'ADD', CNI_PATH: '/a:/b', EMPTY: '' });
      expect(stdin.toString()).toBe('{"name":"n"}');
    }
  });

  it('takes a request with no stdin (VERSION) as whole once its environment came', () => {
    expect(new RequestReader().push(request(['CNI_COMMAND=VERSION'], ''))).toMatchObject({ stdin: Buffer.alloc(0) });
  });

  it('refuses another program, an older shim, lengths over the limits, and bytes past the announced end', () => {
    expect(() => new RequestReader().push(Buffer.from('GET / HTTP/1.1\r\n'))).toThrow(BadRequest);
    const other = request(['A=1'], '{}');
    other.write('XCS3'); // lengths that fit: only the magic tells
    expect(() => new RequestReader().push(other)).toThrow('not a netns CNI shim request (another program, or a shim of another version)');
    expect(REQUEST_MAGIC).toBe('NCS3');
    for (const version of [1, 2]) {
      const old = Buffer.alloc(16);
      old.write(`NCS${version}`);
      expect(() => new RequestReader().push(old)).toThrow(`the shim speaks protocol ${version}, this daemon 3`);
    }
    const huge = request([], '');
    huge.writeUInt32BE(MAX_ENV + 1, 4);
    expect(() => new RequestReader().push(huge)).toThrow(/environment longer/);
    const hugeStdin = request([], '');
    hugeStdin.writeUInt32BE(MAX_STDIN + 1, 8);
    expect(() => new RequestReader().push(hugeStdin)).toThrow(/stdin longer/);
    expect(() => new RequestReader().push(Buffer.concat([request(['A=1'], '{}'), Buffer.from('x')]))).toThrow(/more bytes than the request announced/);
  });

  it('takes a request announcing exactly the limits, and waits for its bytes', () => {
    const full = request([], '');
    full.writeUInt32BE(MAX_ENV, 4);
    full.writeUInt32BE(MAX_STDIN, 8);
    expect(new RequestReader().push(full)).toBeUndefined();
  });

  it('answers with the exit code, stdout and stderr, lengths first', () => {
    const frame = encodeResponse({ exitCode: 1, stdout: Buffer.from('{"code":7}\n'), stderr: 'log\n' });
    expect(frame.toString('latin1', 0, 4)).toBe('NCR1');
    expect([frame.readUInt32BE(4), frame.readUInt32BE(8), frame.readUInt32BE(12)]).toEqual([1, 11, 4]);
    expect(frame.subarray(16).toString()).toBe('{"code":7}\nlog\n');
  });
});

describe('serveResident options', () => {
  const handlers = { add: () => ({ cniVersion: '1.0.0' }), del: () => {}, check: () => {} };
  const info = { versions: ['1.0.0'] };

  it('refuses a request timeout Node cannot keep (over 2^31-1 ms it would fire at once), before taking a socket', async () => {
    for (const requestTimeoutMs of [2 ** 31, 2 ** 53, 0, 1.5]) {
      await expect(serveResident(handlers, info, { socketPath: '/nonexistent-netns-test/s.sock', requestTimeoutMs })).rejects.toMatchObject({ code: 'ERR_NETNS_INVALID_ARG', message: `requestTimeoutMs must be an integer from 1 to ${2 ** 31 - 1}` });
    }
  });

  it('refuses options that are not an object, or handleSignals that is not a boolean, by message', async () => {
    await expect(serveResident(handlers, info, null as never)).rejects.toMatchObject({ code: 'ERR_NETNS_INVALID_ARG', message: 'serveResident takes options { socketPath } or { name }' });
    await expect(serveResident(handlers, info, { socketPath: '/nonexistent-netns-test/s.sock', handleSignals: 'yes' as never })).rejects.toMatchObject({ code: 'ERR_NETNS_INVALID_ARG', message: 'handleSignals must be true or false' });
  });

  it('stops on SIGTERM and SIGINT by default, and stops listening for them once closed', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'netns-resident-signals-'));
    const counts = () => [process.listenerCount('SIGTERM'), process.listenerCount('SIGINT')];
    const before = counts();
    try {
      const server = await serveResident(handlers, info, { socketPath: join(dir, 's.sock') });
      expect(counts()).toEqual(before.map((n) => n + 1));
      process.emit('SIGINT', 'SIGINT');
      await server.closed;
      expect(counts()).toEqual(before);
      const again = await serveResident(handlers, info, { socketPath: join(dir, 's.sock') });
      process.emit('SIGTERM', 'SIGTERM');
      await again.closed;
      expect(counts()).toEqual(before);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('takes no option from a polluted Object.prototype', async () => {
    const proto = Object.prototype as Record<string, unknown>;
    proto.socketPath = '/tmp/netns-polluted.sock';
    try {
      // The inherited socketPath would be used; the own (bad) name must be what is judged.
      await expect(serveResident(handlers, info, { name: 'bad name!' })).rejects.toMatchObject({ code: 'ERR_NETNS_INVALID_ARG', message: expect.stringContaining('name') });
    } finally {
      delete proto.socketPath;
    }
  });

  it("rejects with a coded NetnsError, Node's error as cause, when the socket's directory cannot be made", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'netns-resident-'));
    try {
      writeFileSync(join(dir, 'file'), ''); // a file where the directory should be
      const error = await serveResident(handlers, info, { socketPath: join(dir, 'file', 'sub', 's.sock') }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(NetnsError);
      expect(error).toMatchObject({ code: 'ENOTDIR', syscall: 'mkdir', message: expect.stringContaining("resident socket's directory") });
      expect((error as NetnsError).cause).toMatchObject({ code: 'ENOTDIR' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
