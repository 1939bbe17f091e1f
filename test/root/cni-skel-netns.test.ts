// pluginMain with a real container namespace, as a runtime calls it (no
// CNI_NETNS_OVERRIDE): ADD and CHECK reach their handlers with it; once the
// namespace is deleted, ADD is refused (code 8) and DEL still reaches its
// handler, told the namespace is gone, and succeeds.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { runPlugin } from '../helpers/cni-run.js';
import { distUrl } from '../helpers/node-child.js';
import { privileged } from '../helpers/privileges.js';
import { scratchNamespaces } from '../helpers/scratch-namespaces.js';

describe.skipIf(!privileged)('pluginMain and a real CNI_NETNS', () => {
  const scratch = scratchNamespaces('cniskel');
  const dir = mkdtempSync(join(tmpdir(), 'cni-skel-netns-'));
  const plugin = join(dir, 'plugin.mjs');
  writeFileSync(
    plugin,
    `import { pluginMain } from ${JSON.stringify(distUrl('cni/index.js'))};
const report = ({ command, netns, netnsGone }) => process.stderr.write('HANDLER ' + JSON.stringify({ command, netns, netnsGone }) + '\\n');
await pluginMain(
  { add: (args) => (report(args), { cniVersion: '1.1.0' }), del: report, check: report },
  { versions: ['1.1.0'] },
);
`,
  );
  const config = '{"cniVersion":"1.1.0","name":"net1","type":"test"}';
  const env = (command: string, netns: string): Record<string, string> => ({ CNI_COMMAND: command, CNI_CONTAINERID: 'c1', CNI_IFNAME: 'eth0', CNI_NETNS: netns });

  afterEach(() => scratch.removeAll());
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('runs ADD, CHECK and DEL in a namespace other than the plugin', async () => {
    const ns = await scratch.create();
    for (const command of ['ADD', 'CHECK', 'DEL']) {
      const out = await runPlugin(plugin, env(command, ns.path), config);
      expect(out.code, `${command}: ${out.stdout}`).toBe(0);
      expect(out.calls).toEqual([{ command, netns: ns.path, netnsGone: false }]);
    }
  });

  it('refuses ADD once the namespace is deleted, and lets DEL clean up', async () => {
    const ns = await scratch.create();
    const path = ns.path;
    ns.close();
    await scratch.removeAll();
    const add = await runPlugin(plugin, env('ADD', path), config);
    expect(add.json).toMatchObject({ code: 8 });
    expect(add.calls).toEqual([]);
    const del = await runPlugin(plugin, env('DEL', path), config);
    expect(del).toMatchObject({ code: 0, stdout: '' });
    expect(del.calls).toEqual([{ command: 'DEL', netns: path, netnsGone: true }]);
  });
});
