// How a kernel view of our table is read: which owners are whole (both sets,
// both records, agreeing), and what is debris for gc to remove. An owner
// taken for debris loses its sets; debris taken for an owner, or a foreign
// name taken for ours, is kept or removed wrongly: each case is pinned here
// on hand-made views.
import { describe, expect, it } from 'vitest';
import type { KernelSet, KernelView } from '../../dist/addrset/backend.js';
import { parseKernelText } from '../../dist/addrset/addresses.js';
import { encodeRecord, ownerHash, setName } from '../../dist/addrset/naming.js';
import { reconcile } from '../../dist/addrset/reconcile.js';

const owner = 'ns/pod';
const hash = ownerHash(owner);
const v4 = setName('as', 4, hash);
const v6 = setName('as', 6, hash);

const set = (name: string, family: KernelSet['family'], elements: string[] | null = null): [string, KernelSet] => [
  name,
  { name, family, elements: elements && elements.flatMap((text) => parseKernelText(text) ?? []) },
];

function view(sets: [string, KernelSet][], records: [string, string][]): KernelView {
  return { tableExists: true, sets: new Map(sets), records: new Map(records) };
}

const wholeSets = (elements4: string[] | null = null, elements6: string[] | null = null) => [set(v4, 4, elements4), set(v6, 6, elements6)];
const wholeRecords = (): [string, string][] => [[v4, encodeRecord(owner)], [v6, encodeRecord(owner)]];
const leftover = (name: string, family: 4 | 6, hasSet: boolean, hasRecord: boolean, who: string | null = owner) => ({ owner: who, family, name, hasSet, hasRecord });

describe('reconcile', () => {
  it('reads a whole owner, with its elements when the view has them', () => {
    const found = reconcile(view(wholeSets(['10.0.0.1'], []), wholeRecords()), 'as');
    expect(found.leftovers).toEqual([]);
    expect(found.owners).toHaveLength(1);
    expect(found.owners[0]!.record).toEqual({ owner, ownerHash: hash });
    expect(found.owners[0]!.names).toEqual({ 4: v4, 6: v6 });
    expect(found.owners[0]!.elements![4].map((e) => e.text)).toEqual(['10.0.0.1']);
    expect(found.owners[0]!.elements![6]).toEqual([]);
  });

  it('gives no elements unless both sets were read with them', () => {
    expect(reconcile(view(wholeSets(), wholeRecords()), 'as').owners[0]!.elements).toBeNull();
    expect(reconcile(view(wholeSets(['10.0.0.1'], null), wholeRecords()), 'as').owners[0]!.elements).toBeNull();
    expect(reconcile(view(wholeSets(null, ['fd00::1']), wholeRecords()), 'as').owners[0]!.elements).toBeNull();
  });

  it('a set without its record is debris of no known owner; a record without its set names its owner', () => {
    const found = reconcile(view([set(v4, 4)], [[v6, encodeRecord(owner)]]), 'as');
    expect(found.owners).toEqual([]);
    expect(found.leftovers).toEqual([leftover(v4, 4, true, false, null), leftover(v6, 6, false, true)]);
  });

  it('half an owner (one family\'s set and record, nothing of the other) is debris, not an owner', () => {
    const found = reconcile(view([set(v4, 4)], [[v4, encodeRecord(owner)]]), 'as');
    expect(found.owners).toEqual([]);
    expect(found.leftovers).toEqual([leftover(v4, 4, true, true)]);
  });

  it('both records but one set missing is debris, whichever family is missing', () => {
    for (const [present, family] of [[v4, 4], [v6, 6]] as const) {
      const found = reconcile(view([set(present, family)], wholeRecords()), 'as');
      expect(found.owners).toEqual([]);
      expect(found.leftovers).toHaveLength(2);
      expect(found.leftovers.filter((l) => l.hasSet).map((l) => l.name)).toEqual([present]);
    }
  });

  it('both sets but one record missing is debris, whichever record is missing', () => {
    for (const [recorded, family] of [[v4, 4], [v6, 6]] as const) {
      const found = reconcile(view(wholeSets(), [[recorded, encodeRecord(owner)]]), 'as');
      expect(found.owners).toEqual([]);
      expect(found.leftovers.filter((l) => l.hasRecord).map((l) => [l.name, l.family])).toEqual([[recorded, family]]);
    }
  });

  it('records naming two different owners under one hash are debris, not an owner', () => {
    const found = reconcile(view(wholeSets(), [[v4, encodeRecord(owner)], [v6, encodeRecord('ns/other')]]), 'as');
    expect(found.owners).toEqual([]);
    expect(found.leftovers.map((l) => l.owner)).toEqual([owner, 'ns/other']);
  });

  it("records whose owner's hash is not the one the names carry are debris", () => {
    const found = reconcile(view(wholeSets(), [[v4, encodeRecord('ns/other')], [v6, encodeRecord('ns/other')]]), 'as');
    expect(found.owners).toEqual([]);
    expect(found.leftovers).toHaveLength(2);
  });

  it('leaves out what is not ours to judge: a record we cannot read, a foreign key in the registry, a set of another type, another prefix', () => {
    const unreadable = reconcile(view(wholeSets(), [[v4, encodeRecord(owner)], [v6, 'written by hand']]), 'as');
    expect(unreadable.owners).toEqual([]);
    expect(unreadable.leftovers).toEqual([leftover(v4, 4, true, true)]); // v6, set and record, is not judged at all

    expect(reconcile(view([], [['eth0', encodeRecord(owner)]]), 'as')).toEqual({ owners: [], leftovers: [] });
    expect(reconcile(view([set(v4, 'other')], []), 'as')).toEqual({ owners: [], leftovers: [] });
    expect(reconcile(view(wholeSets(), wholeRecords()), 'kas')).toEqual({ owners: [], leftovers: [] });
  });
});
