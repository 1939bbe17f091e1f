// What a pool thread inherits of the caller's node options: its loaders
// (anchored to the starting directory), never the main script's options,
// whether they come in execArgv or in NODE_OPTIONS.
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { workerEnv, workerExecArgv } from '../../dist/run/pool/worker-exec-argv.js';

const here = process.cwd();

describe('workerExecArgv', () => {
  it("drops the main script's, the test runner's and break-at-start options with their values", () => {
    expect(workerExecArgv(['--input-type', 'module', '-e', 'code()', '--test', '--test-reporter', 'tap', '--inspect-brk=9229', '--no-warnings'])).toEqual([
      '--no-warnings',
    ]);
    expect(workerExecArgv(['--input-type=module', '-p', '1 + 1', '--watch-path=src', '-C', 'dev'])).toEqual(['-C', 'dev']);
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
