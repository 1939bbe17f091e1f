// What a lab with FRR routers is before any daemon runs: the configuration
// ospfd gets, the routes the lab leaves to FRR, and how waitConverged judges
// a router's routes. No privileges: nothing is built.
import { describe, expect, it } from 'vitest';
import { frrFiles } from '../../dist/testing/lab/frr-config.js';
import { routeProblems } from '../../dist/testing/lab/converge.js';
import { planLab } from '../../dist/testing/lab/plan.js';
import { checkLabSpec } from '../../dist/testing/lab/spec.js';

const ospf = { frr: { ospf: {} } };
// Segments in link order: h1-r1 .1, h2-r2 .2, h3-r3 .3, r1-r2 .4, r2-r3 .5, r1-r3 .6.
const spec = checkLabSpec({
  ipv6: false,
  hosts: { h1: {}, h2: {}, h3: {} },
  routers: { r1: ospf, r2: ospf, r3: { frr: { ospf: { hello: 2, dead: 8 } } } },
  links: [['h1', 'r1'], ['h2', 'r2'], ['h3', 'r3'], ['r1', 'r2'], ['r2', 'r3'], ['r1', 'r3']],
});
const triangle = planLab(spec);
const frr = new Set(['r1', 'r2', 'r3']);
const connected = (...subnets: number[]) => subnets.map((n) => ({ destination: `10.0.${n}.0/24`, gateways: [] as string[] }));

describe('a lab with FRR routers', () => {
  it('gives ospfd every interface with its timers, point-to-point toward routers, passive toward hosts, and every subnet in area 0', () => {
    const { files, daemons } = frrFiles('r3', spec.frr.get('r3')!, triangle);
    expect(daemons.map((d) => d.daemon)).toEqual(['zebra', 'ospfd']);
    const text = files['ospfd.conf']!;
    expect(text).toContain('interface eth0\n ip ospf hello-interval 2\n ip ospf dead-interval 8\n ip ospf passive\n');
    expect(text).toContain('interface eth1\n ip ospf hello-interval 2\n ip ospf dead-interval 8\n ip ospf network point-to-point\n');
    expect(text).toContain(' network 10.0.3.0/24 area 0\n network 10.0.5.0/24 area 0\n network 10.0.6.0/24 area 0\n');
    expect(text).toContain(' ospf router-id 10.0.3.2\n');
  });

  it('plans no IPv4 route for an FRR router, and the hosts theirs as before', () => {
    expect(triangle.routes.r1).toEqual([]);
    expect(triangle.routes.h1!.map((r) => [r.destination, r.gateway])).toContainEqual(['default', '10.0.1.2']);
  });

  it('judges a route through a neighbour off the shortest way as not converged, and a link down takes its subnet and its shortcut away', () => {
    const direct = [...connected(1, 4, 6), { destination: '10.0.2.0/24', gateways: ['10.0.4.2'] }, { destination: '10.0.5.0/24', gateways: ['10.0.4.2', '10.0.6.2'] }];
    expect(routeProblems(triangle, frr, new Set(), 'r1', [...direct, { destination: '10.0.3.0/24', gateways: ['10.0.6.2'] }])).toEqual([]);
    expect(routeProblems(triangle, frr, new Set(), 'r1', [...direct, { destination: '10.0.3.0/24', gateways: ['10.0.4.2'] }])).toEqual(['10.0.3.0/24 (through 10.0.4.2, not on a shortest way)']);
    expect(routeProblems(triangle, frr, new Set(), 'r1', direct)).toEqual(['10.0.3.0/24']);
    const down = new Set(['r1>r3']);
    const around = [...connected(1, 4), ...['10.0.2.0/24', '10.0.3.0/24', '10.0.5.0/24'].map((destination) => ({ destination, gateways: ['10.0.4.2'] }))];
    expect(routeProblems(triangle, frr, down, 'r1', around)).toEqual([]);
  });
});
