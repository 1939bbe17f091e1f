// The cni-ptp example in the chains issue 14 names, run by netns/cni/testing
// as libcni runs them, with the official Go plugins (Debian's
// containernetworking-plugins 1.1.1) around it: [cni-ptp, tuning, portmap] and
// [loopback, cni-ptp] at 1.0.0 and 0.4.0. The official plugins accept its
// result (tuning changes the MAC in it, portmap finds the address in it), and
// test/root/cni-harness-peers.test.ts runs the same chains with the Go ptp.
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { NetNS } from '../../dist/index.js';
import { AddressSets } from '../../dist/addrset/index.js';
import { attachmentKey } from '../../dist/cni/identity.js';
import { hasIpVersion, parseConfList, type NetworkConfigList, type RuntimeConf } from '../../dist/cni/testing/index.js';
import { useHarness } from '../helpers/cni-harness-fixture.js';
import { ipJson } from '../helpers/scratch-namespaces.js';
import { tcpHello } from '../helpers/tcp-hello.js';
import { privileged } from '../helpers/privileges.js';

const GO_PLUGINS = '/usr/lib/cni';
const OURS = fileURLToPath(new URL('../../examples/cni-ptp/dist/cni-ptp.cjs', import.meta.url)); // the example as it ships: one bundled file
const haveGoPlugins = ['host-local', 'loopback', 'tuning', 'portmap'].every((name) => existsSync(join(GO_PLUGINS, name)));
if (!haveGoPlugins && process.env.CI) throw new Error('CI must install containernetworking-plugins (host-local, loopback, tuning, portmap in /usr/lib/cni)');

type Hosts = 'host' | 'c1' | 'c2' | 'c3' | 'c4';

describe.skipIf(!privileged || !haveGoPlugins)('cni-ptp in chains with the official plugins, run as libcni runs them', () => {
  const tag = randomBytes(3).toString('hex');
  // The plugin as a runtime finds it: an executable named by its type in a CNI_PATH directory.
  const fixture = useHarness(`nsptpc-${tag}-`, ['c1', 'c2', 'c3', 'c4'] as const, (scratch) => {
    const bin = join(scratch, 'bin');
    mkdirSync(bin);
    writeFileSync(join(bin, 'cni-ptp'), `#!/bin/sh\nexec '${process.execPath}' '${OURS}'\n`);
    chmodSync(join(bin, 'cni-ptp'), 0o755);
    return [bin, GO_PLUGINS];
  });
  const add = (list: NetworkConfigList, rt: RuntimeConf) => fixture.add(list, rt);

  const ptp = (n: number) => ({ type: 'cni-ptp', ipMasq: true, dataDir: join(fixture.scratch, 'cni-ptp'), ipam: { type: 'host-local', dataDir: join(fixture.scratch, 'host-local'), ranges: [[{ subnet: `10.62.${n}.0/24` }]], routes: [{ dst: '0.0.0.0/0' }] } });
  const allocated = (list: NetworkConfigList, address: string): boolean => existsSync(join(fixture.scratch, 'host-local', list.name, address));
  const linkNames = (ns: NetNS): string[] => ipJson(ns, 'link', 'show').map((link) => link.ifname as string);
  const setState = async (list: NetworkConfigList, rt: RuntimeConf) => {
    const key = attachmentKey(list.name, { containerID: rt.containerId, ifname: rt.ifname });
    const sets = await AddressSets.open({ netns: fixture.hosts.host, table: `cni_ptp_${key.slice(0, 16)}`, readOnly: true });
    try {
      return await sets.inspect(key);
    } finally {
      await sets.close();
    }
  };

  it.each([
    ['1.0.0', 1],
    ['0.4.0', 2],
  ])('%s: [cni-ptp, tuning, portmap]: ADD, CHECK (as far as portmap 1.1.1 lets it), DEL, a second DEL', async (version, n) => {
    const container = fixture.hosts[`c${n}` as Hosts];
    const list = parseConfList({
      cniVersion: version,
      name: `ptc${n}-${tag}`,
      plugins: [ptp(n), { type: 'tuning', capabilities: { mac: true }, dataDir: join(fixture.scratch, 'tuning') }, { type: 'portmap', capabilities: { portMappings: true } }],
    });
    const mac = `02:00:00:00:62:0${n}`;
    const hostPort = 18180 + n;
    const rt: RuntimeConf = { containerId: `ctr-${n}-${tag}`, netns: container.path, ifname: 'eth0', capabilityArgs: { mac, portMappings: [{ hostPort, containerPort: 80, protocol: 'tcp' }] } };
    const { result, printed } = await add(list, rt);

    // tuning read our result and wrote the MAC it set into it; portmap found our address in it.
    expect(result.interfaces).toEqual([{ name: expect.stringMatching(/^veth[0-9a-f]{11}$/), mac: expect.any(String) }, { name: 'eth0', mac, sandbox: container.path }]);
    expect(result.ips).toEqual([{ interface: 1, address: `10.62.${n}.2/24`, gateway: `10.62.${n}.1` }]);
    expect((printed as { ips: object[] }).ips[0]).toEqual(hasIpVersion(version) ? expect.objectContaining({ version: '4' }) : expect.not.objectContaining({ version: expect.anything() }));
    expect(ipJson(container, 'link', 'show', 'eth0')[0]!.address).toBe(mac);
    expect(await tcpHello(container, `10.62.${n}.2`, fixture.hosts.host, `10.62.${n}.1`, { listen: 80, connect: hostPort })).toBe('hello');
    expect(await setState(list, rt)).toMatchObject({ state: 'orphan', v4: { elements: [`10.62.${n}.2`] } });

    // Our CHECK (against the cached result, with tuning's MAC) and tuning's pass; portmap 1.1.1's fails on
    // its own, as with the Go ptp (it looks for IPv6 DNAT rules for an IPv4 address; fixed upstream).
    await expect(fixture.harness.check(list, rt)).rejects.toMatchObject({ command: 'CHECK', plugin: join(GO_PLUGINS, 'portmap'), message: expect.stringMatching(/^could not check ipv6 dnat/) });
    await fixture.harness.del(list, rt);
    expect(linkNames(container)).toEqual(['lo']);
    expect(allocated(list, `10.62.${n}.2`)).toBe(false);
    expect((await setState(list, rt)).state).toBe('pending');
    await fixture.harness.del(list, rt);
  });

  it.each([
    ['1.0.0', 3],
    ['0.4.0', 4],
  ])("%s: [loopback, cni-ptp]: ADD keeps loopback's result, CHECK, DEL, a second DEL", async (version, n) => {
    const container = fixture.hosts[`c${n}` as Hosts];
    const list = parseConfList({ cniVersion: version, name: `lpc${n}-${tag}`, plugins: [{ type: 'loopback' }, ptp(n)] });
    const rt: RuntimeConf = { containerId: `ctr-${n}-${tag}`, netns: container.path, ifname: 'eth0' };
    const { result } = await add(list, rt);
    expect(result.interfaces!.map((i) => i.name)).toEqual(['lo', expect.stringMatching(/^veth/), 'eth0']);
    expect(result.ips).toEqual([
      { interface: 0, address: '127.0.0.1/8' },
      { interface: 0, address: '::1/128' },
      { interface: 2, address: `10.62.${n}.2/24`, gateway: `10.62.${n}.1` },
    ]);
    await fixture.harness.check(list, rt);
    await fixture.harness.del(list, rt);
    expect(linkNames(container)).toEqual(['lo']);
    expect(allocated(list, `10.62.${n}.2`)).toBe(false);
    await fixture.harness.del(list, rt);
  });
});
