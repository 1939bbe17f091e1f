// An IPAM plugin older than the configuration (Debian's host-local 1.1.1
// under a 1.1.0 conflist) refuses it with code 1; ADD, DEL and CHECK then go
// again in the newest version it reports that the configuration allows, or
// fail naming both. The plugins here are sh scripts that speak a fixed list of
// versions, as Go's skel does, and log each command with the cniVersion given.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { execAdd, execCheck, execDel, type NetConf } from '../../dist/cni/index.js';

const dir = mkdtempSync(join(tmpdir(), 'cni-ipam-version-'));
const log = join(dir, 'log');

/** A plugin speaking `versions`; `refuse` makes it answer every command with code 1 even in one of them. */
function plugin(name: string, versions: string[], refuse = false): void {
  const list = versions.map((v) => `"${v}"`).join(',');
  writeFileSync(
    join(dir, name),
    `#!/bin/sh
in=$(cat)
v=$(printf %s "$in" | grep -o '"cniVersion":"[^"]*"' | head -1 | cut -d'"' -f4)
echo "$CNI_COMMAND $v" >> ${log}
printf %s "$in" > ${dir}/stdin-$CNI_COMMAND
if [ "$CNI_COMMAND" = VERSION ]; then echo '{"cniVersion":"1.0.0","supportedVersions":[${list}]}'; exit 0; fi
case " ${versions.join(' ')} " in *" $v "*) ;; *) echo '{"code":1,"msg":"incompatible CNI versions","details":"config is '"$v"'"}'; exit 1;; esac
${refuse ? `echo '{"code":1,"msg":"incompatible with the moon"}'; exit 1` : ''}
[ "$CNI_COMMAND" = ADD ] && echo "{\\"cniVersion\\":\\"$v\\",\\"ips\\":[{\\"address\\":\\"10.7.0.2/24\\",\\"gateway\\":\\"10.7.0.1\\"}],\\"routes\\":[{\\"dst\\":\\"0.0.0.0/0\\"}]}"
exit 0
`,
    { mode: 0o755 },
  );
}

plugin('upto-1.0', ['0.1.0', '0.2.0', '0.3.0', '0.3.1', '0.4.0', '1.0.0']);
plugin('upto-0.3', ['0.1.0', '0.2.0', '0.3.0', '0.3.1']);
plugin('only-1.1', ['1.1.0']);
plugin('moody', ['1.0.0', '1.1.0'], true);
plugin('newest-first', ['1.0.0', '0.4.0', '0.3.1']);

const saved = { ...process.env };
beforeAll(() => {
  Object.assign(process.env, { CNI_PATH: dir, CNI_CONTAINERID: 'c1', CNI_IFNAME: 'eth0', CNI_NETNS: '/run/netns/none' });
});
afterEach(() => rmSync(log, { force: true }));
afterAll(() => {
  process.env = saved;
  rmSync(dir, { recursive: true, force: true });
});

const input = (cniVersion: string, type: string, extra: object = {}): { config: NetConf; stdin: Buffer } => {
  const text = JSON.stringify({ cniVersion, name: 'net1', type: 'ptp', ipam: { type }, ...extra });
  return { config: JSON.parse(text) as NetConf, stdin: Buffer.from(text) };
};
const calls = (): string[] => readFileSync(log, 'utf8').trim().split('\n');
const given = (command: string): Record<string, unknown> => JSON.parse(readFileSync(join(dir, `stdin-${command}`), 'utf8')) as Record<string, unknown>;

describe('IPAM delegation to a plugin older than the configuration', () => {
  it('runs the plugin once, and never asks VERSION, when it takes the configuration as it is', async () => {
    const conf = input('1.0.0', 'upto-1.0');
    await execAdd(conf);
    await execCheck(conf);
    await execDel(conf);
    expect(calls()).toEqual(['ADD 1.0.0', 'CHECK 1.0.0', 'DEL 1.0.0']);
    expect(readFileSync(join(dir, 'stdin-DEL'))).toEqual(conf.stdin);
  });

  it('after a refusal of 1.1.0, ADD, CHECK and DEL go again in 1.0.0, and ADD gives the result in the current shape', async () => {
    const conf = input('1.1.0', 'upto-1.0', { ipam: { type: 'upto-1.0', subnet: '10.7.0.0/24' } });
    expect(await execAdd(conf)).toEqual({ cniVersion: '1.1.0', ips: [{ address: '10.7.0.2/24', gateway: '10.7.0.1' }], routes: [{ dst: '0.0.0.0/0' }] });
    await execCheck(conf);
    await execDel(conf);
    expect(calls()).toEqual(['ADD 1.1.0', 'VERSION 1.1.0', 'ADD 1.0.0', 'CHECK 1.1.0', 'VERSION 1.1.0', 'CHECK 1.0.0', 'DEL 1.1.0', 'VERSION 1.1.0', 'DEL 1.0.0']);
    expect(given('DEL')).toEqual({ ...JSON.parse(conf.stdin.toString()), cniVersion: '1.0.0' });
  });

  it("gives a prevResult in the version it falls back to (0.3.1: ips[].version, no 1.1 fields)", async () => {
    const prevResult = { cniVersion: '1.1.0', interfaces: [{ name: 'eth0', mtu: 1400, sandbox: '/run/netns/x' }], ips: [{ interface: 0, address: '10.7.0.9/24' }] };
    await execDel(input('1.1.0', 'upto-0.3', { prevResult }));
    expect(calls()).toEqual(['DEL 1.1.0', 'VERSION 1.1.0', 'DEL 0.3.1']);
    expect(given('DEL').prevResult).toEqual({ cniVersion: '0.3.1', interfaces: [{ name: 'eth0', sandbox: '/run/netns/x' }], ips: [{ version: '4', interface: 0, address: '10.7.0.9/24' }] });
  });

  it('fails with code 1 naming both versions when the plugin has none old enough, and CHECK when its newest has no CHECK', async () => {
    const error = await execAdd(input('1.0.0', 'only-1.1')).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 1, message: expect.stringMatching(/only-1\.1.*1\.0\.0.*\[1\.1\.0\]/) });
    expect(calls()).toEqual(['ADD 1.0.0', 'VERSION 1.1.0']); // VERSION is asked in the newest version
    await expect(execCheck(input('1.1.0', 'upto-0.3'))).rejects.toMatchObject({
      code: 1,
      message: 'IPAM plugin upto-0.3 cannot take this configuration: it is cniVersion 1.1.0, the plugin supports [0.1.0, 0.2.0, 0.3.0, 0.3.1], none from 0.4.0 to 1.1.0',
    });
  });

  it('says which versions it had and which it needed, with the refusal as details', async () => {
    const error = await execAdd(input('1.0.0', 'only-1.1')).catch((e: unknown) => e);
    expect(error).toMatchObject({
      code: 1,
      message: 'IPAM plugin only-1.1 cannot take this configuration: it is cniVersion 1.0.0, the plugin supports [1.1.0], none from 0.1.0 to 1.0.0',
      details: 'incompatible CNI versions: config is 1.0.0',
    });
  });

  it('goes again in the newest version the plugin lists, whatever their order', async () => {
    await execAdd(input('1.1.0', 'newest-first'));
    expect(calls()).toEqual(['ADD 1.1.0', 'VERSION 1.1.0', 'ADD 1.0.0']);
  });

  it('refuses a prevResult it cannot read, naming it, before going again', async () => {
    const error = await execCheck(input('1.1.0', 'upto-1.0', { prevResult: { ips: 'none' } })).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 6, message: 'prevResult.ips must be an array' });
    expect(calls()).toEqual(['CHECK 1.1.0', 'VERSION 1.1.0']);
  });

  it("passes on a code 1 the plugin gave for a version it supports, without trying another", async () => {
    await expect(execDel(input('1.1.0', 'moody'))).rejects.toMatchObject({ code: 1, message: 'incompatible with the moon' });
    expect(calls()).toEqual(['DEL 1.1.0', 'VERSION 1.1.0']);
  });
});
