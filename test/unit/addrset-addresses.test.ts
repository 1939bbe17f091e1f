// The address sets' entries read back and refused, to the letter: each
// refusal's reason, a long list's summary, a wrong IPv6 prefix's suggestion,
// the prefix length's form, and what comes back from the kernel (nft's JSON
// elements, netlink's ranges, nft's listed text) as a prefix, a range or an
// address. Found by the mutation pass over src/addrset/addresses.ts (issue 34).
import { describe, expect, it } from 'vitest';
import { entryFromNft, entryFromRange, parseEntries, parseEntry, parseKernelText } from '../../dist/addrset/addresses.js';

const v6 = (hex: string) => BigInt(`0x${hex}`);

describe('parseEntry refuses with its reason', () => {
  it.each([
    [7, 'not a string'],
    ['10.0.0.0/24/8', 'more than one "/"'],
    ['10.0.0.0/x24', 'prefix length must be 0 to 32'],
    ['10.0.0.0/24x', 'prefix length must be 0 to 32'],
    ['10.0.0.0/', 'prefix length must be 0 to 32'],
    ['fd00::/129', 'prefix length must be 0 to 128'],
    ['fd00::1/64', 'host bits set (did you mean fd00::/64?)'],
    ['10.0.0.1/8', 'host bits set (did you mean 10.0.0.0/8?)'],
    ['010.0.0.1', 'not an IPv4 or IPv6 address'],
  ])('%j: %s', (input, reason) => {
    expect(parseEntry(input)).toBe(reason);
  });

  it('reads a prefix with surrounding blanks, and a /0', () => {
    expect(parseEntry(' 10.0.0.0/8 ')).toEqual({ family: 4, text: '10.0.0.0/8', first: 0x0a000000, last: 0x0affffff });
    expect(parseEntry('0.0.0.0/0')).toEqual({ family: 4, text: '0.0.0.0/0', first: 0, last: 0xffffffff });
  });
});

describe('parseEntries', () => {
  it('names the first ten bad entries and counts the rest, and says how many there were', () => {
    const inputs = ['10.0.0.1', ...Array.from({ length: 12 }, (_, i) => `bad${i}`)];
    const shown = Array.from({ length: 10 }, (_, i) => `"bad${i}" (not an IPv4 or IPv6 address)`).join(', ');
    expect(() => parseEntries(inputs)).toThrow(
      expect.objectContaining({ code: 'ERR_NETNS_ADDRSET_INVALID_ADDRESS', message: `invalid addresses: ${shown}, and 2 more`, invalid: 12 }),
    );
    const ten = Array.from({ length: 10 }, (_, i) => `bad${i}`);
    expect(() => parseEntries(ten)).toThrow(expect.objectContaining({ message: `invalid addresses: ${shown}`, invalid: 10 }));
  });

  it('refuses what is not an array', () => {
    expect(() => parseEntries('10.0.0.1')).toThrow(expect.objectContaining({ code: 'ERR_NETNS_ADDRSET_INVALID_ADDRESS', message: 'addresses must be an array of strings' }));
  });
});

describe("entries read back from nft's JSON", () => {
  it('takes an address, a wrapped one, a prefix and a range', () => {
    expect(entryFromNft('10.0.0.1', 4)).toMatchObject({ text: '10.0.0.1' });
    expect(entryFromNft({ elem: { val: '10.0.0.2', comment: 'x' } }, 4)).toMatchObject({ text: '10.0.0.2' });
    expect(entryFromNft({ prefix: { addr: '10.1.0.0', len: 16 } }, 4)).toMatchObject({ text: '10.1.0.0/16', first: 0x0a010000, last: 0x0a01ffff });
    expect(entryFromNft({ range: ['10.0.0.1', '10.0.0.5'] }, 4)).toEqual({ family: 4, text: '10.0.0.1-10.0.0.5', first: 0x0a000001, last: 0x0a000005 });
  });

  it('gives nothing for a range with an end it cannot read, or an element of another kind', () => {
    expect(entryFromNft({ range: ['10.0.0.1', 'x'] }, 4)).toBeUndefined();
    expect(entryFromNft({ range: ['x', '10.0.0.5'] }, 4)).toBeUndefined();
    expect(entryFromNft({ set: ['10.0.0.1'] }, 4)).toBeUndefined();
  });
});

describe('entries read back from netlink ranges', () => {
  it('shows IPv4 as an address, an aligned power-of-two as a prefix, anything else as a range', () => {
    expect(entryFromRange(4, 0x0a000000, 0x0a0000ff).text).toBe('10.0.0.0/24');
    expect(entryFromRange(4, 0x0a000080, 0x0a0001ff).text).toBe('10.0.0.128-10.0.1.255'); // 384 addresses
    expect(entryFromRange(4, 0x0a000080, 0x0a00017f).text).toBe('10.0.0.128-10.0.1.127'); // 256, not aligned
    expect(entryFromRange(4, 0x0a000001, 0x0a000001).text).toBe('10.0.0.1');
  });

  it('does the same for IPv6', () => {
    const base = v6('fd000000000000000000000000000000');
    expect(entryFromRange(6, base, base + 0xffn)).toMatchObject({ text: 'fd00::/120', first: base, last: base + 0xffn });
    expect(entryFromRange(6, base + 0x80n, base + 0x1ffn).text).toBe('fd00::80-fd00::1ff');
    expect(entryFromRange(6, base + 0x80n, base + 0x17fn).text).toBe('fd00::80-fd00::17f');
    expect(entryFromRange(6, base + 1n, base + 1n).text).toBe('fd00::1');
  });
});

describe("entries read back from nft's listed text", () => {
  it('takes a range of one family, and nothing else with a dash', () => {
    expect(parseKernelText('10.0.0.1-10.0.0.5')).toEqual({ family: 4, text: '10.0.0.1-10.0.0.5', first: 0x0a000001, last: 0x0a000005 });
    expect(parseKernelText('fd00::1-fd00::5')).toMatchObject({ family: 6, first: v6('fd000000000000000000000000000001'), last: v6('fd000000000000000000000000000005') });
    expect(parseKernelText('10.0.0.1-fd00::5')).toBeUndefined();
    expect(parseKernelText('x-10.0.0.5')).toBeUndefined();
    expect(parseKernelText('10.0.0.1-x')).toBeUndefined();
    expect(parseKernelText('10.0.0.0/24')).toMatchObject({ text: '10.0.0.0/24' });
  });
});
