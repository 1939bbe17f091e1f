// IPAM delegation against the real host-local (Debian's
// containernetworking-plugins, 1.1.1, in /usr/lib/cni): ADD allocates and the
// typed result says what, CHECK and DEL are forwarded, a repeated ADD is
// refused and a repeated DEL succeeds, for each result version host-local
// speaks, and for 1.1.0, which it refuses, in the newest it speaks;
// execAddThen frees the address when a later step fails. State lives
// in a scratch dataDir under /tmp, removed afterwards.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { delegateVersions, execAdd, execAddThen, execCheck, execDel, execStatus, type IpamInput, type NetConf } from '../../dist/cni/index.js';
import { privileged } from '../helpers/privileges.js';

const CNI_BIN = '/usr/lib/cni';
const hostLocal = existsSync(join(CNI_BIN, 'host-local'));
if (!hostLocal) {
  if (process.env.CI) throw new Error('CI must install containernetworking-plugins (host-local in /usr/lib/cni) for the IPAM tests');
  console.warn('netns tests: host-local is not installed (apt-get install containernetworking-plugins), so the IPAM tests are skipped');
}

describe.skipIf(!privileged || !hostLocal)('IPAM delegation to host-local', () => {
  const saved = { ...process.env };
  let dataDir = '';

  beforeAll(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'cni-ipam-host-local-'));
    Object.assign(process.env, { CNI_PATH: CNI_BIN, CNI_IFNAME: 'eth0', CNI_NETNS: '/run/netns/cni-ipam-unused' });
  });

  afterAll(() => {
    process.env = saved;
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  /** A ptp-like configuration with a host-local range; each network its own subnet and state directory. */
  function input(cniVersion: string, network: string, third: number): IpamInput {
    const text = JSON.stringify({
      cniVersion,
      name: network,
      type: 'ptp',
      ipam: { type: 'host-local', dataDir, ranges: [[{ subnet: `10.99.${third}.0/24` }]], routes: [{ dst: '0.0.0.0/0' }] },
    });
    return { config: JSON.parse(text) as NetConf, stdin: Buffer.from(text) };
  }

  /** host-local's record of an address: the container ID and interface name it belongs to. */
  const holder = (network: string, ip: string): string | null => {
    const path = join(dataDir, network, ip);
    return existsSync(path) ? readFileSync(path, 'utf8').replace(/\r\n/g, ' ') : null;
  };

  it.each([
    ['0.3.1', 1],
    ['0.4.0', 2],
    ['1.0.0', 3],
    ['1.1.0', 7], // refused by host-local 1.1.1, then given again in 1.0.0
  ])('%s: ADD allocates, CHECK passes, a second ADD is refused, DEL frees, a second DEL succeeds', async (version, third) => {
    process.env.CNI_CONTAINERID = `c-${third}`;
    const conf = input(version, `net${third}`, third);
    const result = await execAdd(conf);
    expect(result).toEqual({
      cniVersion: '1.1.0',
      ips: [{ address: `10.99.${third}.2/24`, gateway: `10.99.${third}.1` }],
      routes: [{ dst: '0.0.0.0/0' }],
      dns: {},
    });
    expect(holder(`net${third}`, `10.99.${third}.2`)).toBe(`c-${third} eth0`);
    if (version !== '0.3.1') await execCheck(conf);
    await expect(execAdd(conf)).rejects.toMatchObject({ code: 999, message: expect.stringContaining('duplicate allocation is not allowed') });
    expect(holder(`net${third}`, `10.99.${third}.2`)).toBe(`c-${third} eth0`); // the refused ADD freed nothing
    await execDel(conf);
    expect(holder(`net${third}`, `10.99.${third}.2`)).toBeNull();
    await execDel(conf);
    if (version !== '0.3.1') await expect(execCheck(conf)).rejects.toMatchObject({ code: 999 });
  });

  it('0.2.0: the ip4 result is read as such', async () => {
    process.env.CNI_CONTAINERID = 'c-old';
    const conf = input('0.2.0', 'net4', 4);
    expect((await execAdd(conf)).ips).toEqual([{ address: '10.99.4.2/24', gateway: '10.99.4.1' }]);
    await execDel(conf);
    expect(holder('net4', '10.99.4.2')).toBeNull();
  });

  it('says which versions host-local speaks; before 1.1.0 it refuses a forwarded STATUS', async () => {
    const versions = await delegateVersions('host-local');
    expect(versions).toContain('1.0.0');
    delete process.env.CNI_CONTAINERID; // a runtime sends STATUS without one
    const status = execStatus(input('1.1.0', 'net6', 6));
    if (versions.includes('1.1.0')) await status;
    else await expect(status).rejects.toMatchObject({ code: expect.any(Number) });
  });

  it('execAddThen frees the address when a later step fails', async () => {
    process.env.CNI_CONTAINERID = 'c-fails';
    const conf = input('1.0.0', 'net5', 5);
    let held: string | null = null;
    const failure = new Error('could not make the veth pair');
    await expect(
      execAddThen(conf, (result) => {
        held = holder('net5', result.ips![0]!.address.split('/')[0]!);
        throw failure;
      }),
    ).rejects.toBe(failure);
    expect(held).toBe('c-fails eth0');
    expect(readdirSync(join(dataDir, 'net5')).filter((name) => name.startsWith('10.'))).toEqual([]);
  });
});
