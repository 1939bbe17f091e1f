// A NAT router's uplink as planned: the machine's end takes the subnet's
// first address and the router's end the second; a subnet not given is a /30
// of 100.64.0.0/10 (RFC 6598) overlapping nothing of the lab's or the
// machine's, tried at random 64 times before giving up. The random draw is
// this file's stand-in, so the subnet picked is exact.
import { beforeEach, describe, expect, it, vi } from 'vitest';

const draws = vi.hoisted(() => ({ values: [] as number[], calls: [] as number[] }));
vi.mock('node:crypto', async (actual) => {
  const crypto = await actual<typeof import('node:crypto')>();
  const randomInt = (max: number) => {
    draws.calls.push(max);
    return draws.values.shift() ?? 0;
  };
  return { ...crypto, default: { ...crypto, randomInt }, randomInt };
});
const { planNat, UPLINK } = await import('../../src/testing/lab/nat-plan.js');

beforeEach(() => {
  draws.values = [];
  draws.calls = [];
});

describe('a given uplink subnet', () => {
  it("gives the machine's end the first address and the router's `uplink` the second, with the subnet's length", () => {
    const nat = planNat('gw', '192.0.2.0/30', []);
    expect(nat).toEqual({ node: 'gw', subnet: '192.0.2.0/30', iface: 'uplink', routerAddress: '192.0.2.2/30', machineIface: expect.stringMatching(/^nslab[0-9a-f]{8}$/), machineAddress: '192.0.2.1/30' });
    expect(UPLINK).toBe('uplink');
    expect(planNat('gw', '100.64.9.0/24', []).routerAddress).toBe('100.64.9.2/24');
    expect(draws.calls).toEqual([]); // nothing picked
  });

  it('counts from the network, whatever host bits the subnet was written with', () => {
    expect(planNat('gw', '198.51.100.7/24', [])).toMatchObject({ subnet: '198.51.100.7/24', machineAddress: '198.51.100.1/24', routerAddress: '198.51.100.2/24' });
  });

  it("names the machine's end afresh each time (two labs' ends never clash)", () => {
    expect(planNat('gw', '192.0.2.0/30', []).machineIface).not.toBe(planNat('gw', '192.0.2.0/30', []).machineIface);
  });
});

describe('an uplink subnet picked', () => {
  it('is the /30 of 100.64.0.0/10 drawn among its 2^20', () => {
    draws.values = [5];
    expect(planNat('gw', undefined, [])).toMatchObject({ subnet: '100.64.0.20/30', machineAddress: '100.64.0.21/30', routerAddress: '100.64.0.22/30' });
    expect(draws.calls).toEqual([2 ** 20]);
    draws.values = [2 ** 20 - 1];
    expect(planNat('gw', undefined, []).subnet).toBe('100.127.255.252/30');
  });

  it("draws again while the /30 overlaps a subnet of the lab's or the machine's, IPv6 ones aside", () => {
    draws.values = [0, 64, 1];
    // 100.64.0.0/30 overlaps the first, 100.64.1.0/30 the second (a /24 holding it); 100.64.0.4/30 neither.
    expect(planNat('gw', undefined, ['10.0.1.0/24', '100.64.0.2/32', '100.64.1.0/24', 'fd00::/8']).subnet).toBe('100.64.0.4/30');
    expect(draws.calls).toHaveLength(3);
  });

  it('gives up after 64 draws, asking for a subnet (ERR_NETNS_FIXTURE)', () => {
    expect(() => planNat('gw', undefined, ['100.64.0.0/10'])).toThrow(
      expect.objectContaining({ code: 'ERR_NETNS_FIXTURE', message: 'createLab: no free /30 found in 100.64.0.0/10 for the NAT uplink: give one (routers: { r: { nat: { subnet } } })' }),
    );
    expect(draws.calls).toHaveLength(64);
  });
});
