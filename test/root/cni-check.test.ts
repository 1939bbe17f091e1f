// The CHECK helpers against a namespace set up by `ip`, each rule of what
// they compare pinned: the result's interface entry chosen by name and
// sandbox, only that entry's addresses judged, MACs and address texts
// compared as values, a route's gateway taken from the result's ips of its
// family, found in any table and among a multipath route's hops, and every
// difference named exactly (ERR_NETNS_CNI_CHECK, CNI code 110).
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NetNS } from '../../dist/index.js';
import { checkInterface, checkRoutes } from '../../dist/cni/check.js';
import type { Result } from '../../dist/cni/types.js';
import { createTestNetwork, type TestNetwork } from '../../dist/testing.js';
import { privileged } from '../helpers/privileges.js';

const MAC = '02:00:00:00:00:aa';
const missing = (message: string) => expect.objectContaining({ code: 'ERR_NETNS_CNI_CHECK', message: `CHECK: ${message}` });

describe.skipIf(!privileged)('the CNI CHECK helpers', () => {
  let network: TestNetwork<'c'>;
  let c: NetNS;

  beforeAll(async () => {
    network = await createTestNetwork<'c'>({ prefix: `nscheck-${randomBytes(2).toString('hex')}-`, hosts: { c: {} } });
    c = network.hosts.c;
    const ip = (...args: string[]) => c.execFile('ip', args);
    // veth pairs with both ends here (this machine's kernel has no dummy module)
    await ip('link', 'add', 'eth0', 'address', MAC, 'type', 'veth', 'peer', 'name', 'p0');
    await ip('link', 'add', 'eth1', 'type', 'veth', 'peer', 'name', 'p1');
    for (const name of ['eth0', 'p0', 'eth1', 'p1']) await ip('link', 'set', name, 'up');
    await ip('address', 'add', '10.5.0.2/24', 'dev', 'eth0');
    await ip('address', 'add', 'fd00:5::2/64', 'dev', 'eth0', 'nodad');
    await ip('address', 'add', '10.6.0.2/24', 'dev', 'eth1');
    await ip('route', 'add', 'default', 'via', '10.5.0.1');
    await ip('-6', 'route', 'add', 'default', 'via', 'fd00:5::1');
    await ip('route', 'add', '10.20.0.0/16', 'via', '10.5.0.1', 'table', '100');
    await ip('route', 'add', '10.30.0.0/16', 'nexthop', 'via', '10.5.0.1', 'nexthop', 'via', '10.5.0.3');
    await ip('route', 'add', '10.40.0.0/16', 'dev', 'eth0');
  });

  afterAll(async () => {
    await network?.delete();
  });

  it("passes on the entry's own addresses, the MAC in any case and address texts by value, ignoring other entries' addresses", async () => {
    const result: Result = {
      cniVersion: '1.1.0',
      interfaces: [{ name: 'eth1' }, { name: 'eth0', mac: MAC.toUpperCase() }],
      ips: [
        { interface: 1, address: '10.5.0.2/24' },
        { interface: 1, address: 'fd00:5:0:0::2/64' },
        { interface: 0, address: '10.99.0.1/24' }, // eth1's, which another plugin's CHECK judges
      ],
    };
    await checkInterface(c, 'eth0', result, { kind: 'veth' });
    await expect(checkInterface(c, 'eth1', result)).rejects.toEqual(missing('address 10.99.0.1/24 is missing on eth1'));
    await expect(checkInterface(c, 'eth0', { ...result, ips: [{ interface: 1, address: '10.5.0.2/25' }] })).rejects.toEqual(missing('address 10.5.0.2/25 is missing on eth0'));
  });

  it('chooses the entry named ifname in the sandbox given, and names what it lacks', async () => {
    const result: Result = {
      cniVersion: '1.1.0',
      interfaces: [{ name: 'eth0', sandbox: '/run/netns/other', mac: '02:00:00:00:00:bb' }, { name: 'eth0', sandbox: c.path, mac: MAC }],
      ips: [{ interface: 1, address: '10.5.0.2/24' }],
    };
    await checkInterface(c, 'eth0', result, { sandbox: c.path });
    await expect(checkInterface(c, 'eth0', result)).rejects.toEqual(missing('interface eth0 has MAC 02:00:00:00:00:aa, the result says 02:00:00:00:00:bb'));
    await expect(checkInterface(c, 'eth0', result, { sandbox: '/run/netns/nowhere' })).rejects.toEqual(missing('the result has no interface named eth0 in /run/netns/nowhere'));
    await expect(checkInterface(c, 'eth9', result)).rejects.toEqual(missing('the result has no interface named eth9'));
    await expect(checkInterface(c, 'eth0', { cniVersion: '1.1.0' })).rejects.toEqual(missing('the result has no interface named eth0'));
  });

  it('names the kind it found, a device without one included', async () => {
    const result: Result = { cniVersion: '1.1.0', interfaces: [{ name: 'eth0' }, { name: 'lo' }] };
    await expect(checkInterface(c, 'eth0', result, { kind: 'bridge' })).rejects.toEqual(missing('interface eth0 is a veth, not a bridge'));
    await expect(checkInterface(c, 'lo', result, { kind: 'veth' })).rejects.toEqual(missing('interface lo is a device without a kind, not a veth'));
    await checkInterface(c, 'lo', result);
  });

  it("finds each route in any table, by its gateway or the first of its family among the result's ips", async () => {
    const ips = [
      { interface: 0, address: 'fd00:5::2/64', gateway: 'fd00:5::1' },
      { interface: 0, address: '10.5.0.2/24' },
      { interface: 0, address: '10.5.0.4/24', gateway: '10.5.0.1' },
    ];
    const routes = [
      { dst: '0.0.0.0/0' },
      { dst: '::/0' },
      { dst: '::/0', gw: 'fd00:5:0:0::1' },
      { dst: '10.20.0.5/16', gw: '10.5.0.1' }, // in table 100, given with host bits set
      { dst: '10.30.0.0/16', gw: '10.5.0.3' }, // the second hop of a multipath route
    ];
    await checkRoutes(c, { cniVersion: '1.1.0', ips, routes });
    await checkRoutes(c, { cniVersion: '1.1.0', ips: [{ interface: 0, address: '10.5.0.2/24' }], routes: [{ dst: '10.40.0.0/16' }] }); // no gateway anywhere: any route
    await checkRoutes(c, { cniVersion: '1.1.0', routes: [] });
  });

  it('names a missing route, with the gateway it looked for', async () => {
    await expect(checkRoutes(c, { cniVersion: '1.1.0', routes: [{ dst: '10.50.0.0/16' }] })).rejects.toEqual(missing('route to 10.50.0.0/16 is missing'));
    await expect(checkRoutes(c, { cniVersion: '1.1.0', routes: [{ dst: '10.40.0.0/16', gw: '10.5.0.9' }] })).rejects.toEqual(missing('route to 10.40.0.0/16 via 10.5.0.9 is missing'));
    const ips = [{ interface: 0, address: '10.5.0.2/24', gateway: '10.5.0.7' }];
    await expect(checkRoutes(c, { cniVersion: '1.1.0', ips, routes: [{ dst: '0.0.0.0/0' }] })).rejects.toEqual(missing('route to 0.0.0.0/0 via 10.5.0.7 is missing'));
    await expect(checkRoutes(c, { cniVersion: '1.1.0', ips, routes: [{ dst: '10.30.0.0/16', gw: '10.5.0.8' }] })).rejects.toEqual(missing('route to 10.30.0.0/16 via 10.5.0.8 is missing'));
  });
});
