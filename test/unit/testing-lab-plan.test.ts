// A lab's plan: segments, subnets, addresses and routes worked out before
// anything is made, and bad specs refused whole. No privileges: nothing is built.
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createLab, Lab } from '../../dist/testing.js';
import { planLab } from '../../dist/testing/lab/plan.js';
import { checkLabSpec } from '../../dist/testing/lab/spec.js';
import type { LabSpec } from '../../dist/testing.js';

const plan = (spec: LabSpec) => planLab(checkLabSpec(spec));
const endOf = (p: ReturnType<typeof plan>, node: string) => p.links.flatMap((l) => [l.a, l.b]).filter((e) => e.node === node);

// Two switched subnets and a point-to-point router link: three segments, as the README's lab.
const routed: LabSpec = {
  hosts: { a: {}, b: {}, c: {} },
  switches: { s1: {}, s2: {} },
  routers: { r1: {}, r2: {} },
  links: [['a', 's1'], ['b', 's1'], ['r1', 's1'], ['r1', 'r2'], ['r2', 's2'], ['c', 's2']],
};

describe('a lab is planned before anything is made', () => {
  it('gives each segment a subnet in the order it first appears, and addresses in link order', () => {
    const p = plan(routed);
    expect(p.segments.map((s) => [s.subnet, s.subnet6, s.switches])).toEqual([
      ['10.0.1.0/24', 'fd00:0:0:1::/64', ['s1']],
      ['10.0.2.0/24', 'fd00:0:0:2::/64', []],
      ['10.0.3.0/24', 'fd00:0:0:3::/64', ['s2']],
    ]);
    expect(endOf(p, 'a')).toEqual([{ node: 'a', iface: 'eth0', addresses: ['10.0.1.1/24', 'fd00:0:0:1::1/64'] }]);
    expect(endOf(p, 'r1').map((e) => [e.iface, e.addresses[0]])).toEqual([['eth0', '10.0.1.3/24'], ['eth1', '10.0.2.1/24']]);
    expect(endOf(p, 's1').map((e) => e.addresses)).toEqual([[], [], []]);
  });

  it('routes every node to every subnet it can reach, through the first router on the way; a host by default through its router, which then takes the subnets behind it', () => {
    const p = plan({ ...routed, ipv6: false });
    expect(p.routes.a).toEqual([{ destination: 'default', gateway: '10.0.1.3', device: 'eth0' }]);
    expect(p.routes.r1).toEqual([{ destination: '10.0.3.0/24', gateway: '10.0.2.2', device: 'eth1' }]);
    expect(p.routes.c).toEqual([{ destination: 'default', gateway: '10.0.3.1', device: 'eth0' }]);
    expect(p.routes.s1).toBeUndefined();
    expect(plan(routed).routes.a!.filter((route) => route.destination === 'default')).toEqual([
      { destination: 'default', gateway: '10.0.1.3', device: 'eth0' },
      { destination: 'default', gateway: 'fd00:0:0:1::3', device: 'eth0' },
    ]);
  });

  it("keeps a host's routes through a router other than its default one", () => {
    // Two routers on the hosts' switch: r1 leads to s2's subnet, r2 to s3's.
    const p = plan({
      hosts: { a: {}, b: {}, c: {} },
      switches: { s1: {}, s2: {}, s3: {} },
      routers: { r1: {}, r2: {} },
      links: [['a', 's1'], ['r1', 's1'], ['r2', 's1'], ['r1', 's2'], ['b', 's2'], ['r2', 's3'], ['c', 's3']],
      ipv6: false,
    });
    expect(p.routes.a).toEqual([
      { destination: '10.0.3.0/24', gateway: '10.0.1.3', device: 'eth0' },
      { destination: 'default', gateway: '10.0.1.2', device: 'eth0' },
    ]);
  });

  it('never routes through a host, even one with two links', () => {
    const p = plan({ hosts: { a: {}, m: {}, b: {} }, links: [['a', 'm'], ['m', 'b']], ipv6: false });
    expect(p.routes.a).toEqual([]);
    expect(p.routes.b).toEqual([]);
  });

  it('takes given subnets and addresses, and picks the rest around them', () => {
    const p = plan({
      hosts: { a: {}, b: {} },
      switches: { s1: { subnet: '192.168.7.0/24', subnet6: '2001:db8:7::/64' } },
      links: [['a', 's1', { addresses: { a: ['192.168.7.1', '2001:db8:7::a/64'] } }], ['b', 's1']],
    });
    expect(endOf(p, 'a')[0]!.addresses).toEqual(['192.168.7.1/24', '2001:db8:7::a/64']);
    expect(endOf(p, 'b')[0]!.addresses).toEqual(['192.168.7.2/24', '2001:db8:7::1/64']);
  });

  it('takes /31 and /127 point-to-point subnets, both addresses usable (RFC 3021, RFC 6164)', () => {
    const p = plan({ hosts: { a: {}, b: {} }, links: [['a', 'b', { subnet: '10.9.0.0/31', subnet6: 'fd09::/127' }]] });
    expect(p.links[0]!.a.addresses).toEqual(['10.9.0.0/31', 'fd09::/127']);
    expect(p.links[0]!.b.addresses).toEqual(['10.9.0.1/31', 'fd09::1/127']);
  });

  it('skips a picked subnet that a given one overlaps', () => {
    const p = plan({ hosts: { a: {}, b: {}, c: {} }, links: [['a', 'b'], ['b', 'c', { subnet: '10.0.1.0/30' }]], ipv6: false });
    expect(p.segments.map((s) => s.subnet)).toEqual(['10.0.2.0/24', '10.0.1.0/30']);
  });

  it('switches joined after hosts were linked to them are still one segment', () => {
    const p = plan({ hosts: { h1: {}, h2: {} }, switches: { s1: {}, s2: {} }, links: [['s1', 'h1'], ['s2', 'h2'], ['s1', 's2']], ipv6: false });
    expect(p.segments).toEqual([{ subnet: '10.0.1.0/24', switches: ['s1', 's2'] }]);
    expect(p.links.flatMap((l) => [l.a, l.b]).filter((e) => e.node.startsWith('h')).map((e) => e.addresses)).toEqual([['10.0.1.1/24'], ['10.0.1.2/24']]);
  });

  it('a switch tree is one segment', () => {
    const p = plan({ hosts: { a: {}, b: {} }, switches: { s1: {}, s2: {} }, links: [['a', 's1'], ['s1', 's2'], ['b', 's2']], ipv6: false });
    expect(p.segments).toHaveLength(1);
    expect(p.links.map((l) => l.segment)).toEqual([0, 0, 0]);
  });

  it("leads every node's IPv4 default route to the NAT router, whose uplink subnet overlaps neither the lab's nor the machine's", () => {
    const spec: LabSpec = { hosts: { a: {}, c: {} }, routers: { r1: {}, r2: { nat: {} } }, links: [['a', 'r1'], ['r1', 'r2'], ['c', 'r2']], ipv6: false };
    const p = planLab(checkLabSpec(spec), ['100.64.0.0/11']); // the machine holds half of 100.64.0.0/10
    expect(p.nat).toMatchObject({ node: 'r2', iface: 'uplink', machineIface: expect.stringMatching(/^nslab[0-9a-f]{8}$/) });
    expect(p.nat!.subnet).toMatch(/^100\.(9[6-9]|1[01]\d|12[0-7])\.\d+\.\d+\/30$/);
    expect(p.routes.a).toContainEqual({ destination: 'default', gateway: '10.0.1.2', device: 'eth0' });
    expect(p.routes.a!.filter((route) => route.destination === 'default')).toHaveLength(1);
    expect(p.routes.r1).toContainEqual({ destination: 'default', gateway: '10.0.2.2', device: 'eth1' });
    expect(p.routes.c).toContainEqual({ destination: 'default', gateway: '10.0.3.2', device: 'eth0' });
    expect(p.routes.r2!.some((route) => route.destination === 'default')).toBe(false); // its own goes with the uplink
    expect(() => planLab(checkLabSpec(spec), ['100.64.0.0/10'])).toThrow(expect.objectContaining({ code: 'ERR_NETNS_FIXTURE', message: expect.stringContaining('give one') }));
  });

  it("refuses a given nat subnet wider than a /24 or narrower than a /30, or one the machine has (its end would take the machine's routes)", () => {
    const withSubnet = (subnet: string, machine: string[] = []) =>
      planLab(checkLabSpec({ hosts: { a: {} }, routers: { gw: { nat: { subnet } } }, links: [['a', 'gw']], ipv6: false }), machine);
    const refused = (text: string) => expect.objectContaining({ code: 'ERR_NETNS_INVALID_ARG', message: expect.stringContaining(text) });
    for (const wide of ['0.0.0.0/1', '10.0.0.0/8', '100.64.0.0/23']) expect(() => withSubnet(wide), wide).toThrow(refused('/24 to a /30'));
    expect(() => withSubnet('100.64.9.0/31')).toThrow(refused('/24 to a /30'));
    expect(() => withSubnet('192.0.2.0/30', ['192.0.2.2/24'])).toThrow(refused("overlaps the machine's 192.0.2.2/24"));
    expect(withSubnet('100.64.9.0/24', ['192.0.2.2/24']).nat).toMatchObject({ machineAddress: '100.64.9.1/24', routerAddress: '100.64.9.2/24' });
  });
});

describe('createLab refuses a bad spec before making anything', () => {
  const invalid = expect.objectContaining({ name: 'NetnsError', code: 'ERR_NETNS_INVALID_ARG' });
  // Other test files make namespaces meanwhile: only names this process's labs would take are judged.
  const prefix = `nsplan${randomBytes(2).toString('hex')}-`;
  const ours = (): string[] => (existsSync('/run/netns') ? readdirSync('/run/netns') : []).filter((name) => name.startsWith(prefix) || name.startsWith(`nsfix-${process.pid}-`));
  it.each<[string, unknown, RegExp]>([
    ['no spec', undefined, /takes a spec/],
    ['an unknown node in a link', { hosts: { a: {} }, links: [['a', 'ghost']] }, /unknown node "ghost"/],
    ['a link from a node to itself', { hosts: { a: {} }, links: [['a', 'a']] }, /not a to itself/],
    ['two links between the same nodes', { hosts: { a: {}, b: {} }, links: [['a', 'b'], ['b', 'a']] }, /linked twice/],
    ['a loop of switches', { hosts: {}, switches: { s1: {}, s2: {}, s3: {} }, links: [['s1', 's2'], ['s2', 's3'], ['s3', 's1']] }, /loop/],
    ['a node declared twice', { hosts: { x: {} }, routers: { x: {} } }, /declared twice/],
    ['a duplicate address', { hosts: { a: {}, b: {}, c: {} }, links: [['a', 'b', { addresses: { a: '10.9.0.1/24' } }], ['a', 'c', { addresses: { c: '10.9.0.1/24' } }]] }, /given twice|overlaps/],
    ['an address outside its switch subnet', { hosts: { a: {} }, switches: { s: { subnet: '10.1.0.0/24' } }, links: [['a', 's', { addresses: { a: '10.2.0.1/24' } }]] }, /not in its segment/],
    ['an address on a switch port', { hosts: { a: {} }, switches: { s: {} }, links: [['a', 's', { addresses: { s: '10.2.0.1/24' } }]] }, /switch port carries none/],
    ['overlapping subnets', { hosts: { a: {}, b: {} }, switches: { s1: { subnet: '10.5.0.0/16' }, s2: { subnet: '10.5.1.0/24' } }, links: [['a', 's1'], ['b', 's2']] }, /overlaps/],
    ['a subnet of the wrong family', { hosts: {}, switches: { s: { subnet: 'fd00::/64' } } }, /not an IPv4 prefix/],
    ['an unknown key', { hosts: {}, switch: {} }, /unknown key "switch"/],
    ['an IPv6 address in a lab without IPv6', { hosts: { a: {}, b: {} }, links: [['a', 'b', { addresses: { a: 'fd00::1/64' } }]], ipv6: false }, /ipv6: false/],
    ['an unknown link option', { hosts: { a: {}, b: {} }, links: [['a', 'b', { delay: '5ms' }]] }, /unknown key "delay"/],
    ['jitter without delay', { hosts: { a: {}, b: {} }, links: [['a', 'b', { impair: { a: { jitter: '5ms' } } }]] }, /needs a delay/],
    ['a rate without a known unit', { hosts: { a: {}, b: {} }, links: [['a', 'b', { impair: { a: { rate: '10 furlongs' } } }]] }, /rate of link a-b/],
    ['loss over 100 percent', { hosts: { a: {}, b: {} }, links: [['a', 'b', { impair: { b: { loss: 101 } } }]] }, /percent/],
    ['an impairment by a node not on the link', { hosts: { a: {}, b: {}, c: {} }, links: [['a', 'b', { impair: { c: { loss: 1 } } }]] }, /impairs "c"/],
  ])('%s', async (_what, spec, message) => {
    const exitHooks = process.listenerCount('exit');
    const withPrefix = typeof spec === 'object' && spec !== null ? { ...spec, prefix } : spec;
    const outcome = createLab(withPrefix as LabSpec);
    await expect(outcome).rejects.toEqual(invalid);
    await expect(outcome).rejects.toThrow(message);
    expect(process.listenerCount('exit')).toBe(exitHooks);
    expect(ours()).toEqual([]);
  });
});

describe('Lab.attach refuses a damaged state before opening anything', () => {
  const good = () => {
    const p = plan({ hosts: { a: {}, b: {} }, links: [['a', 'b']], ipv6: false, prefix: 'nsattach-' });
    return { plan: p, names: { a: 'nsattach-x.a', b: 'nsattach-x.b' }, impairments: [] as unknown[], down: [] as unknown[], partitions: [] as unknown[], nextPartition: 1 };
  };
  it.each<[string, (s: ReturnType<typeof good>) => void]>([
    ['an impairment of a link that is not there', (s) => s.impairments.push(['a', 'zz', { loss: 1 }])],
    ['a partition of unknown nodes', (s) => s.partitions.push({ id: 1, sides: [['a'], ['zz']] }) && (s.nextPartition = 2)],
    ['a next partition id already taken', (s) => s.partitions.push({ id: 3, sides: [['a'], ['b']] }) && (s.nextPartition = 3)],
    ['two nodes under one namespace name', (s) => (s.names.b = s.names.a)],
    ['a node without a name', (s) => delete (s.names as Record<string, string>).b],
    ['a link down that is no link', (s) => s.down.push('a>a')],
    ['no plan', (s) => delete (s as Partial<typeof s>).plan],
  ])('%s', async (_what, damage) => {
    const state = good();
    damage(state);
    await expect(Lab.attach(state as never)).rejects.toMatchObject({ code: 'ERR_NETNS_INVALID_ARG' });
  });
});
