// What a pool thread inherits of the caller's node options: its loaders
// (anchored to the starting directory), never the main script's options,
// whether they come in execArgv or in NODE_OPTIONS.
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { withoutRefused, workerEnv, workerExecArgv } from '../../dist/run/pool/worker-exec-argv.js';

const here = process.cwd();

describe('workerExecArgv', () => {
  it("drops the main script's, the test runner's and break-at-start options with their values", () => {
    expect(workerExecArgv(['--input-type', 'module', '-e', 'code()', '--test', '--test-reporter', 'tap', '--inspect-brk=9229', '--no-warnings'])).toEqual([
      '--no-warnings',
    ]);
    expect(workerExecArgv(['--input-type=module', '-p', '1 + 1', '--watch-path=src', '-C', 'dev'])).toEqual(['-C', 'dev']);
    expect(workerExecArgv(['--no-warnings', '--import'])).toEqual(['--no-warnings', '--import']); // a loader with no value: left to Node to refuse
  });

  it('keeps loaders, naming a relative one from the directory the program started in', () => {
    expect(workerExecArgv(['-r', './pre.cjs', '--import=./hooks.mjs', '--import', 'tsx', '--require=../up.cjs'])).toEqual([
      '-r',
      `${here}/pre.cjs`,
      `--import=${pathToFileURL(`${here}/hooks.mjs`).href}`,
      '--import',
      'tsx',
      `--require=${here.replace(/\/[^/]*$/, '')}/up.cjs`,
    ]);
  });
});

describe('workerEnv', () => {
  it('filters NODE_OPTIONS as execArgv, keeping quoted words whole', () => {
    const env = workerEnv({ NODE_OPTIONS: '--input-type=module --inspect-brk --require "./my pre.cjs" --max-old-space-size=256', OTHER: 'kept' });
    expect(env).toMatchObject({ NODE_OPTIONS: `--require "${here}/my pre.cjs" --max-old-space-size=256`, OTHER: 'kept' });
  });

  it('reads quotes and backslashes as a shell would, and writes words back so', () => {
    const env = workerEnv({ NODE_OPTIONS: '  --require   "./a \\"b\\" c.cjs"  --title ""  --no-warnings  ' });
    expect(env.NODE_OPTIONS).toBe(`--require "${here}/a \\"b\\" c.cjs" --title "" --no-warnings`);
  });

  it('leaves NODE_OPTIONS out when the caller has none', () => {
    expect(workerEnv({ PATH: '/bin' })).not.toHaveProperty('NODE_OPTIONS');
  });

  it("makes this package's path variables absolute", () => {
    process.env.NETNS_RUNTIME_DIR = 'deploy/netns-runtime';
    try {
      expect(workerEnv(process.env).NETNS_RUNTIME_DIR).toBe(`${here}/deploy/netns-runtime`);
    } finally {
      delete process.env.NETNS_RUNTIME_DIR;
    }
  });
});

describe('withoutRefused', () => {
  // What Node itself refuses for a worker thread, and the error it gives.
  function refusal(execArgv: string[]): unknown {
    try {
      void new Worker('0', { eval: true, execArgv }).terminate();
    } catch (error) {
      return error;
    }
    throw new Error(`a worker took ${execArgv.join(' ')}`);
  }

  it.each([
    [['--title', 'netns', '--no-warnings'], ['--no-warnings']],
    [['--perf-basic-prof', '--no-warnings'], ['--no-warnings']],
    [['--title=netns', '--no-warnings'], ['--no-warnings']],
  ])('drops what Node refused in %j, with its separate value', async (execArgv, kept) => {
    expect(withoutRefused(execArgv, refusal(execArgv))).toEqual(kept);
    await new Worker('0', { eval: true, execArgv: kept }).terminate(); // now taken
  });

  it('says null for another error, an unreadable list, or nothing to drop', () => {
    const execArgv = ['--title', 'netns'];
    expect(withoutRefused(execArgv, new Error('Initiated Worker with invalid execArgv flags: --title'))).toBeNull();
    expect(withoutRefused(execArgv, Object.assign(new Error('invalid, but not how Node says it'), { code: 'ERR_WORKER_INVALID_EXEC_ARGV' }))).toBeNull();
    expect(withoutRefused(['--no-warnings'], refusal(execArgv))).toBeNull();
    expect(withoutRefused(execArgv, undefined)).toBeNull();
  });
});
