// The plugin docs/cni.md shows first (the block whose marker names this file)
// is run as a plugin, as a runtime would: what the page says it does, it does.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runPlugin } from '../helpers/cni-run.js';
import { distUrl, packageRoot } from '../helpers/node-child.js';

const page = readFileSync(join(packageRoot, 'docs', 'cni.md'), 'utf8');
const block = /<!-- not run: [^\n]*cni-docs\.test\.ts[^\n]*-->\n```js\n([\s\S]*?)\n```/.exec(page)?.[1];
const dir = mkdtempSync(join(tmpdir(), 'cni-docs-'));
const plugin = join(dir, 'tag.mjs');
// The page imports the package by name; here it is this checkout's dist/.
writeFileSync(plugin, (block ?? '').replace("from 'netns/cni'", `from ${JSON.stringify(distUrl('cni/index.js'))}`));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const env = { CNI_CONTAINERID: 'c1', CNI_IFNAME: 'eth0', CNI_NETNS: '/proc/self/ns/net', CNI_NETNS_OVERRIDE: '1' };
const prevResult = { cniVersion: '0.4.0', interfaces: [{ name: 'eth0', sandbox: '/run/netns/c1' }], ips: [{ version: '4', interface: 0, address: '10.1.1.2/24' }] };
const config = (extra: object = {}): string => JSON.stringify({ cniVersion: '1.0.0', name: 'net1', type: 'tag', ...extra });

describe('the plugin in docs/cni.md', () => {
  it('is on the page, importing netns/cni', () => {
    expect(block).toContain("from 'netns/cni'");
  });

  it("passes the prevResult through in the configuration's version", async () => {
    const out = await runPlugin(plugin, { ...env, CNI_COMMAND: 'ADD' }, config({ prevResult }));
    expect(out).toMatchObject({ code: 0, stderr: '' });
    expect(out.json).toEqual({ cniVersion: '1.0.0', interfaces: prevResult.interfaces, ips: [{ interface: 0, address: '10.1.1.2/24' }] });
  });

  it('refuses to come first in a chain (7), and a TAG of refuse (100)', async () => {
    expect((await runPlugin(plugin, { ...env, CNI_COMMAND: 'ADD' }, config())).json).toMatchObject({ code: 7 });
    const refused = await runPlugin(plugin, { ...env, CNI_COMMAND: 'ADD', CNI_ARGS: 'TAG=refuse' }, config({ prevResult }));
    expect(refused.json).toEqual({ cniVersion: '1.0.0', code: 100, msg: 'refused by TAG', details: 'TAG=refuse' });
  });

  it("takes a runtime's extra CNI_ARGS only with IgnoreUnknown", async () => {
    const args = 'K8S_POD_NAME=web-0;TAG=blue';
    expect((await runPlugin(plugin, { ...env, CNI_COMMAND: 'ADD', CNI_ARGS: args }, config({ prevResult }))).json).toMatchObject({ code: 4 });
    expect((await runPlugin(plugin, { ...env, CNI_COMMAND: 'ADD', CNI_ARGS: `IgnoreUnknown=1;${args}` }, config({ prevResult }))).code).toBe(0);
  });

  it('checks that prevResult is there, and deletes quietly', async () => {
    expect((await runPlugin(plugin, { ...env, CNI_COMMAND: 'CHECK' }, config())).json).toMatchObject({ code: 7 });
    expect(await runPlugin(plugin, { ...env, CNI_COMMAND: 'CHECK' }, config({ prevResult }))).toMatchObject({ code: 0, stdout: '' });
    expect(await runPlugin(plugin, { ...env, CNI_COMMAND: 'DEL', CNI_NETNS: '' }, config())).toMatchObject({ code: 0, stdout: '' });
  });
});
