// The names and records address sets keep in the kernel: which prefixes and
// owners are taken (with the error a caller sees), which set names are ours,
// and how an owner is written into a record's comment and read back. A
// record that decodes wrongly, or a name taken for ours that is not, makes gc
// remove what a user holds.
import { describe, expect, it } from 'vitest';
import { AddressSets } from '../../dist/addrset/index.js';
import { checkOwner, checkPrefix, decodeRecord, encodeRecord, familyOfSetName, ownerHash, setName } from '../../dist/addrset/naming.js';
import { NetNS } from '../../dist/index.js';
import { ManualClock, MemoryBackend } from '../../dist/testing.js';

describe('checkPrefix', () => {
  it('takes a lowercase letter then up to four letters or digits', () => {
    for (const prefix of ['a', 'as', 'k8s', 'a1234']) expect(checkPrefix(prefix)).toBe(prefix);
  });

  it('refuses anything else with ERR_NETNS_ADDRSET_INVALID_OPTION, naming the rule', () => {
    for (const prefix of ['', 'A', '1a', 'ab-c', 'abcdef', 'a_', undefined, 7]) {
      expect(() => checkPrefix(prefix)).toThrow(
        expect.objectContaining({ code: 'ERR_NETNS_ADDRSET_INVALID_OPTION', message: 'prefix must match /^[a-z][a-z0-9]{0,4}$/ (it leaves room for the hash in 15 bytes)' }),
      );
    }
  });
});

describe('checkOwner', () => {
  const refused = (owner: unknown, message: string) => expect(() => checkOwner(owner)).toThrow(expect.objectContaining({ code: 'ERR_NETNS_ADDRSET_INVALID_OWNER', message }));

  it('takes any well-formed string of 1 to 1024 UTF-8 bytes', () => {
    for (const owner of ['x', 'ns/pod 1', 'é'.repeat(512), '😀'.repeat(256)]) expect(checkOwner(owner)).toBe(owner);
  });

  it('refuses an empty string or a non-string', () => {
    for (const owner of ['', undefined, null, 42, ['a'], { toString: () => 'a' }]) refused(owner, 'owner must be a non-empty string');
  });

  it('refuses a lone surrogate, which has no UTF-8 form to record', () => {
    refused('pod\uD800', 'owner must be well-formed Unicode (no lone surrogates)');
  });

  it('counts UTF-8 bytes, not characters: 1025 bytes in 513 characters are refused', () => {
    refused(`${'é'.repeat(512)}a`, 'owner must be at most 1024 bytes');
    refused('a'.repeat(1025), 'owner must be at most 1024 bytes');
  });

  it('is what the manager checks before touching the kernel', async () => {
    const sets = await AddressSets.open({ netns: NetNS.current(), table: 't', backend: new MemoryBackend(), clock: new ManualClock(), lockTimeoutMs: 0 });
    await expect(sets.ensure('', ['10.0.0.1'])).rejects.toMatchObject({ code: 'ERR_NETNS_ADDRSET_INVALID_OWNER' });
    await expect(sets.gc({ live: ['ok', 'bad\uDC00'] })).rejects.toMatchObject({ code: 'ERR_NETNS_ADDRSET_INVALID_OWNER' });
    await sets.close();
  });
});

describe('familyOfSetName', () => {
  const hash = ownerHash('ns/pod');

  it("knows this prefix's names of either family", () => {
    expect(familyOfSetName('as', setName('as', 4, hash))).toBe(4);
    expect(familyOfSetName('as', setName('as', 6, hash))).toBe(6);
    expect(familyOfSetName('k8s', setName('k8s', 6, hash))).toBe(6);
  });

  it('takes only names of exactly 15 bytes: a longer or shorter name of the same shape is not ours', () => {
    const name = setName('as', 4, hash);
    expect(name).toHaveLength(15);
    expect(familyOfSetName('as', `${name}0`)).toBeUndefined();
    expect(familyOfSetName('as', name.slice(0, 14))).toBeUndefined();
  });

  it("is not fooled by another prefix's names, a third family or a non-hex hash", () => {
    expect(familyOfSetName('as', setName('kas', 4, hash))).toBeUndefined();
    expect(familyOfSetName('kas', setName('as', 4, hash))).toBeUndefined();
    expect(familyOfSetName('as', `as5_${hash.slice(0, 11)}`)).toBeUndefined();
    expect(familyOfSetName('as', `as4_${'g'.repeat(11)}`)).toBeUndefined();
  });
});

describe('owner records', () => {
  it('writes the owner in base64url, and a deadline rounded up to the millisecond', () => {
    expect(encodeRecord('x')).toBe('v1 o=eA');
    expect(encodeRecord('x', 1000.2)).toBe('v1 o=eA d=1001');
    expect(decodeRecord('v1 o=eA d=1001')).toEqual({ owner: 'x', ownerHash: ownerHash('x'), deadline: 1001 });
    expect(decodeRecord('v1 o=eA')).toEqual({ owner: 'x', ownerHash: ownerHash('x') });
  });

  it('keeps the owner while the comment fits in 128 bytes, its hash alone beyond', () => {
    const fits = 'o'.repeat(92); // 123 base64url characters after "v1 o="
    expect(encodeRecord(fits)).toHaveLength(128);
    expect(decodeRecord(encodeRecord(fits))).toEqual({ owner: fits, ownerHash: ownerHash(fits) });
    const over = 'o'.repeat(93);
    expect(encodeRecord(over)).toBe(`v1 h=${ownerHash(over)}`);
    expect(decodeRecord(encodeRecord(over, 5))).toEqual({ owner: null, ownerHash: ownerHash(over), deadline: 5 });
  });

  it('reads only a string comment of its own shape', () => {
    expect(decodeRecord(Buffer.from('v1 o=eA'))).toBeUndefined();
    expect(decodeRecord({ toString: () => 'v1 o=eA' })).toBeUndefined();
    for (const comment of [undefined, '', 'v2 o=eA', 'v1 o=eA d=', 'v1 h=abc', 'v1 o=e A', ' v1 o=eA']) expect(decodeRecord(comment)).toBeUndefined();
  });
});
