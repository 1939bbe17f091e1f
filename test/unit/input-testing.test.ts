// netns/testing refuses a bad spec, prefix or capability name with a coded
// error before it makes anything: no namespace, no exit hook. No privileges
// needed, since nothing is ever created.
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createTestNetwork, dropThreadCapability, hasEffectiveCapability, sweep } from '../../dist/testing.js';

const prefix = `nsinput${randomBytes(2).toString('hex')}-`;
const invalid = expect.objectContaining({ name: 'NetnsError', code: 'ERR_NETNS_INVALID_ARG' });
const leftovers = () => (existsSync('/run/netns') ? readdirSync('/run/netns').filter((name) => name.startsWith(prefix)) : []);

describe('createTestNetwork refuses a bad spec before making anything', () => {
  it.each([
    ['no spec', undefined],
    ['a number', 42],
    ['hosts as a string (its characters would be host keys)', { hosts: 'x' }],
    ['hosts missing', {}],
    ['a host spec that is not an object', { hosts: { a: 5 } }],
    ['a host option it does not have', { hosts: { a: { address: '10.0.0.1/24' } } }],
    ['a malformed addr', { hosts: { a: { addr: 'bad' }, b: {} }, links: [['a', 'b']] }],
    ['an addr that is not a string', { hosts: { a: { addr: 5 }, b: {} }, links: [['a', 'b']] }],
    ['an addr on a host with no link to put it on', { hosts: { a: { addr: '10.0.0.1/24' } } }],
    ['links that are not an array', { hosts: { a: {}, b: {} }, links: 'ab' }],
    ['a link that is not a pair', { hosts: { a: {}, b: {} }, links: [['a']] }],
    ['a link end JSON cannot print (a bigint)', { hosts: { a: {}, b: {} }, links: [['a', 10n]] }],
    ['a link address for a host not on the link', { hosts: { a: {}, b: {}, c: {} }, links: [['a', 'b', { c: '10.0.0.3/24' }]] }],
    ['a malformed link address', { hosts: { a: {}, b: {} }, links: [['a', 'b', { a: '10.0.0.300/24' }]] }],
    ['a prefix that is not a string', { hosts: { a: {} }, prefix: 7 }],
    ['an option it does not have', { hosts: { a: {} }, link: [] }],
  ])('%s', async (_what, spec) => {
    const exitHooks = process.listenerCount('exit');
    const withPrefix = typeof spec === 'object' && !('prefix' in spec) ? { ...spec, prefix } : spec;
    await expect(createTestNetwork(withPrefix as never)).rejects.toEqual(invalid);
    expect(process.listenerCount('exit')).toBe(exitHooks);
    expect(leftovers()).toEqual([]);
  });

  it('a prefix no namespace name can start with is ERR_NETNS_INVALID_NAME', async () => {
    await expect(createTestNetwork({ hosts: { a: {} }, prefix: 'a/b-' })).rejects.toMatchObject({ code: 'ERR_NETNS_INVALID_NAME' });
  });
});

describe('sweep and the capability probes check their argument', () => {
  it('sweep refuses a prefix that is not a string', async () => {
    await expect(sweep(42 as never)).rejects.toEqual(invalid);
  });

  // Exact names only (the type's): a near miss is refused, naming what is accepted, rather than guessed at.
  it.each(['cap_sys_admin', 'SYS_ADMIN', 'CAP_BOGUS', 'toString', 42, undefined])('hasEffectiveCapability(%s)', (name) => {
    expect(() => hasEffectiveCapability(name as never)).toThrow(invalid);
    expect(() => hasEffectiveCapability(name as never)).toThrow(/'CAP_NET_ADMIN' or 'CAP_SYS_ADMIN'/);
    expect(() => dropThreadCapability(name as never)).toThrow(invalid);
  });

  it('hasEffectiveCapability answers for the names it knows', () => {
    expect(typeof hasEffectiveCapability('CAP_SYS_ADMIN')).toBe('boolean');
    expect(typeof hasEffectiveCapability('CAP_NET_ADMIN')).toBe('boolean');
  });
});
