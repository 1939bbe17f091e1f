// Results across spec versions, as a plugin author relies on them: a result
// converted down and read back keeps what the lower version can hold; a
// prevResult is read by its own cniVersion; malformed input is code 6 naming
// where; errors carry their codes.
import { describe, expect, it } from 'vitest';
import {
  CniCode,
  CniError,
  convertResult,
  parseResult,
  passThrough,
  prevResultOf,
  toCniError,
  versionAtLeast,
  type NetConf,
  type Result,
} from '../../dist/cni/index.js';
import { isVersionText } from '../../dist/cni/version.js';
import { netnsError } from '../../dist/core/errors.js';

const FULL: Result = {
  cniVersion: '1.1.0',
  interfaces: [
    { name: 'veth1234', mac: '0a:00:00:00:00:01' },
    { name: 'eth0', mac: '0a:00:00:00:00:02', sandbox: '/run/netns/c1', mtu: 9000, socketPath: '/run/vhost.sock', pciID: '0000:00:1f.6' },
  ],
  ips: [
    { interface: 1, address: '10.1.1.2/24', gateway: '10.1.1.1' },
    { interface: 1, address: '10.2.0.5/16' },
    { interface: 1, address: 'fd00::2/64', gateway: 'fd00::1' },
  ],
  routes: [
    { dst: '0.0.0.0/0', gw: '10.1.1.1', mtu: 1400, advmss: 1360, priority: 10, table: 100, scope: 0 },
    { dst: '::/0', gw: 'fd00::1' },
  ],
  dns: { nameservers: ['10.1.1.1'], domain: 'cluster.local', search: ['svc'], options: ['ndots:5'] },
};

/** FULL without what 1.1.0 added. */
const WITHOUT_1_1: Result = {
  ...FULL,
  interfaces: [FULL.interfaces![0]!, { name: 'eth0', mac: '0a:00:00:00:00:02', sandbox: '/run/netns/c1' }],
  routes: [{ dst: '0.0.0.0/0', gw: '10.1.1.1' }, { dst: '::/0', gw: 'fd00::1' }],
};

describe('convertResult', () => {
  it('gives 1.1.0 as is and 1.0.0 without the 1.1 fields; both read back', () => {
    expect(convertResult(FULL, '1.1.0')).toEqual(FULL);
    const v10 = convertResult(FULL, '1.0.0');
    expect(v10).toEqual({ ...WITHOUT_1_1, cniVersion: '1.0.0' });
    expect(parseResult(v10)).toEqual(WITHOUT_1_1);
  });

  it('adds ips[].version by address family for 0.3.0, 0.3.1 and 0.4.0, and drops it reading back', () => {
    for (const version of ['0.3.0', '0.3.1', '0.4.0']) {
      const old = convertResult(FULL, version) as { cniVersion: string; ips: { version: string; address: string }[] };
      expect(old.cniVersion).toBe(version);
      expect(old.ips.map((ip) => [ip.version, ip.address])).toEqual([
        ['4', '10.1.1.2/24'],
        ['4', '10.2.0.5/16'],
        ['6', 'fd00::2/64'],
      ]);
      expect(parseResult(old)).toEqual(WITHOUT_1_1);
      expect(convertResult(old, '1.0.0')).toEqual({ ...WITHOUT_1_1, cniVersion: '1.0.0' });
    }
  });

  it('keeps the first address of each family for 0.1.0 and 0.2.0, with that family routes', () => {
    const old = convertResult(FULL, '0.2.0');
    expect(old).toEqual({
      cniVersion: '0.2.0',
      ip4: { ip: '10.1.1.2/24', gateway: '10.1.1.1', routes: [{ dst: '0.0.0.0/0', gw: '10.1.1.1' }] },
      ip6: { ip: 'fd00::2/64', gateway: 'fd00::1', routes: [{ dst: '::/0', gw: 'fd00::1' }] },
      dns: FULL.dns,
    });
    expect(parseResult(old)).toEqual({
      cniVersion: '1.1.0',
      ips: [
        { address: '10.1.1.2/24', gateway: '10.1.1.1' },
        { address: 'fd00::2/64', gateway: 'fd00::1' },
      ],
      routes: [{ dst: '0.0.0.0/0', gw: '10.1.1.1' }, { dst: '::/0', gw: 'fd00::1' }],
      dns: FULL.dns,
    });
    expect(convertResult({ cniVersion: '1.0.0', ips: [{ address: 'fd00::2/64' }], routes: [{ dst: '0.0.0.0/0' }] }, '0.1.0')).toEqual({
      cniVersion: '0.1.0',
      ip6: { ip: 'fd00::2/64' },
    });
  });

  it('refuses 0.1.0 and 0.2.0 for a result without an address, and versions no spec defines (code 1)', () => {
    expect(() => convertResult({ cniVersion: '1.0.0', interfaces: [{ name: 'eth0' }] }, '0.2.0')).toThrow(expect.objectContaining({ code: 1 }));
    expect(() => convertResult(FULL, '1.2.0')).toThrow(expect.objectContaining({ code: 1 }));
  });

  it('does not share objects with its input', () => {
    const out = convertResult(FULL, '1.1.0') as Result;
    out.ips![0]!.address = '10.9.9.9/24';
    expect(FULL.ips![0]!.address).toBe('10.1.1.2/24');
  });
});

describe('parseResult', () => {
  it('reads a result by its own cniVersion, or the fallback when it has none', () => {
    expect(parseResult({ ip4: { ip: '10.0.0.2/24' } }, '0.2.0')).toEqual({ cniVersion: '1.1.0', ips: [{ address: '10.0.0.2/24' }], routes: [] });
    expect(parseResult({ cniVersion: '', ips: [{ address: '10.0.0.2/24' }] }, '0.4.0')).toEqual({ cniVersion: '1.1.0', ips: [{ address: '10.0.0.2/24' }] });
  });

  it('refuses the other generation shape, so a result labelled with the wrong version fails loudly (code 6)', () => {
    expect(() => parseResult({ cniVersion: '0.2.0', ips: [{ address: '10.0.0.2/24' }] })).toThrow(expect.objectContaining({ code: 6 }));
    expect(() => parseResult({ cniVersion: '1.0.0', ip4: { ip: '10.0.0.2/24' } })).toThrow(expect.objectContaining({ code: 6 }));
  });

  it('names where a malformed result is wrong (code 6)', () => {
    const cases: [unknown, string][] = [
      [null, 'result must be an object'],
      [{ cniVersion: '1.0.0', ips: {} }, 'result.ips must be an array'],
      [{ cniVersion: '1.0.0', ips: [{ address: '10.0.0.2' }] }, 'result.ips[0].address must be an address with a prefix length'],
      [{ cniVersion: '1.0.0', ips: [{ address: '10.0.0.2/33' }] }, 'result.ips[0].address must be'],
      [{ cniVersion: '0.4.0', ips: [{ version: '6', address: '10.0.0.2/24' }] }, 'result.ips[0].version is "6" for an IPv4 address'],
      [{ cniVersion: '1.0.0', ips: [{ address: '10.0.0.2/24', gateway: 'x' }] }, 'result.ips[0].gateway must be an IP address'],
      [{ cniVersion: '1.0.0', interfaces: [{ mac: 'x' }] }, 'result.interfaces[0].name is required'],
      [{ cniVersion: '1.0.0', ips: [{ address: '10.0.0.2/24', interface: -1 }] }, 'result.ips[0].interface must be a non-negative integer'],
      [{ cniVersion: '1.1.0', routes: [{ dst: '0.0.0.0/0', table: '1' }] }, 'result.routes[0].table must be a non-negative integer'],
      [{ cniVersion: 4 }, 'cniVersion must be a string'],
    ];
    for (const [value, message] of cases) {
      expect(() => parseResult(value), message).toThrow(expect.objectContaining({ code: 6, message: expect.stringContaining(message) }));
    }
    expect(() => parseResult({ cniVersion: '0.5.0' })).toThrow(expect.objectContaining({ code: 1 }));
  });

  it('reads only own fields: a polluted Object.prototype adds nothing', () => {
    const polluted = Object.prototype as Record<string, unknown>;
    polluted.gateway = '10.6.6.6';
    polluted.dns = { domain: 'evil' };
    try {
      expect(parseResult({ cniVersion: '1.0.0', ips: [{ address: '10.0.0.2/24' }] })).toEqual({ cniVersion: '1.1.0', ips: [{ address: '10.0.0.2/24' }] });
    } finally {
      delete polluted.gateway;
      delete polluted.dns;
    }
  });
});

describe('prevResult', () => {
  const conf = (prevResult?: Record<string, unknown>): NetConf => ({ cniVersion: '1.0.0', name: 'n', type: 't', ...(prevResult ? { prevResult } : {}) });

  it('is read by its own cniVersion, not the configuration one (cni#862)', () => {
    const prev = { cniVersion: '0.4.0', interfaces: [{ name: 'eth0' }], ips: [{ version: '4', interface: 0, address: '10.0.0.2/24' }], dns: {} };
    expect(prevResultOf(conf(prev))).toEqual({ cniVersion: '1.1.0', interfaces: [{ name: 'eth0' }], ips: [{ interface: 0, address: '10.0.0.2/24' }], dns: {} });
    const old = { cniVersion: '0.2.0', ip4: { ip: '10.0.0.2/24' } };
    expect(prevResultOf(conf(old))?.ips).toEqual([{ address: '10.0.0.2/24' }]);
  });

  it("takes the configuration's version when prevResult states none, and is undefined when absent", () => {
    expect(prevResultOf(conf({ ips: [{ address: '10.0.0.2/24' }] }))?.ips).toEqual([{ address: '10.0.0.2/24' }]);
    expect(prevResultOf(conf())).toBeUndefined();
    expect(() => prevResultOf(conf({ cniVersion: '1.0.0', ips: 3 }))).toThrow(expect.objectContaining({ code: 6, message: 'prevResult.ips must be an array' }));
  });

  it('is read with own properties only, and refuses what is not a configuration (ERR_NETNS_INVALID_ARG)', () => {
    const polluted = Object.prototype as Record<string, unknown>;
    polluted.cniVersion = '1.0.0';
    try {
      // No own cniVersion: 0.1.0, whose results have ip4 (read as 1.0.0, ip4 would be refused).
      const bare = { name: 'n', type: 't', prevResult: { ip4: { ip: '10.0.0.2/24' } } } as unknown as NetConf;
      expect(prevResultOf(bare)?.ips).toEqual([{ address: '10.0.0.2/24' }]);
    } finally {
      delete polluted.cniVersion;
    }
    expect(() => prevResultOf(null as never)).toThrow(expect.objectContaining({ code: 'ERR_NETNS_INVALID_ARG' }));
  });

  it('passThrough gives ADD the previous result to print, and code 7 without one', () => {
    const prev = { cniVersion: '0.4.0', ips: [{ version: '4', address: '10.0.0.2/24' }] };
    const result = passThrough(conf(prev));
    expect(convertResult(result, '1.0.0')).toEqual({ cniVersion: '1.0.0', ips: [{ address: '10.0.0.2/24' }] });
    expect(() => passThrough(conf())).toThrow(expect.objectContaining({ code: 7 }));
  });
});

describe('CniError and versions', () => {
  it('prints the spec error object with cniVersion, details only when given', () => {
    expect(new CniError(CniCode.TRY_AGAIN_LATER, 'busy').toErrorObject('1.0.0')).toEqual({ cniVersion: '1.0.0', code: 11, msg: 'busy' });
    expect(new CniError(107, 'x', 'why').toErrorObject('0.4.0')).toEqual({ cniVersion: '0.4.0', code: 107, msg: 'x', details: 'why' });
  });

  it('turns anything else thrown into 999 with its message', () => {
    const typed = new CniError(3, 'gone');
    expect(toCniError(typed)).toBe(typed);
    expect(toCniError(new TypeError('bad'))).toMatchObject({ code: 999, message: 'bad' });
    expect(toCniError('text')).toMatchObject({ code: 999, message: 'text' });
    expect(toCniError(typed).name).toBe('CniError');
  });

  it("turns a CHECK helper's finding into 110 (CHECK_FAILED), and any other NetnsError into 999", () => {
    expect(toCniError(netnsError('ERR_NETNS_CNI_CHECK' as never, 'eth0 has no address 10.0.0.2/24'))).toMatchObject({ code: 110, message: 'eth0 has no address 10.0.0.2/24' });
    expect(toCniError(netnsError('ENOENT' as never, 'no such namespace'))).toMatchObject({ code: 999, message: 'no such namespace' });
  });

  it('refuses a code that is not a non-negative integer (ERR_NETNS_INVALID_ARG)', () => {
    for (const code of [-1, 1.5, Number.NaN, '4' as unknown as number]) {
      expect(() => new CniError(code, 'x')).toThrow(expect.objectContaining({ code: 'ERR_NETNS_INVALID_ARG', message: `a CNI error code is a non-negative integer, got ${String(code)}` }));
    }
    expect(new CniError(0, 'x').code).toBe(0);
  });

  it('orders versions numerically; a malformed one is code 6', () => {
    expect(versionAtLeast('1.1.0', '0.4.0')).toBe(true);
    expect(versionAtLeast('0.10.0', '0.4.0')).toBe(true);
    expect(versionAtLeast('0.3.1', '0.4.0')).toBe(false);
    expect(versionAtLeast('1.0.0', '1.0.0')).toBe(true);
    expect(() => versionAtLeast('1.0', '1.0.0')).toThrow(expect.objectContaining({ code: 6, message: 'cniVersion "1.0" is not of the form X.Y.Z' }));
  });

  it('takes only text as a version, not what prints as one', () => {
    expect(isVersionText('0.4.0')).toBe(true);
    for (const value of [['1.0.0'], { toString: () => '1.0.0' }, '1.0.0 ', 100]) expect(isVersionText(value), String(value)).toBe(false);
  });
});

describe('parseResult, message by message', () => {
  const fails = (value: unknown, message: string) => expect(() => parseResult(value), message).toThrow(expect.objectContaining({ code: 6, message }));
  const v1 = (fields: object) => ({ cniVersion: '1.0.0', ...fields });

  it('names the field and what is wrong with it, exactly', () => {
    fails(v1({ dns: { domain: 5 } }), 'result.dns.domain must be a string');
    fails(v1({ dns: { nameservers: '10.0.0.1' } }), 'result.dns.nameservers must be an array');
    fails(v1({ dns: { search: ['a', 1] } }), 'result.dns.search[1] must be a string');
    fails(v1({ dns: [] }), 'result.dns must be an object');
    fails(v1({ routes: [{}] }), 'result.routes[0].dst is required');
    fails(v1({ routes: [{ dst: '10.0.0.0' }] }), 'result.routes[0].dst must be an address with a prefix length, got "10.0.0.0"');
    fails(v1({ routes: [{ dst: '0.0.0.0/0', mtu: 1.5 }] }), 'result.routes[0].mtu must be a non-negative integer');
    fails(v1({ routes: [{ dst: '0.0.0.0/0', mtu: '1400' }] }), 'result.routes[0].mtu must be a non-negative integer');
    fails(v1({ ips: [{}] }), 'result.ips[0].address is required');
    fails(v1({ ips: [{ address: 7 }] }), 'result.ips[0].address must be a string');
    fails({ cniVersion: '0.2.0', ip4: {} }, 'result.ip4.ip is required');
  });

  it('refuses the other generation by its fields, each named', () => {
    for (const key of ['ip4', 'ip6']) fails(v1({ [key]: { ip: '10.0.0.2/24' } }), 'result has ip4/ip6, which only 0.1.0 and 0.2.0 results have (0.3.0 and later use ips)');
    for (const key of ['interfaces', 'ips', 'routes']) fails({ cniVersion: '0.2.0', [key]: [] }, `result has ${key}, which 0.1.0 and 0.2.0 results do not (they use ip4 and ip6)`);
  });

  it('takes an address with a prefix no longer than its family has, and nothing around it', () => {
    expect(parseResult(v1({ ips: [{ address: '10.0.0.2/32' }, { address: 'fd00::2/128' }, { address: '10.0.0.3/0' }] })).ips).toHaveLength(3);
    for (const address of ['10.0.0.2/33', 'fd00::2/129', '10.0.0.2/24/1', 'x/24', '10.0.0.2/', '10.0.0.2/a24', '10.0.0.2/24a', '10.0.0.2/0024']) {
      fails(v1({ ips: [{ address }] }), `result.ips[0].address must be an address with a prefix length, got ${JSON.stringify(address)}`);
    }
  });

  it('leaves out what is given as undefined, rather than writing the key', () => {
    const route = parseResult(v1({ routes: [{ dst: '0.0.0.0/0', gw: undefined, mtu: undefined }] })).routes![0]!;
    expect(Object.keys(route)).toEqual(['dst']);
  });

  it('converts a result without routes down to 0.2.0', () => {
    expect(convertResult(v1({ ips: [{ address: '10.0.0.2/24' }] }) as Result, '0.2.0')).toEqual({ cniVersion: '0.2.0', ip4: { ip: '10.0.0.2/24' } });
  });

  it('names the field of a 0.1.0/0.2.0 result under ip4 or ip6', () => {
    const old = (fields: object) => ({ cniVersion: '0.2.0', ...fields });
    fails(old({ ip4: '10.0.0.2/24' }), 'result.ip4 must be an object');
    fails(old({ ip6: { ip: 7 } }), 'result.ip6.ip must be a string');
    fails(old({ ip4: { ip: '10.0.0.2' } }), 'result.ip4.ip must be an address with a prefix length, got "10.0.0.2"');
    fails(old({ ip4: { ip: '10.0.0.2/24', gateway: 'gw' } }), 'result.ip4.gateway must be an IP address, got "gw"');
    fails(old({ ip6: { ip: 'fd00::2/64', routes: [{ dst: '::/0', gw: 'x' }] } }), 'result.ip6.routes[0].gw must be an IP address, got "x"');
    fails(old({ ip4: { ip: '10.0.0.2/24' }, dns: { domain: 5 } }), 'result.dns.domain must be a string');
  });

  it('names the cniVersion no spec defines, given or wanted (code 1)', () => {
    expect(() => parseResult({ cniVersion: '0.5.0' })).toThrow(expect.objectContaining({ code: 1, message: 'result has cniVersion "0.5.0", which no spec defines' }));
    expect(() => convertResult(FULL, '1.2.0')).toThrow(expect.objectContaining({ code: 1, message: 'cniVersion "1.2.0" is not one the spec defines' }));
    const message = 'the result cannot be given in cniVersion 0.1.0: it has no IP address, which that version requires';
    expect(() => convertResult(v1({ interfaces: [{ name: 'eth0' }] }) as Result, '0.1.0')).toThrow(expect.objectContaining({ code: 1, message }));
  });

  it('converts a result without addresses down to 0.4.0, and writes no dns key to 0.2.0 when there is none', () => {
    expect(convertResult(v1({ interfaces: [{ name: 'eth0' }] }) as Result, '0.4.0')).toEqual({ cniVersion: '0.4.0', interfaces: [{ name: 'eth0' }] });
    expect(Object.keys(convertResult(v1({ ips: [{ address: '10.0.0.2/24' }] }) as Result, '0.2.0'))).toEqual(['cniVersion', 'ip4']);
  });

  it('names prevResultOf and the missing prevResult in their refusals', () => {
    expect(() => prevResultOf([] as never)).toThrow(expect.objectContaining({ code: 'ERR_NETNS_INVALID_ARG', message: expect.stringMatching(/^prevResultOf /) }));
    const message = 'prevResult is required: this plugin only adds to the result of a plugin before it in the chain';
    expect(() => passThrough({ cniVersion: '1.0.0', name: 'n', type: 't' })).toThrow(expect.objectContaining({ code: 7, message }));
  });
});

