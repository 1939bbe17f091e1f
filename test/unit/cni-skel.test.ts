// pluginMain as a runtime meets it: a tiny plugin file is run with CNI_*
// variables and a configuration on stdin, and what it prints, where, and its
// exit code are checked case by case. The plugin's handlers report what they
// were given on stderr (a line starting HANDLER), so a test also sees whether
// a handler ran at all.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { NetNS } from '../../dist/index.js';
import { CniError, handleCall, pluginMain } from '../../dist/cni/index.js';
import { runPlugin, type PluginRun } from '../helpers/cni-run.js';
import { distUrl } from '../helpers/node-child.js';

const dir = mkdtempSync(join(tmpdir(), 'cni-skel-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const RESULT = {
  cniVersion: '1.1.0',
  interfaces: [{ name: 'eth0', mac: '0a:58:0a:01:01:02', sandbox: '/run/netns/x', mtu: 1400 }],
  ips: [
    { interface: 0, address: '10.1.1.2/24', gateway: '10.1.1.1' },
    { interface: 0, address: 'fd00::2/64' },
  ],
  routes: [{ dst: '0.0.0.0/0', gw: '10.1.1.1', mtu: 1400 }, { dst: '::/0' }],
  dns: { nameservers: ['10.1.1.1'] },
};

// TEST_FAIL: "cni" throws a CniError, "plain" an Error, "check" what a CHECK helper finds. TEST_NO_GC leaves gc and status out.
const plugin = join(dir, 'plugin.mjs');
writeFileSync(
  plugin,
  `import { pluginMain, CniError } from ${JSON.stringify(distUrl('cni/index.js'))};
const signalState = (signal) => (signal instanceof AbortSignal ? (signal.aborted ? 'aborted' : 'live') : typeof signal);
const report = (args) => process.stderr.write('HANDLER ' + JSON.stringify({ ...args, stdin: args.stdin.toString(), signal: signalState(args.signal), hostNs: args.hostNs.path }) + '\\n');
const handle = (args) => {
  report(args);
  if (process.env.TEST_FAIL === 'cni') throw new CniError(107, 'the bridge is gone', 'br0');
  if (process.env.TEST_FAIL === 'plain') throw new Error('boom');
};
const checkFails = async (args) => {
  report(args);
  const { checkInterface } = await import(${JSON.stringify(distUrl('cni/plumbing.js'))});
  const { NetNS } = await import(${JSON.stringify(distUrl('index.js'))});
  await checkInterface(NetNS.current(), args.ifname, { cniVersion: '1.1.0' }); // no interface entry: found before the namespace is read
};
const optional = process.env.TEST_NO_GC ? {} : { gc: handle, status: handle };
await pluginMain(
  { add: (args) => (handle(args), ${JSON.stringify(RESULT)}), del: handle, check: process.env.TEST_FAIL === 'check' ? checkFails : handle, ...optional },
  { versions: ['0.2.0', '0.3.1', '0.4.0', '1.0.0', '1.1.0'], about: 'cni-test plugin v0' },
);
`,
);

/** Runs the test plugin; the default input is a 1.1.0 configuration. */
const run = (env: Record<string, string>, input: string | null = '{"cniVersion":"1.1.0","name":"net1","type":"test"}'): Promise<PluginRun> =>
  runPlugin(plugin, env, input);

const attachment = { CNI_CONTAINERID: 'c1', CNI_IFNAME: 'eth0', CNI_PATH: '/opt/cni/bin:/usr/lib/cni' };
// The test's own namespace is a real one that exists; the override lets ADD and CHECK use it.
const ownNetns = { ...attachment, CNI_NETNS: '/proc/self/ns/net', CNI_NETNS_OVERRIDE: '1' };
const config = (cniVersion: string | undefined, extra: object = {}): string => JSON.stringify({ cniVersion, name: 'net1', type: 'test', ...extra });

describe('pluginMain without a command, and VERSION', () => {
  it('prints about and the versions on stderr and exits 0 when CNI_COMMAND is unset', async () => {
    const out = await run({});
    expect(out).toMatchObject({ code: 0, stdout: '', calls: [] });
    expect(out.stderr).toBe('cni-test plugin v0\nCNI protocol versions supported: 0.2.0, 0.3.1, 0.4.0, 1.0.0, 1.1.0\n');
  });

  it('answers VERSION without reading stdin (left open here) and without a handler', async () => {
    const out = await run({ CNI_COMMAND: 'VERSION' }, null);
    expect(out.code).toBe(0);
    expect(out.json).toEqual({ cniVersion: '1.1.0', supportedVersions: ['0.2.0', '0.3.1', '0.4.0', '1.0.0', '1.1.0'] });
    expect(out.calls).toEqual([]);
  });
});

describe('pluginMain: the environment (code 4)', () => {
  it('names every missing required variable in one error, with cniVersion', async () => {
    const out = await run({ CNI_COMMAND: 'ADD', CNI_PATH: '/x' });
    expect(out.code).not.toBe(0);
    expect(out.json).toEqual({ cniVersion: '1.1.0', code: 4, msg: 'required environment variables [CNI_CONTAINERID,CNI_IFNAME,CNI_NETNS] missing' });
    expect(out.calls).toEqual([]);
  });

  it('requires per command what the spec lists: DEL no CNI_NETNS, GC only CNI_PATH', async () => {
    expect((await run({ CNI_COMMAND: 'DEL' })).json).toMatchObject({ code: 4, msg: 'required environment variables [CNI_CONTAINERID,CNI_IFNAME] missing' });
    expect((await run({ CNI_COMMAND: 'GC' })).json).toMatchObject({ code: 4, msg: 'required environment variables [CNI_PATH] missing' });
    expect((await run({ CNI_COMMAND: 'STATUS' })).code).toBe(0);
  });

  it('refuses an unknown command', async () => {
    expect((await run({ CNI_COMMAND: 'ATTACH' })).json).toMatchObject({ code: 4, msg: 'unknown CNI_COMMAND: ATTACH' });
  });

  it('refuses container IDs and interface names Linux or CNI would not take', async () => {
    for (const bad of [{ CNI_CONTAINERID: '-c1' }, { CNI_CONTAINERID: 'c/1' }, { CNI_IFNAME: 'a234567890123456' }, { CNI_IFNAME: '..' }, { CNI_IFNAME: 'eth 0' }, { CNI_IFNAME: 'a:b' }]) {
      const out = await run({ ...ownNetns, CNI_COMMAND: 'ADD', ...bad });
      expect(out.json, JSON.stringify(bad)).toMatchObject({ code: 4 });
      expect(out.calls).toEqual([]);
    }
    expect((await run({ ...ownNetns, CNI_COMMAND: 'ADD', CNI_IFNAME: 'a23456789012345' })).code).toBe(0);
  });
});

describe('pluginMain: the configuration and its version', () => {
  it('refuses invalid JSON (6), a missing or bad name (7)', async () => {
    const env = { ...ownNetns, CNI_COMMAND: 'ADD' };
    expect((await run(env, '{"cniVersion":')).json).toMatchObject({ code: 6 });
    expect((await run(env, '[]')).json).toMatchObject({ code: 6 });
    expect((await run(env, '{"cniVersion":"1.1.0"}')).json).toMatchObject({ cniVersion: '1.1.0', code: 7, msg: 'missing network name' });
    expect((await run(env, '{"cniVersion":"1.0.0","name":"a b"}')).json).toMatchObject({ cniVersion: '1.0.0', code: 7, details: '"a b"' });
  });

  it('takes a missing cniVersion as 0.1.0 and matches versions exactly (code 1 with details)', async () => {
    const env = { ...ownNetns, CNI_COMMAND: 'ADD' };
    const missing = await run(env, '{"name":"net1"}');
    expect(missing.json).toEqual({
      cniVersion: '0.1.0',
      code: 1,
      msg: 'incompatible CNI versions',
      details: 'config is "0.1.0", plugin supports ["0.2.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0"]',
    });
    expect((await run(env, config('0.3.0'))).json).toMatchObject({ code: 1, msg: 'incompatible CNI versions' });
    expect((await run(env, config('1.1'))).json).toMatchObject({ code: 1 });
    expect(missing.calls).toEqual([]);
  });

  it('refuses CHECK before 0.4.0 and GC, STATUS before 1.1.0 without calling the handler', async () => {
    expect((await run({ ...ownNetns, CNI_COMMAND: 'CHECK' }, config('0.3.1'))).json).toMatchObject({ code: 1, msg: 'config version does not allow CHECK' });
    for (const command of ['GC', 'STATUS']) {
      const out = await run({ CNI_COMMAND: command, CNI_PATH: '/x' }, config('1.0.0'));
      expect(out.json).toMatchObject({ cniVersion: '1.0.0', code: 1, msg: `config version does not allow ${command}` });
      expect(out.calls).toEqual([]);
    }
  });
});

describe('pluginMain: handlers and what is printed', () => {
  it("prints ADD's result in the configuration's version", async () => {
    const env = { ...ownNetns, CNI_COMMAND: 'ADD' };
    const v11 = await run(env, config('1.1.0'));
    expect(v11.json).toEqual(RESULT);
    const v10 = (await run(env, config('1.0.0'))).json!;
    expect(v10.cniVersion).toBe('1.0.0');
    expect(v10.interfaces).toEqual([{ name: 'eth0', mac: '0a:58:0a:01:01:02', sandbox: '/run/netns/x' }]);
    expect(v10.routes).toEqual([{ dst: '0.0.0.0/0', gw: '10.1.1.1' }, { dst: '::/0' }]);
    const v04 = (await run(env, config('0.4.0'))).json!;
    expect(v04.ips).toEqual([
      { version: '4', interface: 0, address: '10.1.1.2/24', gateway: '10.1.1.1' },
      { version: '6', interface: 0, address: 'fd00::2/64' },
    ]);
    expect((await run(env, config('0.2.0'))).json).toEqual({
      cniVersion: '0.2.0',
      ip4: { ip: '10.1.1.2/24', gateway: '10.1.1.1', routes: [{ dst: '0.0.0.0/0', gw: '10.1.1.1' }] },
      ip6: { ip: 'fd00::2/64', routes: [{ dst: '::/0' }] },
      dns: { nameservers: ['10.1.1.1'] },
    });
  });

  it('gives the handler the environment, the path list, the stdin bytes and the parsed configuration', async () => {
    const input = config('1.0.0', { ipam: { type: 'host-local' } });
    const env = { ...ownNetns, CNI_COMMAND: 'ADD', CNI_ARGS: 'IgnoreUnknown=1;K8S_POD_NAME=p', CNI_PATH: '/a::/b' };
    const out = await run(env, input);
    expect(out.calls).toEqual([
      {
        command: 'ADD',
        containerId: 'c1',
        ifname: 'eth0',
        netns: '/proc/self/ns/net',
        netnsGone: false,
        args: 'IgnoreUnknown=1;K8S_POD_NAME=p',
        path: ['/a', '/b'],
        env, // the whole environment, for delegates
        stdin: input,
        config: JSON.parse(input),
        signal: 'live', // pluginMain's is never aborted: the runtime kills the process instead
        hostNs: '/proc/thread-self/ns/net', // a plugin process acts where it runs
      },
    ]);
  });

  it('prints nothing for a successful DEL, CHECK, GC and STATUS', async () => {
    for (const [command, env] of [['DEL', ownNetns], ['CHECK', ownNetns], ['GC', { CNI_PATH: '/x' }], ['STATUS', {}]] as const) {
      const out = await run({ ...env, CNI_COMMAND: command });
      expect(out, command).toMatchObject({ code: 0, stdout: '' });
      expect(out.calls.map((call) => call.command)).toEqual([command]);
    }
  });

  it('succeeds for GC and STATUS when the plugin has no handler for them', async () => {
    for (const command of ['GC', 'STATUS']) {
      expect(await run({ CNI_COMMAND: command, CNI_PATH: '/x', TEST_NO_GC: '1' })).toMatchObject({ code: 0, stdout: '', calls: [] });
    }
  });

  it("prints a thrown CniError as is, and a plain Error as code 999 with its message, in the config's version", async () => {
    const env = { ...ownNetns, CNI_COMMAND: 'ADD' };
    const typed = await run({ ...env, TEST_FAIL: 'cni' }, config('0.4.0'));
    expect(typed.code).not.toBe(0);
    expect(typed.json).toEqual({ cniVersion: '0.4.0', code: 107, msg: 'the bridge is gone', details: 'br0' });
    const plain = await run({ ...env, CNI_COMMAND: 'DEL', TEST_FAIL: 'plain' });
    expect(plain.code).not.toBe(0);
    expect(plain.json).toEqual({ cniVersion: '1.1.0', code: 999, msg: 'boom' });
  });

  it("prints a CHECK helper's finding (ERR_NETNS_CNI_CHECK) as code 110 with its message, not 999", async () => {
    const out = await run({ ...ownNetns, CNI_COMMAND: 'CHECK', TEST_FAIL: 'check' });
    expect(out.code).not.toBe(0);
    expect(out.json).toEqual({ cniVersion: '1.1.0', code: 110, msg: 'CHECK: the result has no interface named eth0' });
  });
});

describe('pluginMain: CNI_NETNS, checked before the handler', () => {
  const notNetns = join(dir, 'not-a-netns');
  writeFileSync(notNetns, ''); // what a runtime can leave behind: the mount point without the mount

  it('refuses ADD and CHECK a missing path or a file that is no namespace (code 8), without calling the handler', async () => {
    for (const command of ['ADD', 'CHECK']) {
      for (const netns of [join(dir, 'missing'), notNetns]) {
        const out = await run({ ...attachment, CNI_COMMAND: command, CNI_NETNS: netns });
        expect(out.json, `${command} ${netns}`).toMatchObject({ cniVersion: '1.1.0', code: 8 });
        expect(out.calls).toEqual([]);
      }
    }
  });

  it("refuses the plugin's own namespace for ADD, CHECK and DEL unless CNI_NETNS_OVERRIDE is 1 or true", async () => {
    for (const command of ['ADD', 'CHECK', 'DEL']) {
      const out = await run({ ...attachment, CNI_COMMAND: command, CNI_NETNS: '/proc/self/ns/net' });
      expect(out.json, command).toMatchObject({ code: 8 });
      expect(out.calls).toEqual([]);
    }
    expect((await run({ ...attachment, CNI_COMMAND: 'ADD', CNI_NETNS: '/proc/self/ns/net', CNI_NETNS_OVERRIDE: 'TRUE' })).code).toBe(0);
  });

  it('lets DEL reach its handler, told the namespace is gone, when CNI_NETNS is empty, missing or no namespace', async () => {
    for (const netns of ['', join(dir, 'missing'), notNetns]) {
      const out = await run({ ...attachment, CNI_COMMAND: 'DEL', CNI_NETNS: netns });
      expect(out.code, netns).toBe(0);
      expect(out.calls).toMatchObject([{ command: 'DEL', netns, netnsGone: true }]);
    }
  });
});

describe('pluginMain with handlers on a class', () => {
  it('calls them as methods, so they can use this', async () => {
    const file = join(dir, 'class-plugin.mjs');
    writeFileSync(
      file,
      `import { pluginMain } from ${JSON.stringify(distUrl('cni/index.js'))};
class Plugin {
  address = '10.3.0.2/24';
  add() { return { cniVersion: '1.1.0', ips: [{ address: this.address }] }; }
  del() {}
  check() {}
}
await pluginMain(new Plugin(), { versions: ['1.1.0'] });
`,
    );
    const out = await runPlugin(file, { ...ownNetns, CNI_COMMAND: 'ADD' }, config('1.1.0'));
    expect(out.json).toEqual({ cniVersion: '1.1.0', ips: [{ address: '10.3.0.2/24' }] });
  });
});

describe('pluginMain misuse', () => {
  it('rejects with ERR_NETNS_INVALID_ARG before touching the environment', async () => {
    const noop = (): void => {};
    const add = () => ({ cniVersion: '1.1.0' });
    await expect(pluginMain({ add, del: noop } as never, { versions: ['1.1.0'] })).rejects.toMatchObject({ code: 'ERR_NETNS_INVALID_ARG' });
    await expect(pluginMain({ add, del: noop, check: noop, gc: 1 } as never, { versions: ['1.1.0'] })).rejects.toMatchObject({ code: 'ERR_NETNS_INVALID_ARG' });
    await expect(pluginMain({ add, del: noop, check: noop }, { versions: [] })).rejects.toMatchObject({ code: 'ERR_NETNS_INVALID_ARG' });
    await expect(pluginMain({ add, del: noop, check: noop }, { versions: ['1.2.0'] })).rejects.toMatchObject({ code: 'ERR_NETNS_INVALID_ARG' });
  });
});

describe("handleCall's signal (resident mode's cancellation)", () => {
  const env = { ...ownNetns, CNI_COMMAND: 'ADD' };
  const stdin = async () => Buffer.from(config('1.1.0'));
  const info = { versions: ['1.1.0'] };

  it('gives the handler the signal, and answers its reason when the handler throws it', async () => {
    const controller = new AbortController();
    const seen: AbortSignal[] = [];
    const add = ({ signal }: { signal: AbortSignal }) => {
      seen.push(signal);
      controller.abort(new CniError(999, 'cancelled: the caller went away'));
      signal.throwIfAborted();
      return { cniVersion: '1.1.0' };
    };
    const outcome = await handleCall({ add, del: () => {}, check: () => {} }, info, env, stdin, { signal: controller.signal });
    expect(seen).toEqual([controller.signal]);
    expect({ exitCode: outcome.exitCode, json: JSON.parse(outcome.stdout.toString()) }).toEqual({ exitCode: 1, json: { cniVersion: '1.1.0', code: 999, msg: 'cancelled: the caller went away' } });
  });

  it('runs no handler for a call abandoned before it started', async () => {
    const controller = new AbortController();
    controller.abort(new CniError(999, 'cancelled: a DEL came'));
    let ran = false;
    const outcome = await handleCall({ add: () => ((ran = true), { cniVersion: '1.1.0' }), del: () => {}, check: () => {} }, info, env, stdin, { signal: controller.signal });
    expect(ran).toBe(false);
    expect(JSON.parse(outcome.stdout.toString())).toMatchObject({ code: 999, msg: 'cancelled: a DEL came' });
  });

  it('refuses a signal that is not an AbortSignal, and a hostNs that is not a NetNS', async () => {
    await expect(handleCall({ add: () => ({ cniVersion: '1.1.0' }), del: () => {}, check: () => {} }, info, env, stdin, { signal: {} as AbortSignal })).rejects.toMatchObject({ code: 'ERR_NETNS_INVALID_ARG' });
    await expect(handleCall({ add: () => ({ cniVersion: '1.1.0' }), del: () => {}, check: () => {} }, info, env, stdin, { hostNs: '/proc/self/ns/net' as never })).rejects.toMatchObject({ code: 'ERR_NETNS_INVALID_ARG' });
  });
});

describe("handleCall's hostNs (resident mode's caller namespace)", () => {
  const env = { ...ownNetns, CNI_COMMAND: 'ADD' };
  const stdin = async () => Buffer.from(config('1.1.0'));
  const info = { versions: ['1.1.0'] };

  it('gives the handler the namespace it was given, left open for its giver', async () => {
    using given = NetNS.open('/proc/self/ns/net');
    const seen: NetNS[] = [];
    const outcome = await handleCall({ add: ({ hostNs }) => (seen.push(hostNs), { cniVersion: '1.1.0' }), del: () => {}, check: () => {} }, info, env, stdin, { hostNs: given });
    expect(outcome.exitCode).toBe(0);
    expect(seen).toEqual([given]);
    expect(given.closed).toBe(false);
  });

  it('without one, opens the thread\'s own when the handler reads it, and closes it when the call ends', async () => {
    const seen: NetNS[] = [];
    await handleCall({ add: ({ hostNs }) => (seen.push(hostNs), { cniVersion: '1.1.0' }), del: () => {}, check: () => {} }, info, env, stdin);
    expect(seen.map((ns) => [ns.path, ns.closed])).toEqual([['/proc/thread-self/ns/net', true]]);
  });
});
