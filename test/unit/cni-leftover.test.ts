// What DEL, GC and a retried ADD take for a host end an ADD left without its
// alias (src/cni/leftover.ts), and which families forwarding is turned on for
// (familiesOf). The link states are the ones netlink reports; isPeerOf's
// netlink is a stand-in answering the two lookups it makes (the real one is
// in cni-ptp-killed-add and cni-plumbing, as root).
import { describe, expect, it } from 'vitest';
import { familiesOf } from '../../dist/cni/forward.js';
import { isPeerOf, isUnaliasedHostEnd } from '../../dist/cni/leftover.js';

const unaliased = { kind: 'veth', up: false, linkNetnsId: 3, index: 7, linkIndex: 2 };

describe('isUnaliasedHostEnd', () => {
  it('takes only a veth with no alias, down, its peer in another namespace', () => {
    expect(isUnaliasedHostEnd(unaliased as never)).toBe(true);
    for (const [what, link] of Object.entries({
      'another kind': { ...unaliased, kind: 'dummy' },
      'an alias': { ...unaliased, alias: '' },
      up: { ...unaliased, up: true },
      'its peer in this namespace': { ...unaliased, linkNetnsId: undefined },
    })) {
      expect(isUnaliasedHostEnd(link as never), what).toBe(false);
    }
  });
});

describe('isPeerOf', () => {
  const CONTAINER = { path: '/run/netns/c' };
  const hostEnd = { ...unaliased, index: 7, linkIndex: 2, linkNetnsId: 3 };
  /** The two netlink sides: the container's link named ifname, and the host's id for the container's namespace. */
  const sides = (end: object | Error | undefined, nsid = 3) => ({
    host: { nsids: { get: async (ns: unknown) => (ns === CONTAINER ? nsid : undefined) } },
    inside: {
      links: {
        get: async (name: string) => {
          if (end instanceof Error) throw end;
          if (name !== 'eth0' || end === undefined) throw Object.assign(new Error(`no ${name}`), { code: 'ENODEV' });
          return end;
        },
      },
    },
  });
  const peer = async (end: object | Error | undefined, nsid?: number) => {
    const { host, inside } = sides(end, nsid);
    return isPeerOf(host as never, hostEnd as never, inside as never, CONTAINER as never, 'eth0');
  };
  const end = { kind: 'veth', index: 2, linkIndex: 7 };

  it('is true when each end names the other and the host end points at the container', async () => {
    expect(await peer(end)).toBe(true);
  });

  it('is false when any of it differs, or the container has no such link', async () => {
    expect(await peer({ ...end, kind: 'dummy' }), 'kind').toBe(false);
    expect(await peer({ ...end, linkIndex: 8 }), "the container end's peer").toBe(false);
    expect(await peer({ ...end, index: 5 }), "the host end's peer").toBe(false);
    expect(await peer(end, 4), 'another namespace').toBe(false);
    expect(await peer(undefined), 'no link').toBe(false);
  });

  it('passes on a lookup failure that is not ENODEV', async () => {
    const failure = Object.assign(new Error('no permission'), { code: 'EPERM' });
    await expect(peer(failure)).rejects.toBe(failure);
  });
});

describe('familiesOf', () => {
  it('gives each family of the addresses once, in the order met', () => {
    expect(familiesOf([{ address: 'fd00::2/64' }, { address: '10.1.1.2/24' }, { address: 'fd00::3/64' }])).toEqual([6, 4]);
    expect(familiesOf([{ address: '10.1.1.2/24' }])).toEqual([4]);
    expect(familiesOf([])).toEqual([]);
  });

  it('refuses what is not a list of addresses, by message', () => {
    expect(() => familiesOf('10.1.1.2/24' as never)).toThrow(expect.objectContaining({ code: 'ERR_NETNS_INVALID_ARG', message: 'familiesOf: ips must be an array, got string' }));
    for (const ips of [[null], [{}], [{ address: 7 }], [{ address: '10.0.0.1/8' }, { address: undefined }]]) {
      expect(() => familiesOf(ips as never), JSON.stringify(ips)).toThrow(expect.objectContaining({ code: 'ERR_NETNS_INVALID_ARG', message: 'familiesOf: each of ips needs an address string' }));
    }
  });
});
