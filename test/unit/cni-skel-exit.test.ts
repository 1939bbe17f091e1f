// pluginMain ends the process once its answer is written: a runtime waits for
// the exit, not for whatever the handler left running. The answer still
// arrives whole through a pipe, however large, and the exit code is the one
// the outcome says. stdin and stdout go through the descriptors (node:net and
// the streams are a few ms of each command); where a descriptor is
// non-blocking and would block, the rest goes through process.stdin and
// process.stdout, and the process still exits only once all is written.
import { spawn } from 'node:child_process';
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

// 30,000 addresses: about 850 kB, more than a pipe or socket pair holds.
const MANY = 30_000;
const reporting = join(dir, 'reporting.mjs');
writeFileSync(
  reporting,
  `import { writeSync } from 'node:fs';
import { pluginMain } from ${JSON.stringify(distUrl('cni/index.js'))};
const ips = Array.from({ length: ${MANY} }, (_, i) => ({ address: '10.' + (i >> 8) + '.' + (i & 255) + '.1/32' }));
await pluginMain(
  {
    add: (args) => { writeSync(2, 'LOADED ' + JSON.stringify(process.moduleLoadList.filter((m) => m === 'NativeModule net')) + '\\n'); return { cniVersion: '1.0.0', interfaces: [], ips, dns: { domain: args.stdin.length + '' } }; },
    del: () => {},
    check: () => {},
  },
  { versions: ['1.0.0'] },
);
`,
);
// Sets O_NONBLOCK on fds 0 and 1 (shared with the test's pipe ends), then runs the plugin.
const nonBlocking = join(dir, 'nonblocking.py');
writeFileSync(nonBlocking, `import fcntl, os, sys\nfor fd in (0, 1):\n    fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_NONBLOCK)\nos.execv(sys.argv[1], sys.argv[1:])\n`);

const bigConfig = JSON.stringify({ cniVersion: '1.0.0', name: 'net1', type: 'reporting', pad: 'x'.repeat(200_000) });

/** Runs the plugin with stdin written in two parts, the second after `pauseMs`, and stdout read only after `readAfterMs`. */
function run(argv: string[], pauseMs: number, readAfterMs: number): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0]!, argv.slice(1), { env: { ...env, CNI_COMMAND: 'ADD' }, stdio: ['pipe', 'pipe', 'pipe'] });
    const chunks: Buffer[] = [];
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => chunks.push(d)).pause(); // a listener: Node would drain an unread pipe at the child's exit
    setTimeout(() => child.stdout.resume(), readAfterMs);
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout: Buffer.concat(chunks).toString(), stderr }));
    child.stdin.write(bigConfig.slice(0, 1000));
    setTimeout(() => child.stdin.end(bigConfig.slice(1000)), pauseMs);
  });
}

describe('pluginMain, its standard I/O', () => {
  it('takes the whole configuration and gives the whole result through blocking pipes, without node:net', async () => {
    const out = await run([process.execPath, reporting], 200, 200);
    expect(out.code).toBe(0);
    expect(out.stderr).toBe('LOADED []\n');
    const result = JSON.parse(out.stdout) as { ips: unknown[]; dns: { domain: string } };
    expect([result.ips.length, result.dns.domain]).toEqual([MANY, String(bigConfig.length)]);
  });

  it('does the same through non-blocking pipes, by the streams where a descriptor would block', async () => {
    const out = await run(['python3', nonBlocking, process.execPath, reporting], 2000, 2500); // well after its start
    expect(out.code).toBe(0);
    expect(out.stderr).toBe('LOADED ["NativeModule net"]\n'); // stdin would have blocked: process.stdin took the rest (stdout then does too)
    const result = JSON.parse(out.stdout) as { ips: unknown[]; dns: { domain: string } };
    expect([result.ips.length, result.dns.domain]).toEqual([MANY, String(bigConfig.length)]);
  });
});
