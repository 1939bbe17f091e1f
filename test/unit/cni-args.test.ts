// CNI_ARGS and runtimeConfig as a plugin reads them: declared keys typed,
// the runtime's extra keys refused unless it said IgnoreUnknown, every
// malformed piece code 4; capability arguments only as own properties.
import { describe, expect, it } from 'vitest';
import { hasCapability, parseCniArgs, runtimeConfig, validAttachments, type NetConf } from '../../dist/cni/index.js';

const spec = { IP: 'ip', K8S_POD_NAME: 'string', DEBUG: 'boolean' } as const;

describe('parseCniArgs', () => {
  it('reads declared keys by kind', () => {
    const args = parseCniArgs('IP=10.0.0.5;K8S_POD_NAME=web-0;DEBUG=True', spec);
    expect(args).toEqual({ IP: '10.0.0.5', K8S_POD_NAME: 'web-0', DEBUG: true });
    expect(parseCniArgs('DEBUG=0', spec)).toEqual({ DEBUG: false });
    expect(parseCniArgs('IP=fd00::5', spec)).toEqual({ IP: 'fd00::5' });
  });

  it('is {} for an empty or unset CNI_ARGS', () => {
    expect(parseCniArgs('', spec)).toEqual({});
    expect(parseCniArgs(undefined, spec)).toEqual({});
  });

  it('refuses unknown keys, all named, unless IgnoreUnknown is 1 or true (code 4)', () => {
    expect(() => parseCniArgs('K8S_POD_NAMESPACE=default;IP=10.0.0.5;FOO=1', spec)).toThrow(
      expect.objectContaining({ code: 4, message: expect.stringContaining('"K8S_POD_NAMESPACE=default", "FOO=1"') }),
    );
    expect(parseCniArgs('K8S_POD_NAMESPACE=default;IgnoreUnknown=1;IP=10.0.0.5', spec)).toEqual({ IgnoreUnknown: true, IP: '10.0.0.5' });
    expect(parseCniArgs('IgnoreUnknown=true;X=y', spec)).toEqual({ IgnoreUnknown: true });
    expect(() => parseCniArgs('IgnoreUnknown=0;X=y', spec)).toThrow(expect.objectContaining({ code: 4 }));
  });

  it('splits each piece into exactly two, so = in a value, a bare key and a trailing ; fail (code 4)', () => {
    for (const text of ['K8S_POD_NAME=a=b', 'IP', 'IP=10.0.0.5;', ';']) {
      expect(() => parseCniArgs(text, spec), text).toThrow(expect.objectContaining({ code: 4, message: expect.stringContaining('invalid pair') }));
    }
  });

  it('refuses a bad value for its kind, and keys in another case (code 4)', () => {
    expect(() => parseCniArgs('IP=10.0.0.300', spec)).toThrow(expect.objectContaining({ code: 4, message: 'CNI_ARGS: "IP=10.0.0.300": the value is not an IP address' }));
    expect(() => parseCniArgs('DEBUG=yes', spec)).toThrow(expect.objectContaining({ code: 4, message: 'CNI_ARGS: "DEBUG=yes": the value is not 1, true, 0 or false' }));
    expect(parseCniArgs('DEBUG=FALSE', spec)).toEqual({ DEBUG: false });
    expect(() => parseCniArgs('IgnoreUnknown=maybe', spec)).toThrow(expect.objectContaining({ code: 4, message: 'CNI_ARGS: "IgnoreUnknown=maybe": the value is not 1, true, 0 or false' }));
    expect(() => parseCniArgs('ip=10.0.0.5', spec)).toThrow(expect.objectContaining({ code: 4 }));
  });

  it('keeps keys as plain data: __proto__ and inherited names are not declared keys', () => {
    expect(() => parseCniArgs('toString=x', spec)).toThrow(expect.objectContaining({ code: 4 }));
    const declared = JSON.parse('{"__proto__":"string"}') as Record<string, 'string'>; // an own key, as JSON makes it
    const args = parseCniArgs('__proto__=x', declared);
    expect(Object.getPrototypeOf(args)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(args, '__proto__')?.value).toBe('x');
  });

  it('refuses a CNI_ARGS that is not text (ERR_NETNS_INVALID_ARG)', () => {
    expect(() => parseCniArgs(5 as never, spec)).toThrow(expect.objectContaining({ code: 'ERR_NETNS_INVALID_ARG', message: 'parseCniArgs takes the CNI_ARGS text' }));
  });

  it('refuses a spec that is not a map of kinds (ERR_NETNS_INVALID_ARG)', () => {
    expect(() => parseCniArgs('IP=1.2.3.4', { IP: 'address' } as never)).toThrow(expect.objectContaining({ code: 'ERR_NETNS_INVALID_ARG' }));
    expect(() => parseCniArgs('IP=1.2.3.4', null as never)).toThrow(expect.objectContaining({ code: 'ERR_NETNS_INVALID_ARG' }));
    const message = 'the CNI_ARGS spec maps each key to one of string, ip, boolean';
    expect(() => parseCniArgs('IP=1.2.3.4', { IP: 'ip', X: 'address' } as never)).toThrow(expect.objectContaining({ code: 'ERR_NETNS_INVALID_ARG', message })); // one bad kind among good ones
    expect(() => parseCniArgs('IP=1.2.3.4', { IP: 'ip', X: ['ip'] } as never)).toThrow(expect.objectContaining({ code: 'ERR_NETNS_INVALID_ARG', message })); // a kind that only prints as one
  });
});

describe('runtimeConfig and capabilities', () => {
  const config: NetConf = {
    cniVersion: '1.1.0',
    name: 'n',
    type: 't',
    capabilities: { portMappings: true, ips: false },
    runtimeConfig: { portMappings: [{ hostPort: 8080, containerPort: 80, protocol: 'tcp' }] },
  };

  it('gives what the runtime passed, undefined otherwise', () => {
    expect(runtimeConfig(config, 'portMappings')).toEqual([{ hostPort: 8080, containerPort: 80, protocol: 'tcp' }]);
    expect(runtimeConfig(config, 'ips')).toBeUndefined();
    expect(runtimeConfig({ cniVersion: '1.1.0', name: 'n', type: 't' }, 'mac')).toBeUndefined();
  });

  it('says which capabilities the configuration declares (true only)', () => {
    expect(hasCapability(config, 'portMappings')).toBe(true);
    expect(hasCapability(config, 'ips')).toBe(false);
    expect(hasCapability(config, 'bandwidth')).toBe(false);
    expect(hasCapability({ cniVersion: '1.1.0', name: 'n', type: 't' }, 'portMappings')).toBe(false);
  });

  it('reads a runtimeConfig that is not an object as nothing passed', () => {
    for (const given of [null, 'mac', 7]) expect(runtimeConfig({ ...config, runtimeConfig: given } as never, 'mac'), String(given)).toBeUndefined();
  });

  it('refuse what is not a parsed configuration (ERR_NETNS_INVALID_ARG)', () => {
    for (const call of [() => runtimeConfig(null as never, 'mac'), () => hasCapability(undefined as never, 'mac'), () => validAttachments('{}' as never)]) {
      expect(call).toThrow(expect.objectContaining({ code: 'ERR_NETNS_INVALID_ARG' }));
    }
    expect(() => hasCapability([] as never, 'mac')).toThrow(expect.objectContaining({ message: expect.stringMatching(/^hasCapability /) }));
    expect(() => runtimeConfig([] as never, 'mac')).toThrow(expect.objectContaining({ message: expect.stringMatching(/^runtimeConfig /) }));
  });

  it('reads capabilities that are not an object as none declared', () => {
    for (const capabilities of [null, 'ips', 7]) expect(hasCapability({ ...config, capabilities } as never, 'ips'), String(capabilities)).toBe(false);
  });

  it('reads own properties only', () => {
    const polluted = Object.prototype as Record<string, unknown>;
    polluted.mac = '0a:00:00:00:00:01';
    polluted.bandwidth = true;
    try {
      expect(runtimeConfig(config, 'mac')).toBeUndefined();
      expect(hasCapability(config, 'bandwidth')).toBe(false);
    } finally {
      delete polluted.mac;
      delete polluted.bandwidth;
    }
  });
});

describe('validAttachments', () => {
  const gc = (extra: object): NetConf => ({ cniVersion: '1.1.0', name: 'n', type: 't', ...extra });

  it('is undefined without a list, which is not an empty one', () => {
    expect(validAttachments(gc({}))).toBeUndefined();
    expect(validAttachments(gc({ 'cni.dev/valid-attachments': [] }))).toEqual([]);
  });

  it("reads the spec's key, else the 1.1.0 tag's that libcni also sends", () => {
    const one = [{ containerID: 'c1', ifname: 'eth0' }];
    const other = [{ containerID: 'c2', ifname: 'eth0' }];
    expect(validAttachments(gc({ 'cni.dev/attachments': one }))).toEqual(one);
    expect(validAttachments(gc({ 'cni.dev/valid-attachments': other, 'cni.dev/attachments': one }))).toEqual(other);
  });

  it('refuses a malformed list (code 7)', () => {
    for (const list of [{}, [null], [{ containerID: 'c1' }], [{ containerID: '', ifname: 'eth0' }]]) {
      expect(() => validAttachments(gc({ 'cni.dev/valid-attachments': list })), JSON.stringify(list)).toThrow(expect.objectContaining({ code: 7 }));
    }
  });

  it('names the key, or the item and what it lacks, in a malformed list', () => {
    expect(() => validAttachments(gc({ 'cni.dev/attachments': 'c1/eth0' }))).toThrow(expect.objectContaining({ code: 7, message: 'cni.dev/attachments must be an array' }));
    const item = 'must be an object with non-empty containerID and ifname';
    const items = [undefined, 7, { containerID: 5, ifname: 'eth0' }, { containerID: 'c1', ifname: '' }, { containerID: 'c1', ifname: ['eth0'] }];
    for (const bad of items) {
      const list = [{ containerID: 'c0', ifname: 'eth0' }, bad];
      expect(() => validAttachments(gc({ 'cni.dev/valid-attachments': list })), String(bad)).toThrow(expect.objectContaining({ code: 7, message: `cni.dev/valid-attachments[1] ${item}` }));
    }
  });

  it('takes a key present but undefined as absent, so the other key is read', () => {
    const one = [{ containerID: 'c1', ifname: 'eth0' }];
    expect(validAttachments(gc({ 'cni.dev/valid-attachments': undefined, 'cni.dev/attachments': one }))).toEqual(one);
    expect(validAttachments(gc({ 'cni.dev/valid-attachments': undefined }))).toBeUndefined();
  });

  it('names itself when given what is not a configuration', () => {
    expect(() => validAttachments([] as never)).toThrow(expect.objectContaining({ code: 'ERR_NETNS_INVALID_ARG', message: expect.stringMatching(/^validAttachments /) }));
  });
});
