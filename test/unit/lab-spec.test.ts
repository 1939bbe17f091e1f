// A lab's spec checked whole before anything is made: every refusal is
// ERR_NETNS_INVALID_ARG (ERR_NETNS_INVALID_NAME for a prefix no namespace
// name can take) with a message naming the node, link or field, and a good
// spec comes back with its defaults filled in. Pure: nothing is built.
import { describe, expect, it } from 'vitest';
import { ownerStem } from '../../src/testing/owner.js';
import { checkLabSpec, checkSubnet, LAB_KEY } from '../../src/testing/lab/spec.js';

const refused = (text: string) => expect.objectContaining({ code: 'ERR_NETNS_INVALID_ARG', message: expect.stringContaining(text) });
const two = { hosts: { a: {}, b: {} } };

describe('a good spec, with its defaults', () => {
  it('lists nodes hosts first, then routers, then switches; IPv6 on; prefix nsfix-; no nat', () => {
    const checked = checkLabSpec({ switches: { s: {} }, routers: { r: {} }, hosts: { h: {}, g: {} }, links: [['h', 's']] });
    expect([...checked.nodes]).toEqual([['h', 'host'], ['g', 'host'], ['r', 'router'], ['s', 'switch']]);
    expect([...checked.switches]).toEqual([['s', {}]]);
    expect(checked.links).toEqual([{ a: 'h', b: 's', options: {} }]);
    expect({ ipv6: checked.ipv6, prefix: checked.prefix, frr: checked.frr.size, dirs: checked.dirs.size, nat: 'nat' in checked }).toEqual({ ipv6: true, prefix: 'nsfix-', frr: 0, dirs: 0, nat: false });
  });

  it('keeps what is given: subnets, addresses (each a list, as parsed), impairments, FRR, dirs, nat, ipv6, prefix', () => {
    const checked = checkLabSpec({
      hosts: { a: { dirs: { '/tmp': 'empty' } }, b: {} },
      routers: { r: { frr: { ospf: {} }, nat: { subnet: '100.64.9.0/24' } } },
      switches: { s: { subnet: '10.1.0.0/24', subnet6: 'fd01::/64' } },
      links: [['a', 'b', { subnet: '10.2.0.0/30', subnet6: 'fd02::/127', addresses: { a: ['10.2.0.1/30', 'FD02:0::0/127'], b: '10.2.0.2' }, impair: { a: { rate: '1mbit' } } }], ['r', 's']],
      prefix: 'nsspec-',
    });
    expect(checked.switches.get('s')).toEqual({ subnet: '10.1.0.0/24', subnet6: 'fd01::/64' });
    expect(checked.links[0]).toEqual({ a: 'a', b: 'b', options: { subnet: '10.2.0.0/30', subnet6: 'fd02::/127', addresses: { a: ['10.2.0.1/30', 'fd02::/127'], b: ['10.2.0.2'] }, impair: { a: { rate: '1mbit' } } } });
    expect(checked.frr.get('r')).toEqual({ ospf: { hello: 1, dead: 4 } });
    expect(checked.dirs.get('a')).toEqual({ '/tmp': 'empty' });
    expect(checked.nat).toEqual({ node: 'r', subnet: '100.64.9.0/24' });
    expect(checked.prefix).toBe('nsspec-');
    expect(checkLabSpec({ hosts: {}, routers: { r: { nat: {} } } }).nat).toEqual({ node: 'r' });
    expect(checkLabSpec({ ...two, links: [['a', 'b', { addresses: { a: '10.0.0.1' } }]], ipv6: false }).ipv6).toBe(false);
  });

  it('takes node keys of letters, digits, _ and -, 1 to 32 of them', () => {
    expect(LAB_KEY.source).toBe('^[A-Za-z0-9_-]{1,32}$');
    const keys = ['R_1-x', 'Z9', 'k'.repeat(32)];
    expect([...checkLabSpec({ hosts: Object.fromEntries(keys.map((key) => [key, {}])) }).nodes.keys()]).toEqual(keys);
  });
});

describe('the spec and its node groups', () => {
  it.each<[string, unknown, string]>([
    ['no spec', undefined, 'createLab: createLab takes a spec { hosts, routers?, switches?, links?, ipv6?, prefix? }, got undefined'],
    ['an array', [], 'takes a spec { hosts, routers?, switches?, links?, ipv6?, prefix? }, got an array'],
    ['an unknown key', { hosts: {}, switch: {} }, 'createLab: the spec: unknown key "switch" (did you mean switches?); known: hosts, routers, switches, links, ipv6, prefix'],
    ['no hosts', { routers: {} }, 'createLab: hosts must be an object of node specs by key, got undefined'],
    ['routers as a list', { hosts: {}, routers: [] }, 'routers must be an object of node specs by key, got an array'],
    ['switches as null', { hosts: {}, switches: null }, 'switches must be an object of node specs by key, got null'],
    ['a key with a dot', { hosts: { 'a.b': {} } }, 'node key "a.b" must match /^[A-Za-z0-9_-]{1,32}$/'],
    ['a key ending in a dot', { hosts: { 'a.': {} } }, 'node key "a." must match'],
    ['an empty key', { hosts: { '': {} } }, 'node key "" must match'],
    ['a key of 33', { hosts: { ['k'.repeat(33)]: {} } }, `node key "${'k'.repeat(33)}" must match`],
    ['__proto__ as a key', JSON.parse('{ "hosts": { "__proto__": {} } }'), 'node key "__proto__" must match'],
    ['a node declared twice', { hosts: { x: {} }, switches: { x: {} } }, 'node x is declared twice (as a host and a switch)'],
    ['a host not an object', { hosts: { a: null } }, 'host a must be an object, got null'],
    ['a router not an object', { hosts: {}, routers: { r: 'frr' } }, 'router r must be an object, got string'],
    ['a switch as a list', { hosts: {}, switches: { s: [] } }, 'switch s must be an object, got an array'],
    ['a host with frr', { hosts: { a: { frr: {} } } }, 'createLab: host a: unknown key "frr"; known: dirs'],
    ['a switch with dirs', { hosts: {}, switches: { s: { dirs: {} } } }, 'createLab: switch s: unknown key "dirs"; known: subnet, subnet6'],
    ['a router with an unknown key', { hosts: {}, routers: { r: { ant: {} } } }, 'createLab: router r: unknown key "ant" (did you mean nat?); known: frr, dirs, nat'],
    ['a bad frr', { hosts: {}, routers: { r: { frr: { ospf: { hello: 0 } } } } }, "router r's frr.ospf.hello must be whole seconds"],
    ['bad dirs', { hosts: { a: { dirs: [] } } }, "node a's dirs must be an object"],
    ['ipv6 as text', { hosts: {}, ipv6: 'no' }, 'createLab: ipv6 must be a boolean, got string'],
    ['a prefix not text', { hosts: {}, prefix: 7 }, 'createLab: prefix must be a string, got number'],
  ])('refuses %s', (_what, spec, message) => {
    expect(() => checkLabSpec(spec)).toThrow(refused(message));
  });
});

describe('subnets', () => {
  it.each<[string, unknown, string]>([
    ['a switch subnet of IPv6', { hosts: {}, switches: { s: { subnet: 'fd00::/64' } } }, 'createLab: switch s\'s subnet "fd00::/64" is not an IPv4 prefix'],
    ['a switch subnet6 of IPv4', { hosts: {}, switches: { s: { subnet6: '10.0.0.0/24' } } }, 'switch s\'s subnet6 "10.0.0.0/24" is not an IPv6 prefix'],
    ['a subnet without a length', { hosts: {}, switches: { s: { subnet: '10.0.0.0' } } }, 'createLab: switch s\'s subnet "10.0.0.0" needs a prefix length'],
    ['a subnet not text', { hosts: {}, switches: { s: { subnet: 5 } } }, "createLab: switch s's subnet must be a string, got 5"],
    ['a link subnet to a switch', { hosts: { a: {} }, switches: { s: {} }, links: [['a', 's', { subnet: '10.0.0.0/24' }]] }, 'link a-s has a subnet, but it joins a switch: give the switch its subnet'],
    ['a link subnet6 from a switch', { hosts: { a: {} }, switches: { s: {} }, links: [['s', 'a', { subnet6: 'fd00::/64' }]] }, 'link s-a has a subnet6, but it joins a switch: give the switch its subnet6'],
    ['a link subnet of IPv6', { ...two, links: [['a', 'b', { subnet: 'fd00::/64' }]] }, 'link a-b\'s subnet "fd00::/64" is not an IPv4 prefix'],
    ['a link subnet6 of IPv4', { ...two, links: [['a', 'b', { subnet6: '10.0.0.0/24' }]] }, 'link a-b\'s subnet6 "10.0.0.0/24" is not an IPv6 prefix'],
    ['nat not an object', { hosts: {}, routers: { r: { nat: true } } }, "router r's nat must be an object ({} or { subnet }), got boolean"],
    ['nat with an unknown key', { hosts: {}, routers: { r: { nat: { subnets: '' } } } }, 'createLab: router r\'s nat: unknown key "subnets" (did you mean subnet?); known: subnet'],
    ['a nat subnet of IPv6', { hosts: {}, routers: { r: { nat: { subnet: 'fd00::/64' } } } }, 'router r\'s nat subnet "fd00::/64" is not an IPv4 prefix'],
    ['a nat subnet wider than /24', { hosts: {}, routers: { r: { nat: { subnet: '100.64.0.0/23' } } } }, "router r's nat subnet must be a /24 to a /30, got 100.64.0.0/23"],
    ['a nat subnet narrower than /30', { hosts: {}, routers: { r: { nat: { subnet: '100.64.0.0/31' } } } }, 'must be a /24 to a /30, got 100.64.0.0/31'],
    ['two ways out', { hosts: {}, routers: { r1: { nat: {} }, r2: { nat: {} } } }, 'routers r1 and r2 both have nat: a lab has one way out'],
  ])('refuses %s', (_what, spec, message) => {
    expect(() => checkLabSpec(spec)).toThrow(refused(message));
  });

  it('takes nat subnets from /24 to /30, and a link subnet between two nodes that are not switches', () => {
    for (const subnet of ['100.64.0.0/24', '100.64.0.0/30']) expect(checkLabSpec({ hosts: {}, routers: { r: { nat: { subnet } } } }).nat).toEqual({ node: 'r', subnet });
    expect(checkLabSpec({ hosts: { a: {} }, routers: { r: {} }, links: [['r', 'a', { subnet: '10.0.0.0/30' }]] }).links[0]!.options).toEqual({ subnet: '10.0.0.0/30' });
  });

  it("checkSubnet: returns the prefix as given, and reports the parser's complaint without its netlink: tag", () => {
    expect(checkSubnet('10.0.0.0/8', 4, 'x')).toBe('10.0.0.0/8');
    expect(checkSubnet('FD00::/8', 6, 'x')).toBe('FD00::/8');
    expect(() => checkSubnet('10.0.0.300/24', 4, 'the subnet')).toThrow(
      expect.objectContaining({ code: 'ERR_NETNS_INVALID_ARG', message: 'createLab: bad the subnet "10.0.0.300"' }),
    );
  });
});

describe('links', () => {
  it.each<[string, unknown, string]>([
    ['links not a list', { hosts: {}, links: {} }, 'createLab: links must be an array of [nodeA, nodeB] pairs, got object'],
    ['a link of one node', { hosts: { a: {} }, links: [['a']] }, 'createLab: a link is [nodeA, nodeB] or [nodeA, nodeB, options], got an array'],
    ['a link of four', { ...two, links: [['a', 'b', {}, {}]] }, 'a link is [nodeA, nodeB] or [nodeA, nodeB, options]'],
    ['a link not a list', { ...two, links: ['a-b'] }, 'a link is [nodeA, nodeB] or [nodeA, nodeB, options], got string'],
    ['an unknown second node', { ...two, links: [['a', 'ghost']] }, 'createLab: a link names unknown node "ghost"'],
    ['an unknown first node', { ...two, links: [['ghost', 'b']] }, 'a link names unknown node "ghost"'],
    ['a node not named by text', { ...two, links: [['a', 5]] }, 'a link names unknown node 5'],
    ['a node missing', { ...two, links: [['a', undefined]] }, 'a link names unknown node undefined'],
    ['a node that JSON cannot show', { ...two, links: [['a', Symbol('b')]] }, 'a link names unknown node Symbol(b)'],
    ['a node JSON throws on', { ...two, links: [['a', 10n]] }, 'a link names unknown node 10'],
    ['a link to itself', { ...two, links: [['a', 'a']] }, 'createLab: a link joins two different nodes, not a to itself'],
    ['options not an object', { ...two, links: [['a', 'b', 'fast']] }, "createLab: link a-b's options must be an object, got string"],
    ['options null', { ...two, links: [['a', 'b', null]] }, "link a-b's options must be an object, got null"],
    ['an unknown option', { ...two, links: [['a', 'b', { delay: '5ms' }]] }, 'createLab: link a-b: unknown key "delay"; known: addresses, subnet, subnet6, impair'],
    ['two links between the same nodes', { ...two, links: [['a', 'b'], ['b', 'a']] }, 'createLab: b and a are linked twice: a link is named by its two ends'],
    ['a loop of switches', { hosts: {}, switches: { s1: {}, s2: {}, s3: {} }, links: [['s1', 's2'], ['s2', 's3'], ['s1', 's3']] }, 'createLab: switches s1 and s3 are already joined through other switches: this link would make a loop (bridges here run no spanning tree)'],
    ['a loop of four switches', { hosts: {}, switches: { s1: {}, s2: {}, s3: {}, s4: {} }, links: [['s1', 's2'], ['s3', 's4'], ['s2', 's3'], ['s4', 's1']] }, 'switches s4 and s1 are already joined'],
  ])('refuses %s', (_what, spec, message) => {
    expect(() => checkLabSpec(spec)).toThrow(refused(message));
  });

  it('takes links whose ends only spell alike when run together, and two switches joined to one host', () => {
    expect(checkLabSpec({ hosts: { a: {}, bc: {}, ab: {}, c: {} }, links: [['a', 'bc'], ['ab', 'c']] }).links).toHaveLength(2);
    expect(checkLabSpec({ hosts: { h: {} }, switches: { s1: {}, s2: {} }, links: [['h', 's1'], ['h', 's2'], ['s1', 's2']] }).links).toHaveLength(3);
    expect(checkLabSpec({ hosts: { h: {} }, switches: { s1: {}, s2: {} }, links: [['s1', 'h'], ['s2', 'h'], ['s1', 's2']] }).links).toHaveLength(3); // the host on either side
  });
});

describe("links' addresses and impairments", () => {
  it.each<[string, unknown, string]>([
    ['addresses not an object', { addresses: '10.0.0.1/24' }, "createLab: link a-b's addresses must be an object by node, got string"],
    ['an address for a node not on the link', { addresses: { c: '10.0.0.1/24' } }, 'createLab: link a-b gives an address to "c", not one of its ends'],
    ['no address in a list', { addresses: { a: [] } }, "createLab: link a-b's address for a is one prefix or [IPv4, IPv6]"],
    ['three addresses', { addresses: { b: ['10.0.0.1/24', 'fd00::1/64', '10.0.0.2/24'] } }, "link a-b's address for b is one prefix or [IPv4, IPv6]"],
    ['two IPv4 addresses', { addresses: { a: ['10.0.0.1/24', '10.0.0.2/24'] } }, "createLab: link a-b's addresses for a are both IPv4: give one of each family"],
    ['two IPv6 addresses', { addresses: { a: ['fd00::1/64', 'fd00::2/64'] } }, 'are both IPv6: give one of each family'],
    ['a bad address', { addresses: { a: '10.0.0.1/33' } }, 'createLab: bad prefix length in link a-b\'s address for a "10.0.0.1/33" (0-32)'],
    ['an address not text', { addresses: { a: [7] } }, "createLab: link a-b's address for a must be a string, got 7"],
    ['impair not an object', { impair: [] }, "createLab: link a-b's impair must be an object by sending node, got an array"],
    ['an impairment by a node not on the link', { impair: { c: { loss: 1 } } }, 'createLab: link a-b impairs "c", not one of its ends'],
    ['a bad impairment', { impair: { b: { loss: 101 } } }, 'loss of link a-b, sent by b must be a percent from 0 to 100, got 101'],
  ])('refuses %s', (_what, options, message) => {
    expect(() => checkLabSpec({ hosts: { a: {}, b: {}, c: {} }, links: [['a', 'b', options]] })).toThrow(refused(message));
  });

  it('refuses an address for a switch port', () => {
    expect(() => checkLabSpec({ hosts: { a: {} }, switches: { s: {} }, links: [['a', 's', { addresses: { s: '10.0.0.1/24' } }]] })).toThrow(
      refused('createLab: link a-s gives an address to switch s: a switch port carries none'),
    );
  });

  it('takes one address for either end, or one of each family', () => {
    const addresses = (given: object) => checkLabSpec({ ...two, links: [['a', 'b', { addresses: given }]] }).links[0]!.options.addresses;
    expect({ ...addresses({ b: ['fd00::2/64', '10.0.0.2/24'] }) }).toEqual({ b: ['fd00::2/64', '10.0.0.2/24'] });
    expect({ ...addresses({ a: '10.0.0.1/24', b: 'fd00::2' }) }).toEqual({ a: ['10.0.0.1/24'], b: ['fd00::2'] });
  });
});

describe('a lab with ipv6: false', () => {
  it.each<[string, unknown, string]>([
    ['a switch subnet6', { hosts: {}, switches: { s: { subnet6: 'fd00::/64' } } }, 'createLab: switch s has a subnet6, but the lab has ipv6: false'],
    ['a link subnet6', { ...two, links: [['a', 'b', { subnet6: 'fd00::/64' }]] }, 'createLab: link a-b has an IPv6 subnet or address, but the lab has ipv6: false'],
    ['an IPv6 address', { ...two, links: [['a', 'b', { addresses: { b: ['10.0.0.2/24', 'fd00::2/64'] } }]] }, 'link a-b has an IPv6 subnet or address, but the lab has ipv6: false'],
  ])('refuses %s', (_what, spec, message) => {
    expect(() => checkLabSpec({ ...(spec as object), ipv6: false })).toThrow(refused(message));
    expect(() => checkLabSpec(spec)).not.toThrow(); // with IPv6, taken
  });

  it('takes IPv4 subnets and addresses', () => {
    expect(() => checkLabSpec({ ...two, switches: { s: { subnet: '10.1.0.0/24' } }, links: [['a', 'b', { subnet: '10.0.0.0/24', addresses: { a: '10.0.0.1' } }], ['b', 's']], ipv6: false })).not.toThrow();
  });
});

describe("the prefix: every node's namespace name must be a valid one", () => {
  // PREFIX<pid>-t<start>-p<pidns>-<6 random hex>-<key>, at most 255 bytes.
  const longest = 255 - ownerStem('000000').length - '-k'.length;

  it('takes the longest prefix that leaves room for every node, and refuses one byte more', () => {
    expect(checkLabSpec({ hosts: { k: {} }, prefix: 'p'.repeat(longest) }).prefix).toHaveLength(longest);
    expect(() => checkLabSpec({ hosts: { k: {} }, prefix: 'p'.repeat(longest + 1) })).toThrow(expect.objectContaining({ code: 'ERR_NETNS_INVALID_NAME', message: expect.stringContaining('longer than 255 bytes') }));
    expect(() => checkLabSpec({ hosts: { kk: {} }, prefix: 'p'.repeat(longest) })).toThrow(expect.objectContaining({ code: 'ERR_NETNS_INVALID_NAME' }));
  });

  it('refuses a prefix no name can hold', () => {
    expect(() => checkLabSpec({ hosts: { k: {} }, prefix: 'ns/' })).toThrow(expect.objectContaining({ code: 'ERR_NETNS_INVALID_NAME', message: expect.stringContaining("must not contain '/'") }));
    expect(() => checkLabSpec({ hosts: {}, prefix: 'ns/' })).not.toThrow(); // no node, no name
  });
});
