// One owner's addresses in one family: duplicates dropped, overlaps refused
// by name before anything reaches nft (whose interval sets refuse them), at
// the exact boundaries: ranges that touch do not overlap, sharing one address does.
import { describe, expect, it } from 'vitest';
import { parseEntry, type Entry } from '../../dist/addrset/addresses.js';
import { addEntries, FamilyEntries } from '../../dist/addrset/entries.js';

const e = (text: string): Entry => parseEntry(text) as Entry;
const texts = (set: FamilyEntries): string[] => set.entries().map((entry) => entry.text);
const overlap = (text: string) => expect.objectContaining({ code: 'ERR_NETNS_ADDRSET_OVERLAP', message: `overlapping entries in one set: ${text}` });

describe("an owner's entries in one family", () => {
  it('loads a whole set in address order, dropping duplicates', () => {
    const set = FamilyEntries.of([e('10.0.0.9'), e('10.0.0.0/30'), e('10.0.0.9'), e('10.0.0.4')]);
    expect(texts(set)).toEqual(['10.0.0.0/30', '10.0.0.4', '10.0.0.9']);
    expect(set.size).toBe(3);
  });

  it('takes ranges that touch, and refuses ones sharing an address, naming each pair', () => {
    expect(texts(FamilyEntries.of([e('10.0.0.0/31'), e('10.0.0.2/31'), e('10.0.0.4')]))).toEqual(['10.0.0.0/31', '10.0.0.2/31', '10.0.0.4']);
    expect(() => FamilyEntries.of([e('10.0.0.0/31'), e('10.0.0.1')])).toThrow(overlap('10.0.0.1 overlaps 10.0.0.0/31'));
    expect(() => FamilyEntries.of([e('10.0.0.1'), e('10.0.0.0/24'), e('10.0.1.0/24'), e('10.0.1.5')])).toThrow(overlap('10.0.0.1 overlaps 10.0.0.0/24, 10.0.1.5 overlaps 10.0.1.0/24'));
  });

  it('names at most ten overlaps', () => {
    const many = [e('10.0.0.0/24'), ...Array.from({ length: 12 }, (_, i) => e(`10.0.0.${i + 1}`))];
    const error = (() => {
      try {
        FamilyEntries.of(many);
      } catch (caught) {
        return caught as Error;
      }
    })();
    expect(error?.message.match(/overlaps/g)).toHaveLength(10);
    expect(error?.message).toContain('10.0.0.10 overlaps');
    expect(error?.message).not.toContain('10.0.0.11 overlaps');
  });

  it('finds an entry by its text, not only its first address', () => {
    const set = FamilyEntries.of([e('10.0.0.0/30')]);
    expect(set.has(e('10.0.0.0/30'))).toBe(true);
    expect(set.has(e('10.0.0.0'))).toBe(false); // same first address, another entry
    expect(set.take(e('10.0.0.0'))).toBeUndefined();
    expect(set.size).toBe(1);
    expect(set.take(e('10.0.0.0/30'))?.text).toBe('10.0.0.0/30');
    expect(set.size).toBe(0);
    expect(set.take(e('10.0.0.0/30'))).toBeUndefined();
  });

  it('says which held entry a new one meets, at both ends', () => {
    const set = FamilyEntries.of([e('10.0.0.4/30')]); // .4 to .7
    expect(set.meeting(e('10.0.0.3'))).toBeUndefined();
    expect(set.meeting(e('10.0.0.8'))).toBeUndefined();
    expect(set.meeting(e('10.0.0.0/29'))?.text).toBe('10.0.0.4/30'); // starts before, ends inside
    expect(set.meeting(e('10.0.0.7'))?.text).toBe('10.0.0.4/30');
    expect(set.meeting(e('10.0.0.4'))?.text).toBe('10.0.0.4/30');
  });

  it('adds entries one by one, skipping those held, and on an overlap adds none of them', () => {
    const set = FamilyEntries.of([e('10.0.0.1')]);
    expect(addEntries(set, [e('10.0.0.1'), e('10.0.0.2')]).map((entry) => entry.text)).toEqual(['10.0.0.2']);
    expect(() => addEntries(set, [e('10.0.0.3'), e('10.0.0.0/30'), e('10.0.0.9')])).toThrow(overlap('10.0.0.0/30 overlaps 10.0.0.3')); // .3, added a moment before, is taken out again
    expect(texts(set)).toEqual(['10.0.0.1', '10.0.0.2']);
  });

  it('orders IPv6 entries by their 128-bit first address', () => {
    const set = FamilyEntries.of([e('2001:db8::2'), e('2001:db8::1:0/112'), e('::1')]);
    expect(texts(set)).toEqual(['::1', '2001:db8::2', '2001:db8::1:0/112']);
    expect(() => addEntries(set, [e('2001:db8::1:ff')])).toThrow(overlap('2001:db8::1:ff overlaps 2001:db8::1:0/112'));
  });
});
