// netns/cni/testing as a plugin author meets it: small plugins written to a
// temp dir (sh scripts that record what they were given, and plugins built on
// pluginMain) are run through the harness, and what each got (environment,
// stdin, order) and what the harness kept (the cniCacheV1 file) are read back.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { CniError } from '../../dist/cni/index.js';
import { NetnsError } from '../../dist/core/errors.js';
import { CniHarness, hasCheck, hasIpVersion, hasStatus, invokePlugin, loadConfList, parseConfList, PluginError, SPEC_VERSIONS, type RuntimeConf, type SpawnPlugin } from '../../dist/cni/testing/index.js';
import { distUrl, runNodeScript } from '../helpers/node-child.js';

const dir = mkdtempSync(join(tmpdir(), 'cni-harness-'));
const bin = join(dir, 'bin');
const empty = join(dir, 'empty');
const record = join(dir, 'record');
const cacheDir = join(dir, 'cache');
for (const path of [bin, empty, record]) mkdirSync(path);
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => {
  rmSync(record, { recursive: true, force: true });
  mkdirSync(record);
  rmSync(cacheDir, { recursive: true, force: true });
});

const RESULT_040 = { cniVersion: '0.4.0', interfaces: [{ name: 'eth0', sandbox: '/run/netns/x' }], ips: [{ version: '4', interface: 0, address: '10.1.0.2/24', gateway: '10.1.0.1' }], dns: {} };

/** A sh plugin: records its name, environment and stdin in the next numbered directory, then runs `body`. */
function shPlugin(name: string, body: string): void {
  const script = `#!/bin/sh\nn=$(ls "${record}" | wc -l)\nf="${record}/$(printf %03d "$n")"\nmkdir "$f"\necho ${name} > "$f/plugin"\nenv > "$f/env"\ncat > "$f/stdin"\n${body}\n`;
  writeFileSync(join(bin, name), script, { mode: 0o755 });
}

/** A plugin on pluginMain (this checkout's dist/), behind a recording sh plugin that hands it the same stdin. */
function nodePlugin(name: string, body: string): void {
  const file = join(dir, `${name}.mjs`);
  writeFileSync(file, `import { CniError, passThrough, pluginMain, prevResultOf } from ${JSON.stringify(distUrl('cni/index.js'))};\n${body}\n`);
  shPlugin(name, `exec ${JSON.stringify(process.execPath)} ${JSON.stringify(file)} < "$f/stdin"`);
}

shPlugin('first', `[ "$CNI_COMMAND" = ADD ] && echo '${JSON.stringify(RESULT_040)}'\nexit 0`);
shPlugin('quiet', `[ "$CNI_COMMAND" = ADD ] && echo '{"ips":[{"address":"10.2.0.2/24"}]}'\nexit 0`);
shPlugin('fail', `echo "fail: about to fail" >&2\necho '{"cniVersion":"1.0.0","code":11,"msg":"try again","details":"pool busy"}'\nexit 1`);
shPlugin('crash', 'echo "panic: nil map" >&2\nexit 2');
shPlugin('garbage', `[ "$CNI_COMMAND" = ADD ] && echo 'not json'\nexit 0`);
nodePlugin(
  'pass',
  `await pluginMain({ add: ({ config }) => passThrough(config), del: () => {}, check: ({ config }) => { if (!prevResultOf(config)) throw new CniError(7, 'CHECK needs prevResult'); } }, { versions: ['0.3.1', '0.4.0', '1.0.0', '1.1.0'] });`,
);
nodePlugin('old', `await pluginMain({ add: ({ config }) => passThrough(config), del: () => {}, check: () => {} }, { versions: ['0.4.0', '1.0.0'] });`);

interface Call {
  plugin: string;
  env: Record<string, string>;
  stdin: Record<string, unknown>;
}

/** What each plugin was given, in the order they ran. */
function calls(): Call[] {
  return readdirSync(record)
    .sort()
    .map((n) => {
      const at = (file: string): string => readFileSync(join(record, n, file), 'utf8');
      const env = Object.fromEntries(at('env').trim().split('\n').map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]));
      return { plugin: at('plugin').trim(), env, stdin: JSON.parse(at('stdin')) as Record<string, unknown> };
    });
}

const SIX = ['CNI_COMMAND', 'CNI_CONTAINERID', 'CNI_NETNS', 'CNI_IFNAME', 'CNI_ARGS', 'CNI_PATH'];
const cniEnv = (env: Record<string, string>): Record<string, string> => Object.fromEntries(SIX.map((key) => [key, env[key]!]));
const harness = (options: Partial<ConstructorParameters<typeof CniHarness>[0]> = {}) => new CniHarness({ path: [empty, bin], cacheDir, env: { PATH: process.env.PATH, MARK: 'm1', CNI_NETNS_OVERRIDE: '1' }, ...options });
const list = (cniVersion: string, types: string[], extra: object = {}) => parseConfList({ cniVersion, name: 'net1', plugins: types.map((type) => ({ type })), ...extra });
// pluginMain checks CNI_NETNS: the plugin's own namespace, allowed by CNI_NETNS_OVERRIDE as Go's testutils sets it.
const rt: RuntimeConf = { containerId: 'c1', netns: '/proc/self/ns/net', ifname: 'eth0' };

describe('CniHarness ADD', () => {
  it('sets the six CNI_* variables over the given environment, CNI_ARGS joined K=V;K=V, CNI_PATH joined with :', async () => {
    await harness().add(list('1.0.0', ['first']), { ...rt, args: [['IgnoreUnknown', '1'], ['K8S_POD_NAME', 'web-0']] });
    const [call] = calls();
    expect(cniEnv(call!.env)).toEqual({
      CNI_COMMAND: 'ADD',
      CNI_CONTAINERID: 'c1',
      CNI_NETNS: '/proc/self/ns/net',
      CNI_IFNAME: 'eth0',
      CNI_ARGS: 'IgnoreUnknown=1;K8S_POD_NAME=web-0',
      CNI_PATH: `${empty}:${bin}`,
    });
    expect(call!.env.MARK).toBe('m1');
  });

  it("injects the list's name and chosen version, runtimeConfig for declared capabilities only, and the previous result as it was printed", async () => {
    const conflist = parseConfList({
      cniVersion: '0.4.0',
      cniVersions: ['1.0.0', '1.1.0', '9.0.0'], // 9.0.0 is newer than this spec: skipped, as libcni does
      name: 'net1',
      plugins: [
        { type: 'first', capabilities: { portMappings: true, mac: false }, runtimeConfig: { stale: true }, own: 1 },
        { type: 'pass', name: 'not-this', cniVersion: '0.1.0', runtimeConfig: { kept: true } },
      ],
    });
    expect(conflist.cniVersion).toBe('1.1.0');
    const portMappings = [{ hostPort: 8080, containerPort: 80, protocol: 'tcp' }];
    const added = await harness().add(conflist, { ...rt, capabilityArgs: { portMappings, mac: '02:00:00:00:00:01', bandwidth: {} } });
    const [first, pass] = calls();
    expect(first!.stdin).toEqual({ type: 'first', capabilities: { portMappings: true, mac: false }, runtimeConfig: { portMappings }, own: 1, name: 'net1', cniVersion: '1.1.0' });
    // the first plugin printed 0.4.0 under a 1.1.0 list: the next one gets it in 0.4.0, as libcni passes it on (cni#862)
    expect(pass!.stdin).toEqual({ type: 'pass', name: 'net1', cniVersion: '1.1.0', runtimeConfig: { kept: true }, prevResult: RESULT_040 });
    expect(added.printed).toEqual({ cniVersion: '1.1.0', interfaces: RESULT_040.interfaces, ips: [{ interface: 0, address: '10.1.0.2/24', gateway: '10.1.0.1' }], dns: {} });
    expect(added.result).toEqual(added.printed);
  });

  it('reads a result without cniVersion as the list version, and returns a 0.4.0 result with ips[].version as printed', async () => {
    expect((await harness().add(list('1.0.0', ['quiet']), rt)).printed).toEqual({ cniVersion: '1.0.0', ips: [{ address: '10.2.0.2/24' }] });
    const added = await harness().add(list('1.0.0', ['first']), { ...rt, containerId: 'c2' });
    expect(added.printed).toEqual(RESULT_040);
    expect(added.result.ips).toEqual([{ interface: 0, address: '10.1.0.2/24', gateway: '10.1.0.1' }]);
  });

  it("caches the last result in libcni's cniCacheV1 format, directory 0700 and file 0600", async () => {
    const conflist = parseConfList(JSON.stringify({ cniVersion: '0.4.0', name: 'net1', plugins: [{ type: 'first', capabilities: { mac: true } }, { type: 'pass' }] }));
    const h = harness();
    await h.add(conflist, { ...rt, args: [['K', 'V']], capabilityArgs: { mac: '02:00:00:00:00:01' } });
    const file = join(cacheDir, 'results', 'net1-c1-eth0');
    expect(h.cache.file('net1', rt)).toBe(file);
    expect(statSync(join(cacheDir, 'results')).mode & 0o777).toBe(0o700);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const text = readFileSync(file, 'utf8');
    expect(Object.keys(JSON.parse(text))).toEqual(['kind', 'containerId', 'config', 'ifName', 'networkName', 'netns', 'cniArgs', 'capabilityArgs', 'result']);
    expect(JSON.parse(text)).toEqual({
      kind: 'cniCacheV1',
      containerId: 'c1',
      config: conflist.bytes.toString('base64'),
      ifName: 'eth0',
      networkName: 'net1',
      netns: '/proc/self/ns/net',
      cniArgs: [['K', 'V']],
      capabilityArgs: { mac: '02:00:00:00:00:01' },
      result: RESULT_040,
    });
  });

  it('leaves out what Go omits when empty: netns, cniArgs, capabilityArgs', async () => {
    const h = harness();
    await h.add(list('1.0.0', ['first']), { containerId: 'c1', netns: '', ifname: 'eth0', args: [], capabilityArgs: {} });
    expect(Object.keys(JSON.parse(readFileSync(h.cache.file('net1', rt), 'utf8')))).toEqual(['kind', 'containerId', 'config', 'ifName', 'networkName', 'result']);
  });

  it("surfaces a plugin's error object as a PluginError with its stderr; the chain stops and nothing is cached", async () => {
    const h = harness();
    const failure = await h.add(list('1.0.0', ['first', 'fail', 'pass']), rt).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(PluginError);
    expect(failure).toBeInstanceOf(CniError);
    expect(failure).toMatchObject({ code: 11, message: 'try again', details: 'pool busy', command: 'ADD', plugin: join(bin, 'fail'), stderr: 'fail: about to fail\n' });
    expect(calls().map((c) => c.plugin)).toEqual(['first', 'fail']);
    expect(await h.cachedResult(list('1.0.0', ['first']), rt)).toBeUndefined();
  });

  it('a plugin with only stderr fails with it as the message (999); one printing no JSON result is code 6, with its stderr', async () => {
    await expect(harness().add(list('1.0.0', ['crash']), rt)).rejects.toMatchObject({ code: 999, message: expect.stringContaining('panic: nil map'), stderr: 'panic: nil map\n' });
    await expect(harness().add(list('1.0.0', ['garbage']), rt)).rejects.toMatchObject({ name: 'PluginError', code: 6, command: 'ADD', stderr: '' });
  });

  it('a plugin not in the path is code 4, as findInPath has it', async () => {
    await expect(harness().add(list('1.0.0', ['nowhere']), rt)).rejects.toMatchObject({ code: 4, message: expect.stringContaining('nowhere') });
  });

  it("a plugin built on pluginMain refuses a version it does not speak, and the harness says which plugin", async () => {
    await expect(harness().add(list('1.1.0', ['first', 'old']), rt)).rejects.toMatchObject({ code: 1, plugin: join(bin, 'old'), command: 'ADD' });
  });

  it('starts plugins through the given spawn (a namespace spawn, in root tests)', async () => {
    const started: string[] = [];
    const recording: SpawnPlugin = (command, args, options) => (started.push(command), spawn(command, args, options));
    await harness({ spawn: recording }).add(list('1.0.0', ['first', 'pass']), rt);
    expect(started).toEqual([join(bin, 'first'), join(bin, 'pass')]);
  });
});

describe('CniHarness CHECK and DEL', () => {
  it("CHECK runs in order with the cached result converted to the list's version", async () => {
    const h = harness();
    const conflist = list('1.0.0', ['first', 'pass']);
    await h.add(conflist, rt);
    rmSync(record, { recursive: true });
    mkdirSync(record);
    await h.check(conflist, rt);
    const expected = { cniVersion: '1.0.0', interfaces: RESULT_040.interfaces, ips: [{ interface: 0, address: '10.1.0.2/24', gateway: '10.1.0.1' }], dns: {} };
    expect(calls().map((c) => [c.plugin, c.env.CNI_COMMAND, c.stdin.prevResult])).toEqual([
      ['first', 'CHECK', expected],
      ['pass', 'CHECK', expected],
    ]);
  });

  it('reads what an older runtime cached: a 0.4.0 result under a list now at 1.0.0', async () => {
    const h = harness();
    const conflist = list('1.0.0', ['pass']);
    await h.cache.write('net1', rt, conflist.bytes, RESULT_040);
    expect(await h.cachedResult(conflist, rt)).toEqual({ cniVersion: '1.0.0', interfaces: RESULT_040.interfaces, ips: [{ interface: 0, address: '10.1.0.2/24', gateway: '10.1.0.1' }], dns: {} });
    await h.check(conflist, rt); // pass refuses a CHECK without prevResult
  });

  it('CHECK below 0.4.0 is refused (code 1) without running a plugin; disableCheck runs none', async () => {
    await expect(harness().check(list('0.3.1', ['first']), rt)).rejects.toMatchObject({ code: 1, message: expect.stringContaining('does not support the CHECK command') });
    await harness().check(list('1.0.0', ['fail'], { disableCheck: 'True' }), rt);
    expect(calls()).toEqual([]);
  });

  it('DEL runs in reverse order with the cached result, then removes the cache entry; a second DEL has no prevResult', async () => {
    const h = harness();
    const conflist = list('0.4.0', ['first', 'pass']);
    await h.add(conflist, rt);
    await h.del(conflist, rt);
    const dels = calls().filter((c) => c.env.CNI_COMMAND === 'DEL');
    expect(dels.map((c) => [c.plugin, c.stdin.prevResult])).toEqual([
      ['pass', RESULT_040],
      ['first', RESULT_040],
    ]);
    expect(() => statSync(h.cache.file('net1', rt))).toThrow(/ENOENT/);
    await h.del(conflist, rt);
    expect(calls().slice(-2).map((c) => [c.plugin, Object.hasOwn(c.stdin, 'prevResult')])).toEqual([
      ['pass', false],
      ['first', false],
    ]);
  });

  it('DEL before 0.4.0 gives no prevResult, though one is cached', async () => {
    const h = harness();
    const conflist = list('0.3.1', ['first']);
    await h.add(conflist, rt);
    await h.del(conflist, rt);
    expect(calls().map((c) => [c.env.CNI_COMMAND, Object.hasOwn(c.stdin, 'prevResult')])).toEqual([
      ['ADD', false],
      ['DEL', false],
    ]);
  });

  it('DEL stops at the first failure, as libcni does, and keeps the cache entry for the next try', async () => {
    const h = harness();
    await h.add(list('1.0.0', ['first']), rt);
    await expect(h.del(list('1.0.0', ['first', 'fail']), rt)).rejects.toMatchObject({ code: 11, command: 'DEL' });
    expect(calls().map((c) => `${c.env.CNI_COMMAND} ${c.plugin}`)).toEqual(['ADD first', 'DEL fail']);
    expect(statSync(h.cache.file('net1', rt)).isFile()).toBe(true);
  });

  it('DEL drops a cache entry it cannot read and runs without prevResult', async () => {
    const h = harness();
    mkdirSync(join(cacheDir, 'results'), { recursive: true });
    writeFileSync(h.cache.file('net1', rt), '{"kind":"something else"}');
    await expect(h.cachedResult(list('1.0.0', ['first']), rt)).rejects.toMatchObject({ code: 6 });
    await h.del(list('1.0.0', ['first']), rt);
    expect(Object.hasOwn(calls()[0]!.stdin, 'prevResult')).toBe(false);
    expect(() => statSync(h.cache.file('net1', rt))).toThrow(/ENOENT/);
  });

  it('drops a cache entry it cannot read even when the DEL then fails, as libcni does', async () => {
    const h = harness();
    mkdirSync(join(cacheDir, 'results'), { recursive: true });
    writeFileSync(h.cache.file('net1', rt), 'not json');
    await expect(h.del(list('1.0.0', ['fail']), rt)).rejects.toMatchObject({ code: 11, command: 'DEL' });
    expect(() => statSync(h.cache.file('net1', rt))).toThrow(/ENOENT/);
  });
});

describe('CniHarness GC and STATUS', () => {
  it('GC DELs the cached attachments of this network that are not valid (with what was cached), then GCs each plugin with both keys', async () => {
    const h = harness();
    const conflist = list('1.1.0', ['first']);
    await h.add(conflist, rt);
    await h.add(conflist, { containerId: 'c2', netns: '/run/netns/y', ifname: 'eth1', args: [['K', 'V']] });
    await h.add(list('1.1.0', ['first'], { name: 'net2' }), { ...rt, containerId: 'c3' });
    await h.gc(conflist, { validAttachments: [{ containerID: 'c1', ifname: 'eth0' }] });
    const after = calls().slice(3);
    expect(after.map((c) => [c.env.CNI_COMMAND, c.env.CNI_CONTAINERID, c.env.CNI_NETNS, c.env.CNI_IFNAME, c.env.CNI_ARGS])).toEqual([
      ['DEL', 'c2', '/run/netns/y', 'eth1', 'K=V'],
      ['GC', '', '', '', ''],
    ]);
    const valid = [{ containerID: 'c1', ifname: 'eth0' }];
    expect(after[1]!.stdin).toEqual({ type: 'first', name: 'net1', cniVersion: '1.1.0', 'cni.dev/valid-attachments': valid, 'cni.dev/attachments': valid });
    expect((await h.cache.list()).map((e) => `${e.networkName} ${e.containerId}`)).toEqual(['net1 c1', 'net2 c3']);
  });

  it('GC without a list DELs every cached attachment of the network and sends no key; below 1.1.0 it only DELs', async () => {
    const h = harness();
    await h.add(list('1.0.0', ['first']), rt);
    await h.gc(list('1.0.0', ['first']));
    await h.add(list('1.1.0', ['first']), rt);
    await h.gc(list('1.1.0', ['first']));
    expect(calls().map((c) => [c.env.CNI_COMMAND, Object.keys(c.stdin).filter((k) => k.startsWith('cni.dev'))])).toEqual([
      ['ADD', []],
      ['DEL', []],
      ['ADD', []],
      ['DEL', []],
      ['GC', []],
    ]);
  });

  it('GC goes on past failures and reports each in one NetnsError ERR_NETNS_CNI_GC_UNRELEASED; disableGC runs nothing', async () => {
    const h = harness();
    await h.add(list('1.1.0', ['first']), rt);
    const failure = await h.gc(list('1.1.0', ['first', 'fail'])).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(NetnsError);
    expect(failure).toMatchObject({ code: 'ERR_NETNS_CNI_GC_UNRELEASED', message: 'GC of network net1: 2 failed, the first: try again' });
    const { errors, cause } = failure as NetnsError & { errors: PluginError[] };
    expect(errors.map((e) => `${e.command} ${e.code}`)).toEqual(['DEL 11', 'GC 11']);
    expect(cause).toBeInstanceOf(AggregateError);
    expect((cause as AggregateError).errors).toEqual(errors);
    expect(calls().map((c) => `${c.env.CNI_COMMAND} ${c.plugin}`)).toEqual(['ADD first', 'DEL fail', 'GC first', 'GC fail']);
    rmSync(record, { recursive: true });
    mkdirSync(record);
    await h.gc(list('1.1.0', ['fail'], { disableGC: true }));
    expect(calls()).toEqual([]);
  });

  it('STATUS from 1.1.0 runs each plugin in order with name and version only, and stops at the first failure; below, none runs', async () => {
    await harness().status(list('1.0.0', ['fail']));
    expect(calls()).toEqual([]);
    const conflist = parseConfList({ cniVersion: '1.1.0', name: 'net1', plugins: [{ type: 'first', capabilities: { mac: true } }, { type: 'fail' }, { type: 'first' }] });
    await expect(harness().status(conflist)).rejects.toMatchObject({ code: 11, command: 'STATUS' });
    expect(calls().map((c) => [c.plugin, cniEnv(c.env), c.stdin])).toEqual([
      ['first', { CNI_COMMAND: 'STATUS', CNI_CONTAINERID: '', CNI_NETNS: '', CNI_IFNAME: '', CNI_ARGS: '', CNI_PATH: `${empty}:${bin}` }, { type: 'first', capabilities: { mac: true }, name: 'net1', cniVersion: '1.1.0' }],
      ['fail', expect.objectContaining({ CNI_COMMAND: 'STATUS' }), { type: 'fail', name: 'net1', cniVersion: '1.1.0' }],
    ]);
  });
});

describe('invokePlugin', () => {
  it('runs one plugin with exactly the given values, unchecked, so a test can hand it what no runtime would', async () => {
    const out = await invokePlugin({ command: 'DEL', plugin: join(bin, 'first'), stdin: '{"x":1}', attachment: { containerId: 'bad/id', ifname: 'eth0 ' }, env: {} });
    expect(out).toEqual({ stdout: '', stderr: '' });
    expect(calls()[0]).toMatchObject({ env: { CNI_COMMAND: 'DEL', CNI_CONTAINERID: 'bad/id', CNI_IFNAME: 'eth0 ', CNI_NETNS: '', CNI_PATH: '' }, stdin: { x: 1 } });
  });

  it('a pluginMain plugin answers the environment it refuses with code 4, surfaced as a PluginError', async () => {
    const stdin = JSON.stringify({ cniVersion: '1.0.0', name: 'net1', type: 'pass' });
    await expect(invokePlugin({ command: 'ADD', plugin: join(bin, 'pass'), stdin, attachment: { containerId: 'bad/id', ifname: 'eth0', netns: '/proc/self/ns/net' } })).rejects.toMatchObject({
      name: 'PluginError',
      code: 4,
      message: 'invalid characters in CNI_CONTAINERID',
    });
  });
});

describe('conflists and input', () => {
  it('loadConfList reads a file; bad lists are ERR_NETNS_INVALID_ARG, naming what is wrong', async () => {
    const file = join(dir, 'net.conflist');
    writeFileSync(file, JSON.stringify({ cniVersion: '1.0.0', name: 'net1', disableGC: 'false', plugins: [{ type: 'first' }] }));
    expect(await loadConfList(file)).toMatchObject({ name: 'net1', cniVersion: '1.0.0', disableCheck: false, disableGC: false, plugins: [{ type: 'first' }] });
    const bad: [unknown, RegExp][] = [
      ['{', /not JSON/],
      [[], /text, its bytes or a parsed object/],
      [{ cniVersion: '1.0.0', name: 'a b', plugins: [{ type: 'x' }] }, /name must match/],
      [{ cniVersion: '1.0.0', name: 'n', plugins: [] }, /plugins must be a non-empty list/],
      [{ cniVersion: '1.0.0', name: 'n', plugins: [{}] }, /plugins\[0\] has no type/],
      [{ cniVersion: '1.0', name: 'n', plugins: [{ type: 'x' }] }, /cniVersion must be a version/],
      [{ name: 'n', plugins: [{ type: 'x' }] }, /cniVersion \(or cniVersions\) is required/],
      [{ cniVersions: ['2.0.0'], name: 'n', plugins: [{ type: 'x' }] }, /none of cniVersion and cniVersions/],
      [{ cniVersion: '1.0.0', name: 'n', disableCheck: 'yes', plugins: [{ type: 'x' }] }, /disableCheck must be a boolean/],
      [{ cniVersion: '1.0.0', name: 'n', plugins: [{ type: 'x', capabilities: { mac: 'yes' } }] }, /capabilities must map names to booleans/],
    ];
    for (const [source, message] of bad) expect(() => parseConfList(source as object)).toThrow(expect.objectContaining({ code: 'ERR_NETNS_INVALID_ARG', message: expect.stringMatching(message) }));
  });

  it('the harness refuses bad options, runtime configurations and GC arguments with ERR_NETNS_INVALID_ARG, before running anything', async () => {
    const invalid = { code: 'ERR_NETNS_INVALID_ARG' };
    expect(() => new CniHarness({ path: [bin] } as never)).toThrow(expect.objectContaining(invalid));
    expect(() => new CniHarness({ path: 'bin', cacheDir } as never)).toThrow(expect.objectContaining(invalid));
    const h = harness();
    const conflist = list('1.1.0', ['first']);
    await expect(h.add(conflist, { ...rt, ifname: '../x' })).rejects.toMatchObject(invalid);
    await expect(h.add(conflist, { ...rt, containerId: '' })).rejects.toMatchObject(invalid);
    await expect(h.add(conflist, { ...rt, args: [['K']] } as never)).rejects.toMatchObject(invalid);
    await expect(h.add({ name: 'n' } as never, rt)).rejects.toMatchObject(invalid);
    // A list put together by hand, named to escape the cache folder: refused before any plugin runs.
    await expect(h.add({ ...conflist, name: '../../escaped' }, rt)).rejects.toMatchObject(invalid);
    expect(() => h.cache.file('../../escaped', rt)).toThrow(expect.objectContaining(invalid));
    expect(() => h.cache.file(conflist.name, { containerId: 'c/..', ifname: 'eth0' })).toThrow(expect.objectContaining(invalid));
    await expect(h.gc(conflist, { validAttachments: [{ containerId: 'c1', ifname: 'eth0' }] } as never)).rejects.toMatchObject(invalid);
    await expect(invokePlugin({ command: 'PUT', plugin: join(bin, 'first'), stdin: '' } as never)).rejects.toMatchObject(invalid);
    expect(calls()).toEqual([]);
  });
});

describe('version helpers and the import', () => {
  it('say which versions have ips[].version, CHECK and STATUS, as Go testutils does', () => {
    expect(SPEC_VERSIONS.filter(hasIpVersion)).toEqual(['0.3.0', '0.3.1', '0.4.0']);
    expect(SPEC_VERSIONS.filter(hasCheck)).toEqual(['0.4.0', '1.0.0', '1.1.0']);
    expect(SPEC_VERSIONS.filter(hasStatus)).toEqual(['1.1.0']);
  });

  it('netns/cni/testing resolves by package name and loads no native addon', async () => {
    const out = await runNodeScript(`
      const dlopen = process.dlopen;
      let opened = 0;
      process.dlopen = (...args) => (opened++, dlopen(...args));
      const testing = await import('netns/cni/testing');
      console.log(JSON.stringify({ opened, harness: typeof testing.CniHarness }));
    `);
    expect(out.stderr).toBe('');
    expect(JSON.parse(out.stdout)).toEqual({ opened: 0, harness: 'function' });
  });
});
