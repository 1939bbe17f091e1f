// A router's `frr` checked with the rest of the spec, before anything is
// made: one of ospf (generated, timers defaulted to 1 s and 4 s and kept in
// OSPF's 16 bits) or config (given as is, with the daemons it needs worked out
// from its sections, or as listed). A bad one is ERR_NETNS_INVALID_ARG naming
// the router and the field. Pure: no daemon runs.
import { describe, expect, it } from 'vitest';
import { checkFrrSpec } from '../../src/testing/lab/frr-spec.js';

const refused = (text: string) => expect.objectContaining({ code: 'ERR_NETNS_INVALID_ARG', message: expect.stringContaining(text) });
const check = (given: unknown) => checkFrrSpec('r1', given);
const daemonsFor = (config: string) => (checkFrrSpec('r1', { config }) as { daemons: string[] }).daemons;

describe('frr: the shape', () => {
  it('refuses what is not an object', () => {
    for (const [given, kind] of [[null, 'null'], [[], 'an array'], ['ospf', 'string'], [undefined, 'undefined']] as [unknown, string][]) {
      expect(() => check(given), kind).toThrow(refused(`createLab: router r1's frr must be an object { ospf } or { config, daemons? }, got ${kind}`));
    }
  });

  it('refuses an unknown key, suggesting the one meant', () => {
    expect(() => check({ config: '', daemon: [] })).toThrow(refused('createLab: router r1\'s frr: unknown key "daemon" (did you mean daemons?); known: ospf, config, daemons'));
  });

  it('takes exactly one of ospf and config', () => {
    expect(() => check({})).toThrow(refused("router r1's frr takes one of ospf (generated) or config (as is)"));
    expect(() => check({ ospf: {}, config: 'router ospf\n' })).toThrow(refused('takes one of ospf'));
  });

  it('refuses daemons beside ospf', () => {
    expect(() => check({ ospf: {}, daemons: ['ospfd'] })).toThrow(refused("router r1's frr: daemons go with config; ospf runs zebra and ospfd"));
  });
});

describe('frr.ospf', () => {
  it('defaults hello to 1 s and dead to 4 s, and keeps what is given', () => {
    expect(check({ ospf: {} })).toEqual({ ospf: { hello: 1, dead: 4 } });
    expect(check({ ospf: { hello: 2, dead: 8 } })).toEqual({ ospf: { hello: 2, dead: 8 } });
    expect(check({ ospf: { hello: 3 } })).toEqual({ ospf: { hello: 3, dead: 4 } });
    expect(check({ ospf: { dead: 2 } })).toEqual({ ospf: { hello: 1, dead: 2 } });
  });

  it('refuses an ospf that is not an object, or has an unknown key', () => {
    expect(() => check({ ospf: true })).toThrow(refused("router r1's frr.ospf must be an object { hello?, dead? }, got boolean"));
    expect(() => check({ ospf: [] })).toThrow(refused('got an array'));
    expect(() => check({ ospf: { helo: 1 } })).toThrow(refused('createLab: router r1\'s frr.ospf: unknown key "helo" (did you mean hello?); known: hello, dead'));
  });

  it('takes whole seconds from 1 to 65535, and nothing past either end', () => {
    expect(check({ ospf: { hello: 65534, dead: 65535 } })).toEqual({ ospf: { hello: 65534, dead: 65535 } });
    expect(check({ ospf: { hello: 1, dead: 2 } })).toEqual({ ospf: { hello: 1, dead: 2 } });
    expect(() => check({ ospf: { hello: 0 } })).toThrow(refused("router r1's frr.ospf.hello must be whole seconds from 1 to 65535, got 0"));
    expect(() => check({ ospf: { dead: 65536 } })).toThrow(refused("router r1's frr.ospf.dead must be whole seconds from 1 to 65535, got 65536"));
    for (const hello of [1.5, '2', NaN, -1]) expect(() => check({ ospf: { hello } }), String(hello)).toThrow(refused(`frr.ospf.hello must be whole seconds from 1 to 65535, got ${String(hello)}`));
  });

  it('refuses a dead interval no longer than the hello one', () => {
    expect(() => check({ ospf: { hello: 4, dead: 4 } })).toThrow(refused("router r1's frr.ospf.dead (4 s) must be longer than hello (4 s), or neighbours die between hellos"));
    expect(() => check({ ospf: { hello: 5 } })).toThrow(refused('dead (4 s) must be longer than hello (5 s)'));
  });
});

describe('frr.config', () => {
  it('refuses what is not the text of a configuration', () => {
    expect(() => check({ config: 42 })).toThrow(refused("router r1's frr.config must be the text of an FRR configuration, got number"));
    expect(() => check({ config: 'router ospf\n\0' })).toThrow(refused('frr.config must be the text of an FRR configuration, got string'));
  });

  it('runs the daemons its sections call for, in the order ospfd, bgpd, staticd', () => {
    expect(check({ config: 'router ospf\n network 10.0.0.0/8 area 0\n' })).toEqual({ config: 'router ospf\n network 10.0.0.0/8 area 0\n', daemons: ['ospfd'] });
    expect(daemonsFor('hostname r1\n!\n  router bgp 65000\n')).toEqual(['bgpd']);
    expect(daemonsFor('ip route 0.0.0.0/0 10.0.0.1\n')).toEqual(['staticd']);
    expect(daemonsFor('ipv6 route ::/0 fd00::1\n')).toEqual(['staticd']);
    expect(daemonsFor('vrf blue\n ip route 10.0.0.0/8 blackhole\n')).toEqual(['staticd']); // indented, inside a section
    expect(daemonsFor('ip route 10.9.0.0/16 10.0.0.1\nrouter bgp 1\n\trouter ospf\n')).toEqual(['ospfd', 'bgpd', 'staticd']);
  });

  it('calls for no daemon from a comment, another word or another protocol', () => {
    expect(daemonsFor('')).toEqual([]);
    expect(daemonsFor('! router ospf\n! router bgp 1\n! ip route 0.0.0.0/0 10.0.0.1\n')).toEqual([]);
    expect(daemonsFor('router ospf6\nrouter bgpx\nip routes\nipx route\n')).toEqual([]);
  });

  it('takes the daemons listed instead, once each, none past the three', () => {
    expect(check({ config: 'router ospf\n', daemons: ['bgpd', 'staticd', 'bgpd'] })).toEqual({ config: 'router ospf\n', daemons: ['bgpd', 'staticd'] });
    expect(check({ config: 'router ospf\n', daemons: [] })).toEqual({ config: 'router ospf\n', daemons: [] });
    expect(check({ config: '', daemons: ['ospfd', 'bgpd', 'staticd'] })).toEqual({ config: '', daemons: ['ospfd', 'bgpd', 'staticd'] });
    expect(() => check({ config: '', daemons: ['zebra'] })).toThrow(refused('router r1\'s frr.daemons must be an array of ospfd, bgpd, staticd (zebra always runs), got ["zebra"]'));
    expect(() => check({ config: '', daemons: 'bgpd' })).toThrow(refused('got "bgpd"'));
    expect(() => check({ config: '', daemons: ['bgpd', 'ripd'] })).toThrow(refused('got ["bgpd","ripd"]'));
  });
});
