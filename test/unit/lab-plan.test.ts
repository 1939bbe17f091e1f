// More of a lab's plan than testing-lab-plan.test.ts pins: where a segment's
// subnet comes from (a switch, a link, an address with a length), which
// addresses a segment refuses (network, broadcast, outside it, taken, none
// left), the 255 subnets it picks at most, FRR routers' IPv6 routes, and the
// routes along a chain of routers. Pure: nothing is built.
import { describe, expect, it } from 'vitest';
import { planLab } from '../../src/testing/lab/plan.js';
import { checkLabSpec } from '../../src/testing/lab/spec.js';

const plan = (spec: object, machine?: string[]) => planLab(checkLabSpec(spec), machine);
const refused = (text: string) => expect.objectContaining({ code: 'ERR_NETNS_INVALID_ARG', message: text });
const onSwitch = (addresses: object, subnet?: string) =>
  plan({ hosts: { a: {}, b: {} }, switches: { s: subnet ? { subnet } : {} }, links: [['a', 's', { addresses }], ['b', 's']], ipv6: false });

describe("a segment's subnets", () => {
  it('refuses two subnets given to one segment, naming its switches', () => {
    const tree = (switches: object) => plan({ hosts: { a: {} }, switches, links: [['a', 's1'], ['s1', 's2']] });
    expect(() => tree({ s1: { subnet: '10.1.0.0/24' }, s2: { subnet: '10.2.0.0/24' } })).toThrow(refused('createLab: one segment (switch s1, s2) is given two subnets: 10.1.0.0/24, 10.2.0.0/24'));
    expect(() => tree({ s1: { subnet6: 'fd01::/64' }, s2: { subnet6: 'fd02::/64' } })).toThrow(refused('createLab: one segment (switch s1, s2) is given two subnet6s: fd01::/64, fd02::/64'));
    expect(tree({ s1: { subnet: '10.1.0.0/24' }, s2: { subnet: '10.1.0.0/24' } }).segments[0]!.subnet).toBe('10.1.0.0/24'); // the same one twice
  });

  it('refuses overlapping subnets, naming the link', () => {
    expect(() => plan({ hosts: { a: {}, b: {}, c: {}, d: {} }, links: [['a', 'b', { subnet: '10.5.0.0/16' }], ['c', 'd', { subnet: '10.5.1.0/24' }]] })).toThrow(
      refused('createLab: subnet 10.5.1.0/24 of link c-d overlaps 10.5.0.0/16 of another segment'),
    );
  });

  it('takes the subnet of the first address given with a length, per family; a bare address gives none', () => {
    const p = plan({ hosts: { a: {}, b: {} }, links: [['a', 'b', { addresses: { a: ['10.7.7.7/16', 'fd07::7/48'] } }]] });
    expect(p.segments).toEqual([{ subnet: '10.7.0.0/16', subnet6: 'fd07::/48', switches: [] }]);
    expect(p.links[0]!.b.addresses).toEqual(['10.7.0.1/16', 'fd07::1/48']);
    expect(plan({ hosts: { a: {}, b: {} }, links: [['a', 'b', { addresses: { b: '10.0.1.9' } }]], ipv6: false }).segments).toEqual([{ subnet: '10.0.1.0/24', switches: [] }]);
  });

  it('picks at most 255 IPv4 subnets, 10.0.1.0/24 to 10.0.255.0/24; IPv6 has no such end', () => {
    const pairs = (n: number, options: (i: number) => object = () => ({})) => ({
      hosts: Object.fromEntries(Array.from({ length: 2 * n }, (_, i) => [`h${i}`, {}])),
      links: Array.from({ length: n }, (_, i) => [`h${2 * i}`, `h${2 * i + 1}`, options(i)]),
    });
    expect(plan({ ...pairs(255), ipv6: false }).segments.at(-1)!.subnet).toBe('10.0.255.0/24');
    expect(() => plan({ ...pairs(256), ipv6: false })).toThrow(refused('createLab: more than 255 segments need a subnet picked: give switches and links their subnets'));
    const given = plan(pairs(256, (i) => ({ subnet: `10.${1 + (i >> 8)}.${i & 0xff}.0/24` })));
    expect(given.segments.at(-1)).toEqual({ subnet: '10.1.255.0/24', subnet6: 'fd00:0:0:100::/64', switches: [] });
  });
});

describe("a segment's addresses", () => {
  it('refuses the network and (IPv4) broadcast address, IPv6 all-ones taken', () => {
    expect(() => onSwitch({ a: '10.0.1.0' })).toThrow(refused("createLab: a's eth0 (link a-s) 10.0.1.0 is the network or broadcast address of 10.0.1.0/24"));
    expect(() => onSwitch({ a: '10.0.1.255' })).toThrow(refused("createLab: a's eth0 (link a-s) 10.0.1.255 is the network or broadcast address of 10.0.1.0/24"));
    expect(onSwitch({ a: '10.0.1.254' }).links[0]!.a.addresses).toEqual(['10.0.1.254/24']);
    const v6 = (address: string) => plan({ hosts: { a: {} }, switches: { s: {} }, links: [['a', 's', { addresses: { a: address } }]] });
    expect(() => v6('fd00:0:0:1::')).toThrow(refused("createLab: a's eth0 (link a-s) fd00:0:0:1:: is the network or broadcast address of fd00:0:0:1::/64"));
    expect(v6('fd00:0:0:1:ffff:ffff:ffff:ffff').links[0]!.a.addresses).toEqual(['10.0.1.1/24', 'fd00::1:ffff:ffff:ffff:ffff/64']);
  });

  it('refuses an address outside the segment, or with another length', () => {
    expect(() => onSwitch({ a: '10.0.2.1/24' }, '10.0.1.0/24')).toThrow(refused("createLab: a's eth0 (link a-s) 10.0.2.1/24 is not in its segment's subnet 10.0.1.0/24"));
    expect(() => onSwitch({ a: '10.0.1.5/25' }, '10.0.1.0/24')).toThrow(refused("createLab: a's eth0 (link a-s) 10.0.1.5/25 is not in its segment's subnet 10.0.1.0/24"));
  });

  it('reserves given addresses before picking, and refuses one given twice', () => {
    const p = plan({ hosts: { a: {}, b: {} }, switches: { s: {} }, links: [['a', 's'], ['b', 's', { addresses: { b: '10.0.1.1' } }]], ipv6: false });
    expect(p.links.map((l) => l.a.addresses)).toEqual([['10.0.1.2/24'], ['10.0.1.1/24']]);
    expect(() => plan({ hosts: { a: {}, b: {} }, switches: { s: {} }, links: [['a', 's', { addresses: { a: '10.0.1.7' } }], ['b', 's', { addresses: { b: '10.0.1.7/24' } }]], ipv6: false })).toThrow(
      refused("createLab: b's eth0 (link b-s): address 10.0.1.7 is given twice"),
    );
  });

  it('gives a /30 its two host addresses, and refuses a third', () => {
    const hosts = { a: {}, b: {}, c: {} };
    expect(plan({ hosts, switches: { s: { subnet: '10.9.0.0/30' } }, links: [['a', 's'], ['b', 's']], ipv6: false }).links.map((l) => l.a.addresses)).toEqual([['10.9.0.1/30'], ['10.9.0.2/30']]);
    expect(() => plan({ hosts, switches: { s: { subnet: '10.9.0.0/30' } }, links: [['a', 's'], ['b', 's'], ['c', 's']], ipv6: false })).toThrow(
      refused("createLab: 10.9.0.0/30 has no address left for c's eth0 (link c-s): give the segment a larger subnet"),
    );
  });
  it('takes either address of a /31 as given, the other left for the far end (RFC 3021: no network or broadcast)', () => {
    const p = plan({ hosts: { a: {}, b: {} }, links: [['a', 'b', { subnet: '10.9.0.0/31', addresses: { a: '10.9.0.1' } }]], ipv6: false });
    expect([p.links[0]!.a.addresses, p.links[0]!.b.addresses]).toEqual([['10.9.0.1/31'], ['10.9.0.0/31']]);
  });
});

describe('the rest of the plan', () => {
  it('carries each node its dirs, and each link its impairments', () => {
    const p = plan({ hosts: { a: { dirs: { '/tmp': 'empty' } }, b: {} }, links: [['a', 'b', { impair: { b: { loss: 5 } } }]] });
    expect(p.nodes).toEqual([{ key: 'a', kind: 'host', dirs: { '/tmp': 'empty' } }, { key: 'b', kind: 'host' }]);
    expect(p.links[0]!.impair).toEqual({ b: { loss: 5 } });
  });

  it("refuses a nat subnet the lab's own overlaps", () => {
    expect(() => plan({ hosts: { a: {} }, routers: { gw: { nat: { subnet: '10.0.1.0/24' } } }, links: [['a', 'gw']], ipv6: false })).toThrow(
      refused("createLab: router gw's nat subnet 10.0.1.0/24 overlaps the lab's 10.0.1.0/24"),
    );
  });

  it('routes along a chain of routers through the next one, each host by default through its own', () => {
    const p = plan({ hosts: { h1: {}, h2: {} }, routers: { r1: {}, r2: {}, r3: {} }, links: [['h1', 'r1'], ['r1', 'r2'], ['r2', 'r3'], ['r3', 'h2']], ipv6: false });
    expect(p.routes).toEqual({
      h1: [{ destination: 'default', gateway: '10.0.1.2', device: 'eth0' }],
      h2: [{ destination: 'default', gateway: '10.0.4.1', device: 'eth0' }],
      r1: [{ destination: '10.0.3.0/24', gateway: '10.0.2.2', device: 'eth1' }, { destination: '10.0.4.0/24', gateway: '10.0.2.2', device: 'eth1' }],
      r2: [{ destination: '10.0.1.0/24', gateway: '10.0.2.1', device: 'eth0' }, { destination: '10.0.4.0/24', gateway: '10.0.3.2', device: 'eth1' }],
      r3: [{ destination: '10.0.1.0/24', gateway: '10.0.3.1', device: 'eth0' }, { destination: '10.0.2.0/24', gateway: '10.0.3.1', device: 'eth0' }],
    });
  });

  it('leaves an FRR router its IPv6 routes (OSPFv2 carries IPv4 only)', () => {
    const p = plan({ hosts: { b: {} }, routers: { r1: { frr: { ospf: {} } }, r2: {} }, links: [['r1', 'r2'], ['r2', 'b']] });
    expect(p.routes.r1).toEqual([{ destination: 'fd00:0:0:2::/64', gateway: 'fd00:0:0:1::2', device: 'eth0' }]);
    expect(p.routes.r2).toEqual([]);
  });

  it("drops a host's route its default already takes (same router), and keeps one through another router", () => {
    const p = plan({ hosts: { h: {}, x: {}, y: {} }, routers: { r1: {}, r2: {} }, links: [['h', 'r1'], ['h', 'r2'], ['r1', 'x'], ['r2', 'y']], ipv6: false });
    expect(p.routes.h).toEqual([
      { destination: '10.0.4.0/24', gateway: '10.0.2.2', device: 'eth1' }, // y's, through r2
      { destination: 'default', gateway: '10.0.1.2', device: 'eth0' }, // and x's 10.0.3.0/24 with it, through r1
    ]);
  });

  it('gives a host behind a NAT router its IPv6 default as well, beside the IPv4 one the way out makes', () => {
    const p = plan({ hosts: { h: {} }, routers: { r1: {}, r2: { nat: { subnet: '100.64.9.0/30' } } }, links: [['h', 'r1'], ['r1', 'r2']] });
    expect(p.routes.h).toEqual([
      { destination: 'default', gateway: '10.0.1.2', device: 'eth0' },
      { destination: 'default', gateway: 'fd00:0:0:1::2', device: 'eth0' },
    ]);
    expect(p.routes.r1).toEqual([{ destination: 'default', gateway: '10.0.2.2', device: 'eth1' }]);
  });
});

