// One CNI call answered in-process (handleCall: what pluginMain and the
// resident daemon run): each refusal of the configuration and of the verb for
// its version with its exact error object, the answers without a result, and
// the misuse of handleCall itself.
import { describe, expect, it } from 'vitest';
import { handleCall } from '../../dist/cni/index.js';

const ENV = { CNI_COMMAND: 'ADD', CNI_CONTAINERID: 'c1', CNI_IFNAME: 'eth0', CNI_NETNS: '/proc/self/ns/net', CNI_NETNS_OVERRIDE: '1', CNI_PATH: '/nonexistent' };
const INFO = { versions: ['0.4.0', '1.0.0', '1.1.0'] };
const RESULT = { cniVersion: '1.1.0', ips: [] };
const FUNCS = { add: () => RESULT, del: () => {}, check: () => {}, gc: () => {} };

async function answer(stdin: string, env: Record<string, string> = ENV, funcs: object = FUNCS, info: object = INFO) {
  const outcome = await handleCall(funcs as never, info as never, env, async () => Buffer.from(stdin));
  const out = outcome.stdout.toString();
  return { exitCode: outcome.exitCode, json: out === '' ? undefined : JSON.parse(out), stderr: outcome.stderr };
}
const errorObject = (code: number, msg: string, extra: object = {}, cniVersion = '1.1.0') => ({ exitCode: 1, json: { cniVersion, code, msg, ...extra }, stderr: '' });

describe('handleCall', () => {
  it('answers ADD with its result, and DEL with nothing at all', async () => {
    expect(await answer('{"cniVersion":"1.1.0","name":"n","type":"t"}')).toEqual({ exitCode: 0, json: RESULT, stderr: '' });
    expect(await answer('{"cniVersion":"1.1.0","name":"n","type":"t"}', { ...ENV, CNI_COMMAND: 'DEL' })).toEqual({ exitCode: 0, json: undefined, stderr: '' });
  });

  it('answers VERSION with every version the plugin supports, without reading stdin', async () => {
    const outcome = await handleCall(FUNCS as never, INFO, { CNI_COMMAND: 'VERSION' }, () => Promise.reject(new Error('read')));
    expect(JSON.parse(outcome.stdout.toString())).toEqual({ cniVersion: '1.1.0', supportedVersions: ['0.4.0', '1.0.0', '1.1.0'] });
  });

  it('says what it is on stderr without a command', async () => {
    expect(await answer('', {}, FUNCS, { ...INFO, about: 'test plugin v1' })).toEqual({ exitCode: 0, json: undefined, stderr: 'test plugin v1\nCNI protocol versions supported: 0.4.0, 1.0.0, 1.1.0\n' });
  });

  it('refuses a configuration that is not a JSON object (6)', async () => {
    const syntax = (() => {
      try {
        return JSON.parse('{');
      } catch (error) {
        return (error as Error).message;
      }
    })();
    expect(await answer('{')).toEqual(errorObject(6, `error decoding the network configuration: ${syntax}`));
    for (const text of ['[]', 'null', '"n"']) expect(await answer(text), text).toEqual(errorObject(6, 'error decoding the network configuration: it is not a JSON object'));
  });

  it('refuses a missing or malformed network name (7), giving the name', async () => {
    expect(await answer('{"cniVersion":"1.0.0","type":"t"}')).toEqual(errorObject(7, 'missing network name', {}, '1.0.0'));
    expect(await answer('{"cniVersion":"1.0.0","name":"","type":"t"}')).toEqual(errorObject(7, 'missing network name', {}, '1.0.0'));
    expect(await answer('{"cniVersion":"1.0.0","name":"a b","type":"t"}')).toEqual(errorObject(7, 'invalid characters in the network name', { details: '"a b"' }, '1.0.0'));
    expect(await answer('{"cniVersion":"1.0.0","name":7,"type":"t"}')).toEqual(errorObject(7, 'invalid characters in the network name', { details: '7' }, '1.0.0'));
  });

  it('refuses a verb the configuration\'s version predates (1), saying when it came', async () => {
    const gc = { ...ENV, CNI_COMMAND: 'GC' };
    expect(await answer('{"cniVersion":"1.0.0","name":"n","type":"t"}', gc)).toEqual(errorObject(1, 'config version does not allow GC', { details: 'GC came in spec 1.1.0; the config is 1.0.0' }, '1.0.0'));
    expect(await answer('{"cniVersion":"1.1.0","name":"n","type":"t"}', gc)).toEqual({ exitCode: 0, json: undefined, stderr: '' });
  });

  it('refuses a configuration version the plugin does not support (1), listing those it does; no version or an empty one is 0.1.0', async () => {
    const details = 'config is "0.3.0", plugin supports ["0.4.0", "1.0.0", "1.1.0"]';
    expect(await answer('{"cniVersion":"0.3.0","name":"n","type":"t"}')).toEqual(errorObject(1, 'incompatible CNI versions', { details }, '0.3.0'));
    for (const version of ['', undefined]) {
      expect(await answer(JSON.stringify({ cniVersion: version, name: 'n', type: 't' }))).toEqual(errorObject(1, 'incompatible CNI versions', { details: details.replace('0.3.0', '0.1.0') }, '0.1.0'));
    }
    expect(await answer('{"cniVersion":"1.0","name":"n","type":"t"}')).toEqual(errorObject(1, 'incompatible CNI versions', { details: details.replace('0.3.0', '1.0') }, '1.0')); // malformed: supported by none
  });

  it('answers an ADD handler that returns no result with an internal error (999)', async () => {
    expect(await answer('{"cniVersion":"1.1.0","name":"n","type":"t"}', ENV, { ...FUNCS, add: () => undefined })).toEqual(errorObject(999, "the plugin's ADD handler returned no result"));
  });

  it('answers GC and STATUS with success when the plugin has no handler for them', async () => {
    const { gc: _gc, ...withoutGc } = FUNCS;
    for (const command of ['GC', 'STATUS']) {
      expect(await answer('{"cniVersion":"1.1.0","name":"n","type":"t"}', { CNI_COMMAND: command, CNI_PATH: '/nonexistent' }, withoutGc), command).toEqual({ exitCode: 0, json: undefined, stderr: '' });
    }
  });

  it("refuses the caller's own namespace as CNI_NETNS unless CNI_NETNS_OVERRIDE says so, before the handler runs", async () => {
    let ran = 0;
    const add = () => (ran++, RESULT);
    const { CNI_NETNS_OVERRIDE: _override, ...env } = ENV;
    const refused = await answer('{"cniVersion":"1.1.0","name":"n","type":"t"}', env, { ...FUNCS, add });
    expect(refused).toMatchObject({ exitCode: 1, json: { code: 8, msg: 'CNI_NETNS "/proc/self/ns/net" is the plugin\'s own network namespace' } });
    expect(ran).toBe(0);
    expect(await answer('{"cniVersion":"1.1.0","name":"n","type":"t"}', ENV, { ...FUNCS, add })).toMatchObject({ exitCode: 0 });
    expect(ran).toBe(1);
  });

  it('checks CNI_NETNS before the handler: ADD and CHECK need a namespace, DEL is told it is gone, GC and STATUS have none', async () => {
    const seen: [string, boolean][] = [];
    const record = (args: { command: string; netnsGone: boolean }) => void seen.push([args.command, args.netnsGone]);
    const funcs = { add: (args: never) => (record(args), RESULT), del: record, check: record, gc: record, status: record };
    const config = '{"cniVersion":"1.1.0","name":"n","type":"t"}';
    const missing = '/nonexistent/netns';
    for (const command of ['ADD', 'CHECK']) {
      const outcome = await answer(config, { ...ENV, CNI_COMMAND: command, CNI_NETNS: missing }, funcs);
      expect(outcome, command).toMatchObject({ exitCode: 1, json: { code: 8, msg: `CNI_NETNS "${missing}" is not a usable network namespace`, details: expect.stringContaining('ENOENT') } });
    }
    for (const netns of [missing, '/proc/self/status', '']) {
      expect(await answer(config, { ...ENV, CNI_COMMAND: 'DEL', CNI_NETNS: netns }, funcs), netns).toMatchObject({ exitCode: 0 });
    }
    await answer(config, { ...ENV, CNI_COMMAND: 'DEL' }, funcs); // a namespace that is there
    for (const command of ['GC', 'STATUS']) await answer(config, { CNI_COMMAND: command, CNI_PATH: '/nonexistent', CNI_NETNS: missing }, funcs);
    expect(seen).toEqual([['DEL', true], ['DEL', true], ['DEL', true], ['DEL', false], ['GC', false], ['STATUS', false]]);
    const { CNI_NETNS_OVERRIDE: _override, ...own } = ENV;
    expect(await answer(config, { ...own, CNI_COMMAND: 'DEL' }, funcs)).toMatchObject({
      exitCode: 1,
      json: { code: 8, details: "a runtime passes the container's; test harnesses set CNI_NETNS_OVERRIDE=1" },
    });
  });

  it('refuses its own misuse (ERR_NETNS_INVALID_ARG), answering nothing', async () => {
    const stdin = async () => Buffer.from('{}');
    const misuse = (message: string) => ({ code: 'ERR_NETNS_INVALID_ARG', message });
    await expect(handleCall({ add: () => RESULT } as never, INFO, ENV, stdin)).rejects.toMatchObject(misuse('handleCall needs del as a function'));
    await expect(handleCall(FUNCS as never, INFO, null as never, stdin)).rejects.toMatchObject(misuse("handleCall needs env: the call's environment variables (an object)"));
    await expect(handleCall(FUNCS as never, INFO, ENV, Buffer.from('{}') as never)).rejects.toMatchObject(misuse("handleCall needs readStdin: a function resolving with the configuration's bytes"));
    await expect(handleCall(FUNCS as never, INFO, ENV, stdin, 'fast' as never)).rejects.toMatchObject(misuse("handleCall's options must be an object"));
    await expect(handleCall(FUNCS as never, INFO, ENV, stdin, { signal: {} } as never)).rejects.toMatchObject(misuse("handleCall's options.signal must be an AbortSignal"));
    await expect(handleCall(FUNCS as never, INFO, ENV, stdin, { hostNs: '/proc/self/ns/net' } as never)).rejects.toMatchObject(misuse("handleCall's options.hostNs must be a NetNS"));
    await expect(handleCall(FUNCS as never, INFO, ENV, stdin, null as never)).rejects.toMatchObject({ code: 'ERR_NETNS_INVALID_ARG', message: "handleCall's options must be an object" });
    await expect(handleCall(FUNCS as never, { ...INFO, about: 7 } as never, ENV, stdin)).rejects.toMatchObject({ code: 'ERR_NETNS_INVALID_ARG', message: 'info.about must be a string' });
  });
});
