// A plugin's stdin and stdout through their descriptors, checked in-process
// with a stand-in for node:fs: stdin is read to its end in whole chunks, a
// short write is continued until every byte is out, a descriptor that would
// block hands the rest to Node's stream (no byte lost or sent twice), any
// other error is thrown, and only the streams that were made are waited for.
// The plugin tests (cni-plugin-start, cni-skel-exit) run the same code in a
// real plugin process, where the mutation tool cannot see it.
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

type ReadSync = (fd: number, buffer: Buffer, offset: number, length: number, position: null) => number;
type WriteSync = (fd: number, buffer: Buffer) => number;
const fake: { readSync: ReadSync; writeSync: WriteSync } = {
  readSync: () => 0,
  writeSync: (_fd, buffer) => buffer.length,
};
vi.mock('../../src/core/builtins.js', () => ({ fs: () => fake }));

const errno = (code: string) => Object.assign(new Error(code), { code });
const stdio = () => import('../../src/cni/stdio.js');

type Stream = { written: string[]; write: (data: Buffer | string, done?: () => void) => boolean };
function stream(): Stream {
  const written: string[] = [];
  return {
    written,
    write(data, done) {
      written.push(data.toString());
      queueMicrotask(() => done?.());
      return true;
    },
  };
}

const saved = Object.fromEntries(
  (['stdin', 'stdout', 'stderr'] as const).map((name) => [name, Object.getOwnPropertyDescriptor(process, name)!]),
);
function replace(name: 'stdin' | 'stdout' | 'stderr', descriptor: PropertyDescriptor): void {
  Object.defineProperty(process, name, descriptor);
}
const getter = (value: unknown, configurable = true): PropertyDescriptor => ({ get: () => value, configurable, enumerable: true });

/** Stand-ins for process.stdout and stderr, behind getters as Node has them. */
function standInStreams(): { stdout: Stream; stderr: Stream; written: () => { stdout: string[]; stderr: string[] } } {
  const stdout = stream();
  const stderr = stream();
  replace('stdout', getter(stdout));
  replace('stderr', getter(stderr));
  return { stdout, stderr, written: () => ({ stdout: stdout.written, stderr: stderr.written }) };
}

beforeEach(() => vi.resetModules());
afterEach(() => {
  for (const [name, descriptor] of Object.entries(saved)) {
    Object.defineProperty(process, name, descriptor);
  }
  fake.readSync = () => 0;
  fake.writeSync = (_fd, buffer) => buffer.length;
});

describe('readStdin', () => {
  it('reads descriptor 0 in 64 KiB chunks from the start of the buffer until a read returns nothing', async () => {
    const calls: [number, number, number, null][] = [];
    const parts = [Buffer.from('{"cniVersion":'), Buffer.from('"1.0.0"}')];
    fake.readSync = (fd, buffer, offset, length, position) => {
      calls.push([fd, offset, length, position]);
      const part = parts.shift();
      if (!part) return 0;
      part.copy(buffer, offset);
      return part.length;
    };
    const { readStdin } = await stdio();
    expect((await readStdin()).toString()).toBe('{"cniVersion":"1.0.0"}');
    expect(calls).toEqual([
      [0, 0, 65536, null],
      [0, 0, 65536, null],
      [0, 0, 65536, null],
    ]);
  });

  it('keeps only the bytes each read returned', async () => {
    let reads = 0;
    fake.readSync = (_fd, buffer) => (reads++ === 0 ? (buffer.fill(0x61), 3) : 0);
    const { readStdin } = await stdio();
    expect((await readStdin()).toString()).toBe('aaa');
  });

  it('reads the rest through process.stdin once the descriptor would block, after what it already read', async () => {
    let reads = 0;
    fake.readSync = (_fd, buffer) => {
      if (reads++ > 0) throw errno('EAGAIN');
      buffer.write('first,');
      return 6;
    };
    replace('stdin', getter(Readable.from([Buffer.from('second,'), Buffer.from('third')])));
    const { readStdin } = await stdio();
    expect((await readStdin()).toString()).toBe('first,second,third');
  });

  it('throws any other read error', async () => {
    fake.readSync = () => {
      throw errno('EIO');
    };
    replace('stdin', getter(Readable.from([Buffer.from('never read')])));
    const { readStdin } = await stdio();
    await expect(readStdin()).rejects.toMatchObject({ code: 'EIO' });
  });
});

describe('writeOut', () => {
  it('continues a short write until every byte is out, on the descriptor asked for', async () => {
    const writes: [number, string][] = [];
    fake.writeSync = (fd, buffer) => {
      const taken = Math.min(3, buffer.length);
      writes.push([fd, buffer.subarray(0, taken).toString()]);
      return taken;
    };
    const { writeOut } = await stdio();
    writeOut(2, 'abcdefgh');
    writeOut(1, Buffer.from('xyz'));
    expect(writes).toEqual([
      [2, 'abc'],
      [2, 'def'],
      [2, 'gh'],
      [1, 'xyz'],
    ]);
  });

  it('writes nothing for empty data', async () => {
    const writeSync = vi.fn(() => 0);
    fake.writeSync = writeSync;
    const { writeOut } = await stdio();
    writeOut(1, '');
    expect(writeSync).not.toHaveBeenCalled();
  });

  it.each([
    [1, 'stdout'],
    [2, 'stderr'],
  ] as const)('hands what is left to process.%s once descriptor %i would block, nothing twice', async (fd, name) => {
    let calls = 0;
    fake.writeSync = () => {
      if (calls++ > 0) throw errno('EAGAIN');
      return 4;
    };
    const { written } = standInStreams();
    const { writeOut } = await stdio();
    writeOut(fd, 'sent-rest');
    expect(written()).toEqual(
      name === 'stdout' ? { stdout: ['-rest'], stderr: [] } : { stdout: [], stderr: ['-rest'] },
    );
  });

  it('throws any other write error', async () => {
    fake.writeSync = () => {
      throw errno('EPIPE');
    };
    const stdout = stream();
    replace('stdout', getter(stdout));
    const { writeOut } = await stdio();
    expect(() => writeOut(1, 'x')).toThrow(expect.objectContaining({ code: 'EPIPE' }));
    expect(stdout.written).toEqual([]);
  });
});

describe('noteStdioStreams and waitForStreams', () => {
  it('waits for no stream that was never made', async () => {
    const { written } = standInStreams();
    const { noteStdioStreams, waitForStreams } = await stdio();
    noteStdioStreams();
    await waitForStreams();
    expect(written()).toEqual({ stdout: [], stderr: [] });
  });

  it('waits for a stream made after the note, and for it alone, still returning it from the getter', async () => {
    const { stdout, written } = standInStreams();
    const { noteStdioStreams, waitForStreams } = await stdio();
    noteStdioStreams();
    expect(process.stdout).toBe(stdout);
    await waitForStreams();
    expect(written()).toEqual({ stdout: [''], stderr: [] });
  });

  it('resolves only once each made stream has called back', async () => {
    let callBack: () => void = () => {};
    const stdout = { write: (_data: string, done: () => void) => ((callBack = done), true) };
    replace('stdout', getter(stdout));
    replace('stderr', getter(stream()));
    const { noteStdioStreams, waitForStreams } = await stdio();
    noteStdioStreams();
    void process.stdout;
    let resolved = false;
    const waiting = waitForStreams().then(() => (resolved = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(resolved).toBe(false);
    callBack();
    await waiting;
    expect(resolved).toBe(true);
  });

  it('counts a stream whose getter cannot be replaced as made', async () => {
    const stdout = stream();
    const stderr = stream();
    const standIn = {};
    Object.defineProperty(standIn, 'stdout', getter(stdout, false));
    Object.defineProperty(standIn, 'stderr', getter(stderr));
    const { noteStdioStreams, waitForStreams } = await stdio();
    vi.stubGlobal('process', standIn);
    try {
      noteStdioStreams();
      const waiting = waitForStreams();
      vi.unstubAllGlobals();
      await waiting;
    } finally {
      vi.unstubAllGlobals();
    }
    expect({ stdout: stdout.written, stderr: stderr.written }).toEqual({ stdout: [''], stderr: [] });
  });

  it('counts a stream that is a plain value as made', async () => {
    const stdout = stream();
    const stderr = stream();
    replace('stdout', { value: stdout, configurable: true, writable: true });
    replace('stderr', getter(stderr));
    const { noteStdioStreams, waitForStreams } = await stdio();
    noteStdioStreams();
    await waitForStreams();
    expect({ stdout: stdout.written, stderr: stderr.written }).toEqual({ stdout: [''], stderr: [] });
  });
});
