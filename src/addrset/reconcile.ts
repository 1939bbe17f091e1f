// Reads a kernel view of our table into what it holds: owners whose two sets
// and two records are all there and agree, and debris (a set without its
// record, a record without its set, half an owner), which only tampering or
// an older writer can leave, since every transaction makes or removes an
// owner whole. Pure: the manager decides what to do with it.
import type { Entry, Family } from './addresses.js';
import type { KernelView } from './backend.js';
import { decodeRecord, familyOfSetName, setName, type OwnerRecord } from './naming.js';
import { FAMILIES } from './owner.js';

export interface RecordedOwner {
  record: OwnerRecord;
  names: Record<Family, string>;
  /** Elements, when the view was read with them. */
  elements: Record<Family, Entry[]> | null;
}

export interface Leftover {
  owner: string | null;
  family: Family;
  name: string;
  hasSet: boolean;
  hasRecord: boolean;
}

export interface Reconciled {
  owners: RecordedOwner[];
  leftovers: Leftover[];
}

interface Part {
  name: string;
  family: Family;
  hasSet: boolean;
  hasRecord: boolean;
  record: OwnerRecord | undefined;
}

// Our names, grouped by the hash they carry (shared by an owner's two sets).
function partsByHash(view: KernelView, prefix: string): Map<string, Part[]> {
  const groups = new Map<string, Part[]>();
  for (const name of new Set([...view.sets.keys(), ...view.records.keys()])) {
    const family = familyOfSetName(prefix, name);
    if (family === undefined) continue;
    // A set of another type under a name of ours (ether_addr, say) is someone else's: never judged, never deleted.
    const hasSet = view.sets.get(name)?.family === family;
    const hasRecord = view.records.has(name);
    if (!hasSet && !hasRecord) continue;
    const record = hasRecord ? decodeRecord(view.records.get(name)) : undefined;
    if (hasRecord && !record) continue; // a record we cannot read is not ours to judge
    const key = name.slice(prefix.length + 1);
    const parts = groups.get(key) ?? [];
    parts.push({ name, family, hasSet, hasRecord, record });
    groups.set(key, parts);
  }
  return groups;
}

function wholeOwner(parts: Part[], prefix: string): OwnerRecord | undefined {
  const record = parts[0]!.record; // a group has a part at least
  if (!record || parts.length !== FAMILIES.length) return undefined;
  const whole = parts.every(
    (part) => part.hasSet && part.record?.ownerHash === record.ownerHash && part.name === setName(prefix, part.family, record.ownerHash),
  );
  return whole ? record : undefined;
}

export function reconcile(view: KernelView, prefix: string): Reconciled {
  const result: Reconciled = { owners: [], leftovers: [] };
  for (const parts of partsByHash(view, prefix).values()) {
    const record = wholeOwner(parts, prefix);
    if (record) {
      const names = { 4: setName(prefix, 4, record.ownerHash), 6: setName(prefix, 6, record.ownerHash) };
      const elementsOf = (family: Family) => view.sets.get(names[family])!.elements; // a whole owner has both sets
      const elements = elementsOf(4) && elementsOf(6) ? { 4: elementsOf(4)!, 6: elementsOf(6)! } : null;
      result.owners.push({ record, names, elements });
      continue;
    }
    for (const { name, family, hasSet, hasRecord, record: partRecord } of parts) {
      result.leftovers.push({ owner: partRecord?.owner ?? null, family, name, hasSet, hasRecord });
    }
  }
  return result;
}
