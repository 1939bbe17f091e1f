// Delegation as a plugin relies on it: the delegate is found in CNI_PATH, gets
// this process's environment with CNI_COMMAND set to the verb and the same
// configuration bytes, and its answer (a result by its own version, or an
// error object, or only stderr) comes back typed. The delegates here are tiny
// sh scripts that log what they were given.
import { getEventListeners } from 'node:events';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { CniError, delegate, delegateAdd, delegateVersions, execAdd, execAddThen, execCheck, execDel, execGc, execPlugin, execStatus, findInPath, ipamType, type NetConf } from '../../dist/cni/index.js';
import { pluginFailure, readPluginResult, runPlugin } from '../../dist/cni/invoke.js';

// The module invoke.ts takes its pause from (process.getBuiltinModule gives this same object).
const timers = process.getBuiltinModule('node:timers/promises');
const dir = mkdtempSync(join(tmpdir(), 'cni-invoke-'));
const bin = join(dir, 'bin');
const other = join(dir, 'other');
const later = join(dir, 'later');
const log = join(dir, 'log');
for (const path of [bin, other, later]) mkdirSync(path);

const RESULT_040 = '{"cniVersion":"0.4.0","ips":[{"version":"4","address":"10.7.0.2/24","gateway":"10.7.0.1"}],"routes":[{"dst":"0.0.0.0/0"}],"dns":{}}';

/** A delegate: logs its command, keeps its stdin and environment marks, then runs `body`. */
function script(name: string, body: string, where = bin): string {
  const path = join(where, name);
  writeFileSync(
    path,
    `#!/bin/sh\necho "$CNI_COMMAND" >> ${log}\ncat > ${dir}/stdin-${name}\necho "$TEST_MARK $CNI_COMMAND $CNI_CONTAINERID \${CNI_IFNAME-unset}" > ${dir}/env-${name}\n${body}\n`,
    { mode: 0o755 },
  );
  return path;
}

script('ipam-ok', `echo "ipam-ok says hello" >&2\n[ "$CNI_COMMAND" = ADD ] && echo '${RESULT_040}'\nexit 0`);
script('ipam-bare', `echo '{"ip4":{"ip":"10.8.0.2/24"}}'`);
script('ipam-error', `echo '{"cniVersion":"1.0.0","code":11,"msg":"try again","details":"pool busy"}'\nexit 1`);
script('ipam-stderr', 'echo "disk full" >&2\nexit 3');
script('ipam-silent', 'exit 2');
script('ipam-garbage', 'echo "panic: runtime error"\nexit 2');
script('ipam-notjson', 'echo "ok"');
mkdirSync(join(other, 'ipam-ok')); // a directory of the name, earlier in the path, is skipped
script('ipam-ok', 'echo shadowed; exit 9', later);

const saved = { ...process.env };
beforeAll(() => {
  process.env.CNI_PATH = `${other}:${bin}:${later}`;
  process.env.CNI_COMMAND = 'VERSION'; // the delegate's must be the verb, not ours
  process.env.CNI_CONTAINERID = 'c-invoke';
  process.env.CNI_IFNAME = 'eth-host';
  process.env.TEST_MARK = 'mark-1';
});
afterEach(() => rmSync(log, { force: true }));
afterAll(() => {
  process.env = saved;
  rmSync(dir, { recursive: true, force: true });
});

const configText = (cniVersion: string, type = 'ipam-ok'): string => JSON.stringify({ cniVersion, name: 'net1', type: 'ptp', ipam: { type } });
const input = (cniVersion: string, type = 'ipam-ok'): { config: NetConf; stdin: Buffer } => {
  const text = configText(cniVersion, type);
  return { config: JSON.parse(text) as NetConf, stdin: Buffer.from(text) };
};
const commands = (): string[] => readFileSync(log, 'utf8').trim().split('\n');

describe('findInPath', () => {
  it('gives the first regular file of that name, in path order', async () => {
    expect(await findInPath('ipam-ok', [join(dir, 'missing'), other, bin, later])).toBe(join(bin, 'ipam-ok'));
  });

  it('refuses an empty name or one with a separator (7), no directories or no match (4)', async () => {
    await expect(findInPath('', [bin])).rejects.toMatchObject({ code: 7, message: 'invalid plugin name ""' });
    await expect(findInPath('../bin/ipam-ok', [other])).rejects.toMatchObject({ code: 7, message: 'invalid plugin name "../bin/ipam-ok"' });
    await expect(findInPath('ipam-ok', [])).rejects.toMatchObject({ code: 4, message: 'CNI_PATH is empty: cannot find plugin "ipam-ok"' });
    await expect(findInPath('dhcp-nope', [bin, other])).rejects.toMatchObject({ code: 4, message: `failed to find plugin "dhcp-nope" in CNI_PATH [${bin} ${other}]` });
  });

  it('refuses what is not a name and a list (ERR_NETNS_INVALID_ARG)', async () => {
    const message = 'findInPath takes a plugin name and a list of directories';
    await expect(findInPath(7 as never, [bin])).rejects.toMatchObject({ code: 'ERR_NETNS_INVALID_ARG', message });
    await expect(findInPath('ipam-ok', bin as never)).rejects.toMatchObject({ code: 'ERR_NETNS_INVALID_ARG', message });
  });
});

describe('delegateAdd and delegate', () => {
  it('runs the delegate with our environment, CNI_COMMAND set to the verb, and the same stdin bytes', async () => {
    const { stdin } = input('0.4.0');
    await delegateAdd('ipam-ok', stdin);
    await delegate('DEL', 'ipam-ok', stdin);
    expect(commands()).toEqual(['ADD', 'DEL']);
    expect(readFileSync(join(dir, 'env-ipam-ok'), 'utf8')).toBe('mark-1 DEL c-invoke eth-host\n');
    expect(readFileSync(join(dir, 'stdin-ipam-ok'))).toEqual(stdin);
  });

  it('returns the result read by its own version, in the current shape', async () => {
    expect(await delegateAdd('ipam-ok', configText('1.0.0'))).toEqual({
      cniVersion: '1.1.0',
      ips: [{ address: '10.7.0.2/24', gateway: '10.7.0.1' }],
      routes: [{ dst: '0.0.0.0/0' }],
      dns: {},
    });
  });

  it("reads a result without cniVersion by the configuration's", async () => {
    expect((await delegateAdd('ipam-bare', configText('0.2.0'))).ips).toEqual([{ address: '10.8.0.2/24' }]);
    await expect(delegateAdd('ipam-bare', configText('1.0.0'))).rejects.toMatchObject({ code: 6 });
  });

  it("passes on the delegate's error object, code and all", async () => {
    const error = await delegate('CHECK', 'ipam-error', configText('1.0.0')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CniError);
    expect(error).toMatchObject({ code: 11, message: 'try again', details: 'pool busy' });
  });

  it('reports stderr when stdout is empty, else how it exited, else unreadable stdout (999)', async () => {
    await expect(delegate('DEL', 'ipam-stderr', configText('1.0.0'))).rejects.toMatchObject({ code: 999, message: expect.stringMatching(/exit status 3.*disk full/) });
    await expect(delegate('DEL', 'ipam-silent', configText('1.0.0'))).rejects.toMatchObject({ code: 999, message: expect.stringContaining('no error message (exit status 2)') });
    await expect(delegate('DEL', 'ipam-garbage', configText('1.0.0'))).rejects.toMatchObject({ code: 999, message: expect.stringContaining('panic: runtime error') });
    await expect(delegateAdd('ipam-notjson', configText('1.0.0'))).rejects.toMatchObject({ code: 6 });
  });

  it('refuses ADD or VERSION through delegate (ERR_NETNS_INVALID_ARG): ADD has a result, delegateAdd reads it', async () => {
    await expect(delegate('ADD' as never, 'ipam-ok', configText('1.0.0'))).rejects.toMatchObject({ code: 'ERR_NETNS_INVALID_ARG', message: 'delegate runs DEL, CHECK, GC or STATUS, not ADD' });
    expect(existsSync(log)).toBe(false);
  });

  it('forwards GC and STATUS as it does DEL and CHECK', async () => {
    for (const command of ['DEL', 'CHECK', 'GC', 'STATUS'] as const) await delegate(command, 'ipam-ok', configText('1.1.0'));
    expect(commands()).toEqual(['DEL', 'CHECK', 'GC', 'STATUS']);
  });

  it('says CNI_PATH is empty when the environment has none (4)', async () => {
    const empty = { code: 4, message: 'CNI_PATH is empty: cannot find plugin "ipam-ok"' };
    await expect(delegate('DEL', 'ipam-ok', configText('1.0.0'), { CNI_COMMAND: 'DEL' })).rejects.toMatchObject(empty);
    await expect(delegateAdd('ipam-ok', configText('1.0.0'), {})).rejects.toMatchObject(empty);
    await expect(delegateVersions('ipam-ok', {})).rejects.toMatchObject(empty);
  });

  it('names the delegate whose result it cannot read', async () => {
    script('ipam-bad-ips', `echo '{"cniVersion":"1.0.0","ips":"10.0.0.1"}'`);
    await expect(delegateAdd('ipam-bad-ips', configText('1.0.0'))).rejects.toMatchObject({ code: 6, message: 'the result of ipam-bad-ips.ips must be an array' });
  });

  it("reads a result by its own version, and by the configuration's when it states none or an empty one", () => {
    expect(readPluginResult('{"cniVersion":"0.4.0","ips":[]}', '1.0.0', 'p').version).toBe('0.4.0');
    expect(readPluginResult('{"cniVersion":"","ips":[]}', '1.0.0', 'p').version).toBe('1.0.0');
    expect(readPluginResult('{"ips":[]}', '1.0.0', 'p').version).toBe('1.0.0');
  });

  it('refuses an environment that is not an object, naming the function, before running anything', async () => {
    const refused = (caller: string) => ({ code: 'ERR_NETNS_INVALID_ARG', message: `${caller} takes the call's environment as an object (CmdArgs.env)` });
    await expect(delegateAdd('ipam-ok', configText('1.0.0'), null as never)).rejects.toMatchObject(refused('delegateAdd'));
    await expect(delegate('DEL', 'ipam-ok', configText('1.0.0'), 'CNI_PATH=/bin' as never)).rejects.toMatchObject(refused('delegate'));
    await expect(delegateVersions('ipam-ok', null as never)).rejects.toMatchObject(refused('delegateVersions'));
    await expect(delegateAdd('ipam-ok', 42 as never)).rejects.toMatchObject({ message: "delegateAdd takes the configuration's bytes, a Buffer or a string" });
    expect(existsSync(log)).toBe(false);
  });

  it('refuses a configuration that is not JSON, or states no readable version (6), before the delegate allocates anything', async () => {
    await expect(delegateAdd('ipam-ok', '{"cniVersion":')).rejects.toMatchObject({ code: 6, message: expect.stringMatching(/^the configuration given to a delegate is not JSON: ./) });
    await expect(delegateAdd('ipam-ok', '{"cniVersion":7}')).rejects.toMatchObject({ code: 6, message: expect.stringMatching(/^cniVersion must be a string/) });
    expect(existsSync(log)).toBe(false);
  });

  it('names the delegate whose result is not JSON (6), and reads a result whose cniVersion is empty by the configuration\'s', async () => {
    await expect(delegateAdd('ipam-notjson', configText('1.0.0'))).rejects.toMatchObject({ code: 6, message: expect.stringMatching(/^plugin ipam-notjson printed a result that is not JSON: ./) });
    script('ipam-empty-version', `echo '{"cniVersion":"","ip4":{"ip":"10.9.0.2/24"}}'`);
    expect((await delegateAdd('ipam-empty-version', configText('0.2.0'))).ips).toEqual([{ address: '10.9.0.2/24' }]);
  });
});

describe('delegateVersions', () => {
  it("gives the delegate's supportedVersions, asking as an old skel needs", async () => {
    script('versions', `[ -n "$CNI_NETNS" ] && [ -n "$CNI_IFNAME" ] && echo '{"cniVersion":"1.0.0","supportedVersions":["0.4.0","1.0.0"]}'`);
    expect(await delegateVersions('versions')).toEqual(['0.4.0', '1.0.0']);
    expect(commands()).toEqual(['VERSION']);
  });

  it('is 0.1.0 for a plugin from before VERSION, and code 6 for an answer without versions', async () => {
    script('ancient', `echo '{"code":4,"msg":"unknown CNI_COMMAND: VERSION"}'\nexit 1`);
    expect(await delegateVersions('ancient')).toEqual(['0.1.0']);
    script('confused', `echo '{"cniVersion":"1.0.0"}'`);
    await expect(delegateVersions('confused')).rejects.toMatchObject({ code: 6 });
  });

  it('gives an old skel a value for each variable it requires, CNI_PATH included', async () => {
    script('old-skel', `echo "$CNI_NETNS $CNI_IFNAME $CNI_PATH" > ${dir}/old-skel-env\necho '{"supportedVersions":["0.3.1"]}'`);
    expect(await delegateVersions('old-skel')).toEqual(['0.3.1']);
    expect(readFileSync(join(dir, 'old-skel-env'), 'utf8')).toBe('dummy dummy dummy\n');
  });

  it('passes on any other VERSION failure', async () => {
    script('version-broken', `echo '{"code":11,"msg":"try again later"}'\nexit 1`);
    await expect(delegateVersions('version-broken')).rejects.toMatchObject({ code: 11, message: 'try again later' });
  });

  it('refuses an answer that is not an object with a list of texts (6), quoting it', async () => {
    for (const answer of ['null', '7', '{"supportedVersions":"1.0.0"}', '{"supportedVersions":["1.0.0",1]}', 'not json']) {
      script('odd-versions', `echo '${answer}'`);
      await expect(delegateVersions('odd-versions'), answer).rejects.toMatchObject({ code: 6, message: `plugin odd-versions answered VERSION without a list of versions: ${answer}` });
    }
  });
});

describe('execPlugin', () => {
  it('retries a plugin binary busy being written (ETXTBSY) and runs it once it is closed', async () => {
    const path = script('busy', `echo '${RESULT_040}'`);
    const writer = openSync(path, 'r+');
    // The pause between attempts is where the writer finishes: the first attempt must fail, the second run it.
    const pause = vi.spyOn(timers, 'setTimeout').mockImplementation((async () => closeSync(writer)) as never);
    try {
      const stdout = await execPlugin(path, configText('0.4.0'), { ...process.env, CNI_COMMAND: 'ADD' });
      expect(JSON.parse(stdout.toString())).toMatchObject({ cniVersion: '0.4.0' });
      expect(pause.mock.calls).toEqual([[1000]]);
    } finally {
      pause.mockRestore();
    }
    expect(commands()).toEqual(['ADD']);
  });

  it('leaves out of the plugin\'s environment a variable set to undefined, as child_process does', async () => {
    await execPlugin(join(bin, 'ipam-ok'), '{}', { PATH: process.env.PATH, CNI_COMMAND: 'VERSION', TEST_MARK: undefined, CNI_CONTAINERID: 'c-env' });
    expect(readFileSync(join(dir, 'env-ipam-ok'), 'utf8')).toBe(' VERSION c-env unset\n');
  });

  it('refuses stdin that is not bytes, before running anything (ERR_NETNS_INVALID_ARG)', async () => {
    await expect(execPlugin(join(bin, 'ipam-ok'), { cniVersion: '1.0.0' } as never, process.env)).rejects.toMatchObject({ code: 'ERR_NETNS_INVALID_ARG', message: "execPlugin takes the configuration's bytes, a Buffer or a string" });
    const takes = 'execPlugin takes a path, the configuration bytes and an environment object';
    await expect(execPlugin(7 as never, '{}', process.env)).rejects.toMatchObject({ code: 'ERR_NETNS_INVALID_ARG', message: takes });
    await expect(execPlugin(join(bin, 'ipam-ok'), '{}', null as never)).rejects.toMatchObject({ code: 'ERR_NETNS_INVALID_ARG', message: takes });
    await expect(execPlugin(join(bin, 'ipam-ok'), '{}', 'CNI_COMMAND=ADD' as never)).rejects.toMatchObject({ code: 'ERR_NETNS_INVALID_ARG', message: takes });
    await expect(execPlugin(join(bin, 'ipam-ok'), '{}', process.env, {} as never)).rejects.toMatchObject({ code: 'ERR_NETNS_INVALID_ARG', message: "execPlugin's signal must be an AbortSignal" });
    await expect(delegateAdd('ipam-ok', 42 as never)).rejects.toMatchObject({ code: 'ERR_NETNS_INVALID_ARG' });
    expect(existsSync(log)).toBe(false);
  });

  it('gives the plugin exactly the environment asked for, no more', async () => {
    const stdout = await execPlugin('/usr/bin/env', '', { A: '1', B: undefined, C: 'x=y' });
    expect(stdout.toString()).toBe('A=1\nC=x=y\n');
  });

  it('refuses a variable that execve would read as another (ERR_NETNS_INVALID_ARG), running nothing', async () => {
    for (const env of [{ '': 'x' }, { 'A=B': 'x' }, { A: 'x\0B=y' }, { 'A\0': 'x' }]) {
      const name = JSON.stringify(Object.keys(env)[0]);
      await expect(execPlugin(join(bin, 'ipam-ok'), '{}', env), name).rejects.toMatchObject({ code: 'ERR_NETNS_INVALID_ARG', message: `a plugin's environment cannot hold ${name}: names without = or NUL, values without NUL` });
    }
    for (const value of [Symbol('x'), {}, () => 'x']) {
      await expect(execPlugin(join(bin, 'ipam-ok'), '{}', { A: value } as never), typeof value).rejects.toMatchObject({ code: 'ERR_NETNS_INVALID_ARG', message: `a plugin's environment variable "A" must be text, got ${typeof value}` });
    }
    expect((await execPlugin('/usr/bin/env', '', { A: 5, B: true } as never)).toString()).toBe('A=5\nB=true\n'); // as child_process writes them
    await expect(execPlugin(`${join(bin, 'ipam-ok')}\0x`, '{}', {})).rejects.toMatchObject({ code: 'ERR_NETNS_INVALID_ARG', message: expect.stringMatching(/^a plugin path cannot hold NUL/) });
    expect(existsSync(log)).toBe(false);
  });

  it('passes a successful plugin\'s stderr on to ours, and writes nothing when it printed none', async () => {
    const write = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      await execPlugin(join(bin, 'ipam-ok'), '{}', { ...process.env, CNI_COMMAND: 'DEL' });
      expect(write.mock.calls.map(([data]) => String(data))).toEqual(['ipam-ok says hello\n']);
      write.mockClear();
      await execPlugin(join(bin, 'ipam-bare'), '{}', { ...process.env, CNI_COMMAND: 'ADD' });
      expect(write).not.toHaveBeenCalled();
    } finally {
      write.mockRestore();
    }
  });

  it('stops listening to the signal once the plugin has ended', async () => {
    const controller = new AbortController();
    await execPlugin(join(bin, 'ipam-ok'), '{}', { ...process.env, CNI_COMMAND: 'DEL' }, controller.signal);
    expect(getEventListeners(controller.signal, 'abort')).toEqual([]);
  });

  it('gives up on a binary that stays busy (999 with ETXTBSY) after six attempts, 1 s apart', async () => {
    const path = script('always-busy', 'exit 0');
    const writer = openSync(path, 'r+');
    const pause = vi.spyOn(timers, 'setTimeout').mockImplementation((async () => {}) as never);
    try {
      await expect(execPlugin(path, '{}', process.env)).rejects.toMatchObject({ code: 999, message: expect.stringMatching(new RegExp(`^cannot run plugin ${path}: .*ETXTBSY`)) });
      expect(pause.mock.calls).toEqual(Array.from({ length: 5 }, () => [1000]));
    } finally {
      pause.mockRestore();
      closeSync(writer);
    }
    expect(existsSync(log)).toBe(false);
  });

  it('does not retry a plugin that cannot run for another reason', async () => {
    const pause = vi.spyOn(timers, 'setTimeout');
    try {
      await expect(execPlugin(join(dir, 'no-such-plugin'), '{}', process.env)).rejects.toMatchObject({ code: 999, message: expect.stringContaining('ENOENT') });
      expect(pause).not.toHaveBeenCalled();
    } finally {
      pause.mockRestore();
    }
  });

  it('refuses a file it cannot execute (999, with the reason)', async () => {
    const path = join(dir, 'not-executable');
    writeFileSync(path, '#!/bin/sh\n', { mode: 0o644 });
    await expect(execPlugin(path, '{}', process.env)).rejects.toMatchObject({ code: 999, message: expect.stringContaining('EACCES') });
  });
});

describe('runPlugin with a spawn of its own (a test harness running plugins in a namespace)', () => {
  const spawn = async () => (await import('node:child_process')).spawn;

  it('gives the plugin its stdin and environment, and returns its exit, stdout and stderr', async () => {
    const exit = await runPlugin(join(bin, 'ipam-stderr'), 'the config', { ...process.env, CNI_COMMAND: 'DEL' }, await spawn());
    expect({ ...exit, stdout: exit.stdout.toString(), stderr: exit.stderr.toString() }).toEqual({ code: 3, signal: null, stdout: '', stderr: 'disk full\n' });
    expect(readFileSync(join(dir, 'stdin-ipam-stderr'), 'utf8')).toBe('the config');
    expect(commands()).toEqual(['DEL']);
    const ok = await runPlugin(join(bin, 'ipam-ok'), '{}', { ...process.env, CNI_COMMAND: 'ADD' }, await spawn());
    expect(JSON.parse(ok.stdout.toString())).toMatchObject({ cniVersion: '0.4.0' });
  });

  it('starts the plugin with no arguments, as runtimes do', async () => {
    const path = join(dir, 'counts-arguments');
    writeFileSync(path, '#!/bin/sh\necho "$#"\n', { mode: 0o755 });
    expect((await runPlugin(path, '', process.env, await spawn())).stdout.toString()).toBe('0\n');
    expect((await runPlugin(path, '', process.env)).stdout.toString()).toBe('0\n');
  });

  it('reports how a plugin that never read its stdin ended, not the broken pipe', async () => {
    const path = join(dir, 'no-reader');
    writeFileSync(path, '#!/bin/sh\nexit 4\n', { mode: 0o755 });
    const exit = await runPlugin(path, Buffer.alloc(4 << 20), process.env, await spawn());
    expect(exit.code).toBe(4);
  });

  it('rejects with 999 when the spawn itself fails', async () => {
    await expect(runPlugin(join(dir, 'missing-plugin'), '{}', process.env, await spawn())).rejects.toMatchObject({ code: 999, message: expect.stringContaining('ENOENT') });
  });
});

describe('IPAM', () => {
  it('forwards each verb to the IPAM plugin, DEL with the attachment it names over the environment', async () => {
    await execCheck(input('1.1.0'));
    await execGc(input('1.1.0'));
    await execStatus(input('1.1.0'));
    await execDel({ ...input('1.1.0'), containerId: 'c-other', ifname: 'net9' });
    expect(commands()).toEqual(['CHECK', 'GC', 'STATUS', 'DEL']);
    expect(readFileSync(join(dir, 'env-ipam-ok'), 'utf8')).toBe('mark-1 DEL c-other net9\n');
    await execDel(input('1.1.0'));
    expect(readFileSync(join(dir, 'env-ipam-ok'), 'utf8')).toBe('mark-1 DEL c-invoke eth-host\n');
  });

  it('refuses what is not an input object or a function, naming the function (ERR_NETNS_INVALID_ARG)', async () => {
    for (const [fn, name] of [[execAdd, 'execAdd'], [execDel, 'execDel'], [execCheck, 'execCheck'], [execGc, 'execGc'], [execStatus, 'execStatus']] as const) {
      await expect((fn as (i: unknown) => Promise<unknown>)(null), name).rejects.toMatchObject({ code: 'ERR_NETNS_INVALID_ARG', message: `${name} takes { config, stdin, env? } (a handler's CmdArgs will do), got null` });
      await expect((fn as (i: unknown) => Promise<unknown>)([]), name).rejects.toMatchObject({ code: 'ERR_NETNS_INVALID_ARG' });
    }
    await expect(execAddThen(input('1.1.0'), 'use' as never)).rejects.toMatchObject({ code: 'ERR_NETNS_INVALID_ARG', message: 'execAddThen needs a function to run with the IPAM result' });
    expect(() => ipamType({ cniVersion: '1.0.0', name: 'n', type: 't', ipam: null } as never)).toThrow(expect.objectContaining({ code: 7, message: 'ipam.type is required: it names the IPAM plugin' }));
    expect(existsSync(log)).toBe(false);
  });

  it('writes a failed release to stderr, and rethrows the failure of the step after IPAM ADD', async () => {
    script('ipam-add-only', `[ "$CNI_COMMAND" = ADD ] && { echo '${RESULT_040}'; exit 0; }\necho '{"code":11,"msg":"release refused"}'\nexit 1`);
    const write = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      const failure = new Error('veth creation failed');
      await expect(execAddThen(input('1.0.0', 'ipam-add-only'), () => Promise.reject(failure))).rejects.toBe(failure);
      expect(write.mock.calls.map(([text]) => String(text))).toEqual(['releasing the IPAM allocation after a failed ADD failed too: release refused\n']);
    } finally {
      write.mockRestore();
    }
  });

  it("runs the plugin ipam.type names; code 7 when it names none", async () => {
    expect((await execAdd(input('0.4.0'))).ips).toEqual([{ address: '10.7.0.2/24', gateway: '10.7.0.1' }]);
    await execDel(input('0.4.0'));
    expect(commands()).toEqual(['ADD', 'DEL']);
    expect(() => ipamType({ cniVersion: '1.0.0', name: 'n', type: 't' })).toThrow(expect.objectContaining({ code: 7 }));
    expect(() => ipamType({ cniVersion: '1.0.0', name: 'n', type: 't', ipam: { type: '' } })).toThrow(expect.objectContaining({ code: 7 }));
  });

  it('execAddThen releases the allocation when a later step fails, and rethrows that failure', async () => {
    const failure = new Error('veth creation failed');
    const error = await execAddThen(input('1.0.0'), () => Promise.reject(failure)).catch((e: unknown) => e);
    expect(error).toBe(failure);
    expect(commands()).toEqual(['ADD', 'DEL']);
  });

  it('execAddThen gives the later steps the result and returns what they return', async () => {
    expect(await execAddThen(input('1.0.0'), (result) => result.ips?.[0]?.address)).toBe('10.7.0.2/24');
    expect(commands()).toEqual(['ADD']);
  });

  it('execAddThen releases the allocation when its signal aborted IPAM ADD, which may have allocated', async () => {
    const error = await execAddThen({ ...input('1.0.0'), signal: AbortSignal.abort() }, () => 'used').catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'AbortError' });
    expect(commands().at(-1)).toBe('DEL');
  });

  it('names ipamType when given what is not a configuration', () => {
    expect(() => ipamType([] as never)).toThrow(expect.objectContaining({ code: 'ERR_NETNS_INVALID_ARG', message: expect.stringMatching(/^ipamType /) }));
  });

  it('execAddThen releases nothing when IPAM ADD itself fails (a DEL could free a live allocation)', async () => {
    script('ipam-refuses', `echo '{"code":999,"msg":"duplicate allocation is not allowed"}'\nexit 1`);
    let ran = false;
    const error = await execAddThen(input('1.0.0', 'ipam-refuses'), () => (ran = true)).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 999, message: 'duplicate allocation is not allowed' });
    expect(ran).toBe(false);
    expect(commands()).toEqual(['ADD']);
  });
});

describe('pluginFailure: what a failed plugin reported', () => {
  const exit = (stdout: string, stderr = '', code: number | null = 1, signal: NodeJS.Signals | null = null) => ({ code, signal, stdout: Buffer.from(stdout), stderr: Buffer.from(stderr) });
  const failure = (stdout: string, stderr?: string, code?: number | null, signal?: NodeJS.Signals | null) => {
    const error = pluginFailure('/bin/p', exit(stdout, stderr, code, signal));
    return { code: error.code, message: error.message, details: error.details };
  };

  it("takes its stdout's error object, code 0 included, details only when text", () => {
    expect(failure('  {"code":11,"msg":"try again","details":"pool busy"}\n')).toEqual({ code: 11, message: 'try again', details: 'pool busy' });
    expect(failure('{"code":0,"msg":"odd"}')).toEqual({ code: 0, message: 'odd', details: '' });
    expect(failure('{"code":7,"msg":"bad","details":{"k":1}}')).toEqual({ code: 7, message: 'bad', details: '' });
  });

  it('reports an error object it cannot take, with the text, as 999', () => {
    for (const stdout of ['{"code":"7","msg":"x"}', '{"code":7}', '{"code":-1,"msg":"x"}', '{"code":1.5,"msg":"x"}', '{"code":7,"msg":5}', 'null', '7', 'panic']) {
      expect(failure(stdout), stdout).toEqual({ code: 999, message: `plugin /bin/p failed (exit status 1) and its error could not be read: ${stdout}`, details: '' });
    }
  });

  it('falls back on its stderr, trimmed, then on how it ended', () => {
    expect(failure(' \n', '  disk full\n', 3)).toEqual({ code: 999, message: 'plugin /bin/p failed (exit status 3): disk full', details: '' });
    expect(failure('', ' \n', null, 'SIGKILL')).toEqual({ code: 999, message: 'plugin /bin/p failed with no error message (killed by SIGKILL)', details: '' });
  });
});
