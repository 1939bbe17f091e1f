// The files an FRR router's daemons read, as text: ospfd's exact
// configuration (every interface with the timers; point-to-point straight to
// a router, passive where no other router is on the segment; the throttles
// set to react at once; each subnet in area 0 once), and a configuration
// given as is handed to zebra and every daemon asked for. Pure: no daemon runs.
import { describe, expect, it } from 'vitest';
import { frrFiles } from '../../src/testing/lab/frr-config.js';
import { planLab } from '../../src/testing/lab/plan.js';
import { checkLabSpec } from '../../src/testing/lab/spec.js';

// r1: eth0 to host h (r1 named second), eth1 straight to router r2, eth2 on switch s with router r3,
// eth3 and eth4 on the switch tree t–u with only host g. `lone` has no link. IPv6 on: router-id is IPv4 still.
const spec = checkLabSpec({
  hosts: { h: {}, g: {} },
  routers: { r1: { frr: { ospf: { hello: 2, dead: 7 } } }, r2: {}, r3: {}, lone: { frr: { ospf: {} } } },
  switches: { s: {}, t: {}, u: {} },
  links: [['h', 'r1'], ['r1', 'r2'], ['r1', 's'], ['r3', 's'], ['r1', 't'], ['g', 't'], ['r1', 'u'], ['u', 't']],
});
const plan = planLab(spec);
const interfaceOf = (iface: string, ...extra: string[]) => [`interface ${iface}`, ' ip ospf hello-interval 2', ' ip ospf dead-interval 7', ...extra, '!'];
const THROTTLES = [' timers throttle lsa all 0', ' timers lsa min-arrival 0', ' timers throttle spf 0 50 1000'];

describe('generated OSPF', () => {
  it("gives zebra the router's hostname, and ospfd every interface, the router-id, the throttles and each subnet once", () => {
    const { files, daemons } = frrFiles('r1', spec.frr.get('r1')!, plan);
    expect(daemons).toEqual([{ daemon: 'zebra', file: 'zebra.conf' }, { daemon: 'ospfd', file: 'ospfd.conf' }]);
    expect(Object.keys(files)).toEqual(['zebra.conf', 'ospfd.conf']);
    expect(files['zebra.conf']).toBe('hostname r1\n!\n');
    expect(files['ospfd.conf']).toBe(
      [
        'hostname r1', '!',
        ...interfaceOf('eth0', ' ip ospf passive'),
        ...interfaceOf('eth1', ' ip ospf network point-to-point'),
        ...interfaceOf('eth2'),
        ...interfaceOf('eth3', ' ip ospf passive'),
        ...interfaceOf('eth4', ' ip ospf passive'),
        'router ospf', ' ospf router-id 10.0.1.2', ...THROTTLES,
        ' network 10.0.1.0/24 area 0', ' network 10.0.2.0/24 area 0', ' network 10.0.3.0/24 area 0', ' network 10.0.4.0/24 area 0',
        '!', '',
      ].join('\n'),
    );
  });

  it('gives a router with no link no interface, no router-id and no network', () => {
    expect(frrFiles('lone', spec.frr.get('lone')!, plan).files).toEqual({
      'zebra.conf': 'hostname lone\n!\n',
      'ospfd.conf': ['hostname lone', '!', 'router ospf', ...THROTTLES, '!', ''].join('\n'),
    });
  });
});

describe('a configuration given as is', () => {
  it('is frr.conf, read by zebra and each daemon asked for, in order', () => {
    const config = 'router bgp 65000\n';
    expect(frrFiles('r2', { config, daemons: ['bgpd', 'staticd'] }, plan)).toEqual({
      files: { 'frr.conf': config },
      daemons: [{ daemon: 'zebra', file: 'frr.conf' }, { daemon: 'bgpd', file: 'frr.conf' }, { daemon: 'staticd', file: 'frr.conf' }],
    });
    expect(frrFiles('r2', { config: '', daemons: [] }, plan).daemons).toEqual([{ daemon: 'zebra', file: 'frr.conf' }]);
  });
});
