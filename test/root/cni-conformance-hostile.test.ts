// The conformance runner against plugins that fight it: one that hangs, one
// that writes without end, one that cannot be started, and a run stopped by a
// signal. The runner must end, say what happened, and leave no namespace,
// file or process of its own behind.
//
// A plugin here holds a FIFO open for writing, it and the child it forks: the
// test's reader sees the FIFO open when the plugin runs, and its end once
// every one of them is dead, zombies included (their descriptors are closed
// at death), with no polling.
import { spawn, execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, createReadStream, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync, type ReadStream } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NetNS } from '../../dist/index.js';
import { checkPlugin } from '../../dist/cni/testing/index.js';
import { runCli } from '../helpers/cli.js';
import { CLI_PATH } from '../helpers/cli-path.js';
import { privileged } from '../helpers/privileges.js';

const conf = (type: string) => ({ cniVersion: '1.0.0', name: 'replaced-by-the-runner', type });

// VERSION is answered, so a run gets past it; every other command does what `body` does.
const plugin = (body: string) => `#!/bin/sh
if [ "$CNI_COMMAND" = VERSION ]; then echo '{"cniVersion":"1.0.0","supportedVersions":["1.0.0"]}'; exit 0; fi
${body}
`;

/** The namespaces a process made by the runner still has: cnichk-<pid>-... */
const leftBy = async (pid: number) => (await NetNS.list()).filter(({ name }) => name.startsWith(`cnichk-${pid}-`));

describe.skipIf(!privileged)('the CNI conformance runner against hostile plugins', () => {
  let dir: string;
  let files = 0;
  const file = (name: string, text: string, mode = 0o755): string => {
    const path = join(dir, `${++files}-${name}`);
    writeFileSync(path, text, { mode });
    return path;
  };
  const writeConf = (type: string) => file('conf.json', JSON.stringify(conf(type)), 0o644);

  /** A FIFO, and a plugin that opens it for writing and waits on a child that holds it too. */
  const hangingPlugin = (): { path: string; fifo: string } => {
    const fifo = join(dir, `${++files}-fifo`);
    execFileSync('mkfifo', [fifo]);
    return { fifo, path: file('hang', plugin(`exec 3>'${fifo}'\nsleep 1000 &\nwait`)) };
  };

  /** Resolves when a writer has opened `fifo`; then `ended` resolves once every writer is gone. */
  const watchFifo = async (fifo: string): Promise<{ ended: Promise<unknown> }> => {
    const reader: ReadStream = createReadStream(fifo);
    await once(reader, 'open');
    reader.resume();
    return { ended: once(reader, 'end') };
  };

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'netns-cni-hostile-'));
    chmodSync(dir, 0o755);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('kills a hung call\'s whole process group at the deadline, fails that scenario and runs the next', async () => {
    const { path, fifo } = hangingPlugin();
    const reading = watchFifo(fifo);
    const rows = await checkPlugin({ plugin: path, conf: conf('hang'), only: ['lifecycle', 'netns-gone'], timeoutMs: 1000 });
    expect(rows).toEqual([
      { scenario: 'lifecycle', result: 'FAIL', detail: 'ADD: timed out after 1000 ms: its process group was killed' },
      { scenario: 'netns-gone', result: 'FAIL', detail: 'ADD: timed out after 1000 ms: its process group was killed' },
    ]);
    await (await reading).ended; // the plugin and the sleep it forked are dead
    expect(await leftBy(process.pid)).toEqual([]);
  }, 30_000);

  it('stops reading a plugin that writes without end, kills it and fails the call', async () => {
    const flood = file('flood', plugin('exec yes'));
    const rows = await checkPlugin({ plugin: flood, conf: conf('flood'), only: ['lifecycle'] });
    expect(rows).toEqual([{ scenario: 'lifecycle', result: 'FAIL', detail: 'ADD: printed more than 4 MiB on stdout: its process group was killed' }]);
  }, 30_000);

  it.each(['SIGHUP', 'SIGINT', 'SIGTERM'] as const)('on %s, kills the plugin, deletes its namespaces and files, then dies by that signal', async (signal) => {
    const { path, fifo } = hangingPlugin();
    const runTmp = join(dir, `${++files}-tmp`);
    mkdirSync(runTmp);
    const cli = spawn(process.execPath, [CLI_PATH, 'cni', 'check', path, '--conf', writeConf('hang'), '--only', 'lifecycle'], { stdio: 'ignore', env: { ...process.env, TMPDIR: runTmp } });
    const closed = once(cli, 'close');
    const { ended } = await watchFifo(fifo); // the plugin runs: its namespaces and IPAM directory exist
    cli.kill(signal);
    expect(await closed).toEqual([null, signal]);
    await ended;
    expect(await leftBy(cli.pid!)).toEqual([]);
    expect(readdirSync(runTmp)).toEqual([]);
  }, 30_000);

  describe('a plugin that cannot be started', () => {
    const cases = [
      ['not executable', 'EACCES', () => file('noexec', plugin('exit 0'), 0o644)],
      ['with a #! interpreter that does not exist', 'ENOENT', () => file('badinterp', '#!/nonexistent/interpreter\n')],
      ['with no #! line (a shell would run it; a runtime cannot)', 'ENOEXEC', () => file('noshebang', 'echo run by a shell\n')],
    ] as const;

    it.each(cases)('%s: the API rejects with ERR_NETNS_CNI_PLUGIN_UNRUNNABLE and leaves nothing', async (_, reason, make) => {
      const path = make();
      const error = checkPlugin({ plugin: path, conf: conf('x') });
      await expect(error).rejects.toMatchObject({ code: 'ERR_NETNS_CNI_PLUGIN_UNRUNNABLE', path, message: expect.stringMatching(new RegExp(`^cannot run ${path}: .*\\(${reason}\\)$`)) });
      expect(await leftBy(process.pid)).toEqual([]);
    });

    it.each(cases)('%s: the CLI says why in one line and exits 126', async (_, reason, make) => {
      const path = make();
      const cli = await runCli('cni', 'check', path, '--conf', writeConf('x'));
      expect(cli.stderr).toMatch(new RegExp(`^netns cni check: cannot run ${path}: [^\\n]*\\(${reason}\\)\\n$`));
      expect(cli.code).toBe(126);
      expect(cli.stdout).toBe('');
    });
  });
});
