import { isIPv4 } from 'node:net';
import ipaddr from 'ipaddr.js';
import { describe, expect, it } from 'vitest';
import { parseEntries, parseEntry } from '../../dist/addrset/addresses.js';
import { decodeRecord, encodeRecord, familyOfSetName, setName, ownerHash, checkPrefix } from '../../dist/addrset/naming.js';
import { renderJson, renderText } from '../../dist/addrset/render.js';

const HOSTILE_OWNERS = [
  'ns/frontend',
  'quote " and \\ backslash',
  "}; flush ruleset; add table inet x {",
  'new\nline and \t tab',
  'comment "x" }',
  'unicode: 名前空間 🚀',
  '$(rm -rf /) `id`',
  'x'.repeat(600),
];

describe('addresses', () => {
  it('canonicalises addresses and prefixes as nft lists them', () => {
    expect(parseEntry('10.1.0.7')).toMatchObject({ family: 4, text: '10.1.0.7' });
    expect(parseEntry('10.1.0.0/16')).toMatchObject({ family: 4, text: '10.1.0.0/16' });
    expect(parseEntry('10.1.0.7/32')).toMatchObject({ text: '10.1.0.7' });
    expect(parseEntry('FD00:0:0::0007')).toMatchObject({ family: 6, text: 'fd00::7' });
    expect(parseEntry('2001:db8:0:0:1:0:0:1')).toMatchObject({ text: '2001:db8::1:0:0:1' });
    // an IPv4 tail as nft (inet_ntop) prints it: mapped, and compatible unless the tail's first half is 0
    expect(parseEntry('::ffff:10.0.0.1')).toMatchObject({ text: '::ffff:10.0.0.1' });
    expect(parseEntry('::ffff:a00:1')).toMatchObject({ text: '::ffff:10.0.0.1' });
    expect(parseEntry('::1.2.0.0')).toMatchObject({ text: '::1.2.0.0' });
    expect(parseEntry('::ffff:0:0/96')).toMatchObject({ text: '::ffff:0.0.0.0/96' });
    expect(parseEntry('::100')).toMatchObject({ text: '::100' });
    expect(parseEntry('64:ff9b::a00:1')).toMatchObject({ text: '64:ff9b::a00:1' });
    expect(parseEntry('fd00:1::/64')).toMatchObject({ text: 'fd00:1::/64' });
  });

  it('refuses what is not an address, naming every bad entry', () => {
    expect(parseEntry('10.0.0.256')).toBe('not an IPv4 or IPv6 address');
    expect(parseEntry('10.0.0.0/33')).toBe('prefix length must be 0 to 32');
    expect(parseEntry('fe80::1%eth0')).toBe('not an IPv4 or IPv6 address');
    expect(parseEntry('10.0.0.1/24')).toMatch(/host bits set \(did you mean 10\.0\.0\.0\/24\?\)/);
    expect(() => parseEntries(['10.0.0.1', '1.2.3', '10.0.0.0/8', 'x; flush ruleset'])).toThrow(
      expect.objectContaining({ code: 'ERR_NETNS_ADDRSET_INVALID_ADDRESS', message: expect.stringMatching(/"1\.2\.3".*"x; flush ruleset"/) }),
    );
    expect(() => parseEntries('10.0.0.1' as unknown as string[])).toThrow(expect.objectContaining({ code: 'ERR_NETNS_ADDRSET_INVALID_ADDRESS' }));
  });

  it('gives each entry the first and last address it covers, as integers', () => {
    const v6 = (text: string) => BigInt(`0x${Buffer.from(ipaddr.IPv6.parse(text).toByteArray()).toString('hex')}`);
    const bounds = (input: string) => {
      const parsed = parseEntry(input);
      return typeof parsed === 'string' ? parsed : [parsed.first, parsed.last];
    };
    expect(bounds('10.1.0.0/16')).toEqual([0x0a010000, 0x0a01ffff]);
    expect(bounds(' 192.168.1.0/24 ')).toEqual([0xc0a80100, 0xc0a801ff]);
    expect(bounds('0.0.0.0/0')).toEqual([0, 0xffffffff]);
    expect(bounds('fd00:1::/64')).toEqual([v6('fd00:1::'), v6('fd00:1::ffff:ffff:ffff:ffff')]);
    expect(bounds('::/0')).toEqual([0n, (1n << 128n) - 1n]);
    for (const text of ['FD00:0:0::0007', '2001:db8:0:0:1:0:0:1', '::ffff:10.0.0.1', '::ffff:a00:1', '1::', '::', '1:2:3:4:5:6:7:8', 'fe80::1:2']) {
      expect(bounds(text), text).toEqual([v6(text), v6(text)]);
    }
    // An IPv4 tail after "::" is the last 32 bits as written (ipaddr.js alone would read it as ::ffff:1.2.0.0).
    expect(bounds('::1.2.0.0')).toEqual([0x01020000n, 0x01020000n]);
    expect(bounds('64:ff9b::10.0.0.1')).toEqual([v6('64:ff9b::a00:1'), v6('64:ff9b::a00:1')]);
  });

  it('takes exactly the dotted quads Node takes, at their value (the fast path for plain IPv4)', () => {
    // Near misses of every kind: leading zeros, 256, empty, missing or extra parts, signs, spaces.
    const pieces = ['0', '00', '01', '9', '10', '99', '100', '199', '255', '256', '300', '', '-1', '+1', ' 1', '1a', '1e2'];
    let seed = 7;
    const pick = () => pieces[(seed = (seed * 1103515245 + 12345) % 2 ** 31) % pieces.length]!;
    for (let i = 0; i < 20_000; i++) {
      const parts = Array.from({ length: 3 + (i % 3) }, pick);
      const input = parts.join('.');
      const parsed = parseEntry(input);
      // Surrounding blanks are trimmed, as for any entry.
      const text = input.trim();
      if (!isIPv4(text)) {
        expect(typeof parsed, input).toBe('string');
        continue;
      }
      const value = parts.reduce((acc, part) => acc * 256 + Number(part), 0);
      expect(parsed, input).toEqual({ family: 4, text, first: value, last: value });
    }
  });
});

describe('owner records', () => {
  it('round-trips any owner without it ever appearing raw', () => {
    for (const owner of HOSTILE_OWNERS) {
      const comment = encodeRecord(owner, 1_700_000_020_000);
      expect(comment.length).toBeLessThanOrEqual(128);
      expect(comment).toMatch(/^[A-Za-z0-9_= -]+$/);
      const record = decodeRecord(comment)!;
      expect(record.ownerHash).toBe(ownerHash(owner));
      expect(record.deadline).toBe(1_700_000_020_000);
      expect(record.owner).toBe(owner.length > 70 ? null : owner);
    }
  });

  it('derives short, fixed-size set names that stay ours', () => {
    const hash = ownerHash('ns/frontend');
    expect(setName('as', 4, hash)).toMatch(/^as4_[0-9a-f]{11}$/);
    expect(setName('as', 6, hash)).toHaveLength(15);
    expect(familyOfSetName('as', setName('as', 6, hash))).toBe(6);
    expect(familyOfSetName('as', 'as4_user_set')).toBeUndefined();
    expect(familyOfSetName('as', 'mine')).toBeUndefined();
    expect(() => checkPrefix('too-long')).toThrow(expect.objectContaining({ code: 'ERR_NETNS_ADDRSET_INVALID_OPTION' }));
    expect(decodeRecord('v1 o=!!')).toBeUndefined();
    expect(decodeRecord('someone else\'s comment')).toBeUndefined();
  });

  it('renders transactions with nothing but validated tokens', () => {
    const ops = HOSTILE_OWNERS.map((owner) => ({
      op: 'putRecord' as const,
      registry: 'as_owners',
      key: setName('as', 4, ownerHash(owner)),
      comment: encodeRecord(owner),
    }));
    const text = renderText({ family: 'inet', table: 'policy_t' }, ops);
    for (const owner of HOSTILE_OWNERS.slice(1)) expect(text).not.toContain(owner);
    for (const line of text.trim().split('\n')) {
      expect(line).toMatch(/^(add|delete) element inet policy_t as_owners \{ "as4_[0-9a-f]{11}"( comment "v1 [hod]=[A-Za-z0-9_-]+")? \}$/);
    }
    const json = JSON.parse(renderJson({ family: 'inet', table: 'policy' }, ops)) as { nftables: unknown[] };
    expect(json.nftables).toHaveLength(3 * HOSTILE_OWNERS.length); // add, delete, add with the comment
  });
});
