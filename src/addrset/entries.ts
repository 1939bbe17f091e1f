// The addresses of one owner in one family, as held in the kernel. nft
// interval sets refuse overlapping elements, so overlaps are found here,
// before anything is sent, and reported by name. Entries are kept ordered by
// their first address (a B-tree): they never overlap, so the only entry that
// can overlap (or equal) a new one is the last one starting at or before its
// end, one O(log n) lookup whatever the set's size. The tree is the only
// index: an entry is found by its first address and then compared by text.
import * as sortedBtree from 'sorted-btree';
import { bulkLoad } from 'sorted-btree/extended/bulkLoad.js';
import { ErrorCodes, netnsError } from '../core/errors.js';
import type { KeyValue } from '../nftables/elements.js';
import type { Entry } from './addresses.js';

// CommonJS with the class on `exports.default`. Node's import puts module.exports
// on `default`; vitest and bundlers that honour __esModule put the class there.
type BTreeClass = typeof sortedBtree.default.default;
const imported = sortedBtree.default as unknown as BTreeClass | { default: BTreeClass };
const BTree: BTreeClass = 'default' in imported ? imported.default : imported;

// Keys are entries' first addresses: numbers for IPv4 (comparing bigints cost more
// than the rest of a 100,000-address fill's bookkeeping), bigints for IPv6.
const compare = (a: KeyValue, b: KeyValue) => (a < b ? -1 : a > b ? 1 : 0);
const byFirst = (a: Entry, b: Entry) => compare(a.first, b.first);
const NODE_SIZE = 64;

export class FamilyEntries {
  readonly #byFirst: sortedBtree.default<KeyValue, Entry>;

  constructor(tree = new BTree<KeyValue, Entry>(undefined, compare, NODE_SIZE)) {
    this.#byFirst = tree;
  }

  /**
   * A set's whole content at once (replace, a first fill): duplicates dropped,
   * overlaps refused. Sorted (input mostly is), checked against its
   * neighbour, and loaded in bulk: O(n) instead of a lookup and an insertion each.
   */
  static of(entries: Entry[]): FamilyEntries {
    // Stryker disable next-line all: the check only spares sorting input already in order, which would leave it as it is
    const sorted = entries.every((entry, i) => i === 0 || entries[i - 1]!.first <= entry.first) ? entries : [...entries].sort(byFirst);
    const keys: KeyValue[] = [];
    const values: Entry[] = [];
    const conflicts: string[] = [];
    let previous: Entry | undefined;
    for (const entry of sorted) {
      if (previous === undefined || entry.first > previous.last) {
        keys.push(entry.first);
        values.push(entry);
        previous = entry;
      } else if (entry.text !== previous.text) {
        conflicts.push(`${entry.text} overlaps ${previous.text}`);
      }
    }
    if (conflicts.length > 0) throw overlapError(conflicts);
    return new FamilyEntries(bulkLoad(keys, values, NODE_SIZE, compare));
  }

  get size(): number {
    return this.#byFirst.size;
  }

  /** Every entry, in address order. */
  entries(): Entry[] {
    return this.#byFirst.valuesArray();
  }

  /** An entry with the same text is held. */
  has(entry: Entry): boolean {
    return this.#byFirst.get(entry.first)?.text === entry.text;
  }

  /** The held entry that `entry` equals or overlaps, if any. */
  meeting(entry: Entry): Entry | undefined {
    const before = this.#byFirst.getPairOrNextLower(entry.last)?.[1];
    return before && before.last >= entry.first ? before : undefined;
  }

  add(entry: Entry): void {
    this.#byFirst.set(entry.first, entry);
  }

  /** Removes the entry held with the same text and returns it, so that it can be put back. */
  take(entry: Entry): Entry | undefined {
    const held = this.#byFirst.get(entry.first);
    if (held?.text !== entry.text) return undefined;
    this.#byFirst.delete(entry.first);
    return held;
  }
}

/** Adds entries to `target`, skipping ones already there; throws (changing nothing) on overlaps. */
export function addEntries(target: FamilyEntries, entries: Entry[]): Entry[] {
  const added: Entry[] = [];
  const conflicts: string[] = [];
  for (const entry of entries) {
    const met = target.meeting(entry);
    if (met === undefined) {
      target.add(entry);
      added.push(entry);
    } else if (met.text !== entry.text) {
      conflicts.push(`${entry.text} overlaps ${met.text}`);
    }
  }
  if (conflicts.length > 0) {
    for (const entry of added) target.take(entry);
    throw overlapError(conflicts);
  }
  return added;
}

function overlapError(conflicts: string[]): Error {
  return netnsError(ErrorCodes.ADDRSET_OVERLAP, `overlapping entries in one set: ${conflicts.slice(0, 10).join(', ')}`);
}
