// pluginMain in-process, with its stdio replaced: what a plugin process
// writes to which descriptor, the exit code it sets, and that it ends the
// process only after a command, once its output is written. cni-skel runs the
// same in real plugin processes; this is where the mutation tool can see it.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { CniError } from '../../src/cni/errors.js';
import { pluginMain } from '../../src/cni/skel.js';

const io = vi.hoisted(() => ({
  events: [] as string[],
  stdin: async (): Promise<Buffer> => Buffer.from('{}'),
}));
vi.mock('../../src/cni/stdio.js', () => ({
  noteStdioStreams: () => io.events.push('note'),
  readStdin: () => io.stdin(),
  writeOut: (fd: 1 | 2, data: Buffer | string) => io.events.push(`write ${fd} ${data.toString()}`),
  waitForStreams: async () => {
    await Promise.resolve();
    io.events.push('flushed');
  },
}));

const INFO = { versions: ['1.0.0', '1.1.0'] };
const CONFIG = '{"cniVersion":"1.0.0","name":"net1","type":"t"}';
const DEL = { CNI_COMMAND: 'DEL', CNI_CONTAINERID: 'c1', CNI_IFNAME: 'eth0', CNI_PATH: '/nonexistent' };
const handlers = (del: () => unknown = () => {}) => ({ add: () => ({ cniVersion: '1.0.0', ips: [] }), del, check: () => {} });
const savedEnv = process.env;

beforeEach(() => {
  io.events.length = 0;
  io.stdin = async () => Buffer.from(CONFIG);
  vi.spyOn(process, 'exit').mockImplementation(((code?: number) => {
    io.events.push(`exit ${String(code)}`);
  }) as never);
});
afterEach(() => {
  process.env = savedEnv;
  process.exitCode = undefined;
  vi.restoreAllMocks();
});

async function run(env: Record<string, string>, funcs: object = handlers(), info: object = INFO): Promise<{ events: string[]; exitCode: typeof process.exitCode }> {
  process.env = { ...env };
  await pluginMain(funcs as never, info as never);
  return { events: [...io.events], exitCode: process.exitCode };
}

describe('pluginMain in-process', () => {
  it('without a command, says what it is on stderr alone and leaves the process to end by itself', async () => {
    expect(await run({}, handlers(), { ...INFO, about: 'netns test plugin' })).toEqual({
      events: ['note', 'write 2 netns test plugin\nCNI protocol versions supported: 1.0.0, 1.1.0\n'],
      exitCode: undefined,
    });
    io.events.length = 0;
    expect((await run({})).events).toEqual(['note', 'write 2 CNI protocol versions supported: 1.0.0, 1.1.0\n']);
  });

  it('answers VERSION on stdout alone, without reading stdin or ending the process', async () => {
    io.stdin = () => Promise.reject(new Error('stdin was read'));
    expect(await run({ CNI_COMMAND: 'VERSION' })).toEqual({
      events: ['note', 'write 1 {"cniVersion":"1.1.0","supportedVersions":["1.0.0","1.1.0"]}\n'],
      exitCode: undefined,
    });
  });

  it('after a successful command with nothing to print, writes nothing and exits once the streams are flushed', async () => {
    expect(await run(DEL)).toEqual({ events: ['note', 'flushed', 'exit undefined'], exitCode: undefined });
  });

  it("prints a failure's error object on stdout, sets exit code 1, and exits once it is written", async () => {
    const del = () => {
      throw new CniError(11, 'try again', 'pool busy');
    };
    expect(await run(DEL, handlers(del))).toEqual({
      events: ['note', 'write 1 {"cniVersion":"1.0.0","code":11,"msg":"try again","details":"pool busy"}\n', 'flushed', 'exit undefined'],
      exitCode: 1,
    });
  });

  it('answers a stdin it cannot read with code 5, naming the reason', async () => {
    io.stdin = () => Promise.reject(Object.assign(new Error('EIO: i/o error, read'), { code: 'EIO' }));
    const { events, exitCode } = await run(DEL);
    expect(exitCode).toBe(1);
    expect(events[1]).toBe('write 1 {"cniVersion":"1.1.0","code":5,"msg":"error reading the configuration from stdin: EIO: i/o error, read"}\n');
  });
});

describe('pluginMain misuse, before anything is read or written (ERR_NETNS_INVALID_ARG)', () => {
  const refused = (message: string) => expect.objectContaining({ code: 'ERR_NETNS_INVALID_ARG', message });

  it('names a missing handler, and says which may be left out', async () => {
    await expect(run(DEL, { add: () => {}, del: () => {} })).rejects.toEqual(refused('pluginMain needs check as a function'));
    await expect(run(DEL, { ...handlers(), gc: 5 })).rejects.toEqual(refused('pluginMain needs gc as a function or left out'));
    await expect(run(DEL, { ...handlers(), status: null })).rejects.toEqual(refused('pluginMain needs status as a function or left out'));
    await expect(pluginMain(undefined as never, INFO)).rejects.toEqual(refused('pluginMain needs add as a function'));
    expect(io.events).toEqual([]);
  });

  it('needs a non-empty list of spec versions, every one of them known', async () => {
    const message = 'pluginMain needs info.versions: a non-empty list of spec versions (0.1.0 to 1.1.0)';
    for (const info of [undefined, {}, { versions: [] }, { versions: '1.0.0' }, { versions: ['1.0.0', '9.9.9'] }]) {
      await expect(pluginMain(handlers() as never, info as never), JSON.stringify(info)).rejects.toEqual(refused(message));
    }
    expect(io.events).toEqual([]);
  });
});
