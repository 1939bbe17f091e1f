// pluginMain ends the process once its answer is written: a runtime waits for
// the exit, not for whatever the handler left running. The answer still
// arrives whole through a pipe, however large, and the exit code is the one
// the outcome says.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runPlugin } from '../helpers/cni-run.js';
import { distUrl } from '../helpers/node-child.js';

const dir = mkdtempSync(join(tmpdir(), 'cni-skel-exit-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// 6,000 addresses: a result of about 300 kB, several times what a pipe holds.
const ADDRESSES = 6000;
const plugin = join(dir, 'lingering.mjs');
writeFileSync(
  plugin,
  `import { pluginMain, CniError } from ${JSON.stringify(distUrl('cni/index.js'))};
// What a careless handler leaves behind: without the exit, the process would wait out this
// timer (the test times out first; the process still ends by itself).
const linger = () => setTimeout(() => {}, 120_000);
const ips = Array.from({ length: ${ADDRESSES} }, (_, i) => ({ address: '10.' + (i >> 8) + '.' + (i & 255) + '.1/32' }));
await pluginMain(
  {
    add: () => (linger(), { cniVersion: '1.0.0', interfaces: [], ips }),
    del: () => { linger(); throw new CniError(11, 'busy'); },
    check: () => {},
  },
  { versions: ['1.0.0'] },
);
`,
);

const env = { CNI_CONTAINERID: 'c1', CNI_IFNAME: 'eth0', CNI_NETNS: '/proc/self/ns/net', CNI_NETNS_OVERRIDE: '1', CNI_PATH: '/usr/lib/cni' };
const config = JSON.stringify({ cniVersion: '1.0.0', name: 'net1', type: 'lingering' });

describe('pluginMain ends the process once its answer is written', () => {
  it('after ADD, with the whole result on a pipe and status 0, though the handler left a timer', async () => {
    const out = await runPlugin(plugin, { ...env, CNI_COMMAND: 'ADD' }, config);
    expect(out.code).toBe(0);
    expect((out.json as { ips: unknown[] }).ips).toHaveLength(ADDRESSES);
  });

  it('after a failure, with the error object and status 1', async () => {
    const out = await runPlugin(plugin, { ...env, CNI_COMMAND: 'DEL' }, config);
    expect(out).toMatchObject({ code: 1, json: { cniVersion: '1.0.0', code: 11, msg: 'busy' } });
  });
});
