// invokePlugin, one plugin run as libcni runs it: each malformed call refused
// with its reason before anything runs, the six CNI_* variables set (empty
// where the command has none) over the caller's environment, and a failure
// as a PluginError with the plugin's stderr. Found by the mutation pass over
// src/cni/testing/invocation.ts (issue 34).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { invokePlugin, PluginError, type PluginCall } from '../../dist/cni/testing/index.js';

const dir = mkdtempSync(join(tmpdir(), 'cni-invoke-plugin-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const plugin = join(dir, 'env-plugin');
writeFileSync(plugin, '#!/bin/sh\ncat > /dev/null\necho "to stderr" >&2\n[ "$MARK" = fail ] && { echo \'{"code":11,"msg":"try again"}\'; exit 1; }\nenv | grep -E "^(CNI_|MARK=)" | sort\n', { mode: 0o755 });

const call = (extra: Partial<PluginCall> = {}): PluginCall => ({ command: 'ADD', plugin, stdin: '{}', env: { PATH: process.env.PATH, MARK: 'm' }, ...extra });

describe('invokePlugin', () => {
  it('sets the six CNI_* variables over the given environment, empty where the call has none', async () => {
    const out = await invokePlugin(call({ attachment: { containerId: 'c1', netns: '/run/netns/x', ifname: 'eth0', args: [['K8S_POD_NAME', 'p'], ['IgnoreUnknown', '1']] }, path: ['/opt/cni/bin', '/usr/lib/cni'] }));
    expect(out).toEqual({
      stdout: ['CNI_ARGS=K8S_POD_NAME=p;IgnoreUnknown=1', 'CNI_COMMAND=ADD', 'CNI_CONTAINERID=c1', 'CNI_IFNAME=eth0', 'CNI_NETNS=/run/netns/x', 'CNI_PATH=/opt/cni/bin:/usr/lib/cni', 'MARK=m', ''].join('\n'),
      stderr: 'to stderr\n',
    });
    const bare = await invokePlugin(call({ command: 'GC' }));
    expect(bare.stdout).toBe(['CNI_ARGS=', 'CNI_COMMAND=GC', 'CNI_CONTAINERID=', 'CNI_IFNAME=', 'CNI_NETNS=', 'CNI_PATH=', 'MARK=m', ''].join('\n'));
  });

  it('gives a failure as a PluginError with the error object, the command, the plugin and its stderr', async () => {
    const error = await invokePlugin(call({ command: 'DEL', env: { PATH: process.env.PATH, MARK: 'fail' } })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PluginError);
    expect(error).toMatchObject({ code: 11, message: 'try again', command: 'DEL', plugin, stderr: 'to stderr\n' });
  });

  it('refuses a malformed call before running anything, saying what is wrong', async () => {
    const cases: [unknown, string][] = [
      [null, 'takes one object: { command, plugin, stdin, ... }'],
      ['ADD', 'takes one object: { command, plugin, stdin, ... }'],
      [call({ command: 'RUN' as never }), 'command must be one of ADD, DEL, CHECK, GC, STATUS, VERSION, got RUN'],
      [call({ plugin: '' }), 'plugin must be the path of an executable'],
      [call({ plugin: 7 as never }), 'plugin must be the path of an executable'],
      [call({ stdin: {} as never }), 'stdin must be a Buffer or a string'],
      [call({ attachment: 'c1' as never }), 'attachment must be an object'],
      [call({ attachment: null as never }), 'attachment must be an object'],
      [call({ attachment: { containerId: 7 } as never }), 'containerId, netns and ifname must be strings'],
      [call({ attachment: { ifname: 7 } as never }), 'containerId, netns and ifname must be strings'],
      [call({ attachment: { args: [['K', 1]] } as never }), 'args must be a list of [key, value] string pairs'],
      [call({ attachment: { args: [['K']] } as never }), 'args must be a list of [key, value] string pairs'],
      [call({ attachment: { args: 'K=V' } as never }), 'args must be a list of [key, value] string pairs'],
      [call({ path: '/opt/cni/bin' as never }), 'path must be a list of directories'],
      [call({ path: ['/opt/cni/bin', 7] as never }), 'path must be a list of directories'],
      [call({ env: null as never }), 'env must be an object'],
      [call({ env: 'PATH=/bin' as never }), 'env must be an object'],
      [call({ spawn: 'sh' as never }), 'spawn must be a function'],
    ];
    for (const [given, reason] of cases) {
      await expect(invokePlugin(given as PluginCall), reason).rejects.toMatchObject({ code: 'ERR_NETNS_INVALID_ARG', message: `invokePlugin: ${reason}` });
    }
  });
});

describe('PluginError', () => {
  it('refuses what is not a CniError and a context object', async () => {
    const { CniError } = await import('../../dist/cni/index.js');
    const message = 'new PluginError(failure, context) takes a CniError and { command, plugin, stderr }';
    const context = { command: 'ADD' as const, plugin: '/bin/p', stderr: '' };
    for (const [failure, given] of [[new Error('x'), context], [new CniError(7, 'x'), null], [new CniError(7, 'x'), 'ADD']] as const) {
      expect(() => new PluginError(failure as never, given as never)).toThrow(expect.objectContaining({ code: 'ERR_NETNS_INVALID_ARG', message }));
    }
    expect(new PluginError(new CniError(7, 'bad', 'why'), context)).toMatchObject({ name: 'PluginError', code: 7, message: 'bad', details: 'why', ...context });
  });
});
