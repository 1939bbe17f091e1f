// The addresses of one owner in one family, as held in the kernel. nft
// interval sets refuse overlapping elements, so overlaps are found here,
// before anything is sent, and reported by name. Entries are kept ordered by
// their first address (a B-tree): they never overlap, so the only entry that
// can overlap a new one is the last one starting at or before its end, and
// every check costs O(log n) whatever the set's size.
import * as sortedBtree from 'sorted-btree';
import { ErrorCodes, netnsError } from '../core/errors.js';
import type { Entry } from './addresses.js';

// CommonJS with the class on `exports.default`. Node's import puts module.exports
// on `default`; vitest and bundlers that honour __esModule put the class there.
type BTreeClass = typeof sortedBtree.default.default;
const imported = sortedBtree.default as unknown as BTreeClass | { default: BTreeClass };
const BTree: BTreeClass = 'default' in imported ? imported.default : imported;
const compare = (a: bigint, b: bigint) => (a < b ? -1 : a > b ? 1 : 0);

export class FamilyEntries {
  readonly #byText = new Map<string, Entry>();
  readonly #byFirst = new BTree<bigint, Entry>(undefined, compare);

  get size(): number {
    return this.#byText.size;
  }

  has(text: string): boolean {
    return this.#byText.has(text);
  }

  texts(): string[] {
    return [...this.#byText.keys()];
  }

  /** The entry `entry` overlaps without being identical, if any. */
  overlapping(entry: Entry): string | undefined {
    const before = this.#byFirst.getPairOrNextLower(entry.last)?.[1];
    if (!before || before.last < entry.first || before.text === entry.text) return undefined;
    return before.text;
  }

  add(entry: Entry): void {
    this.#byText.set(entry.text, entry);
    this.#byFirst.set(entry.first, entry);
  }

  /** Removes an entry and returns it, so that it can be put back. */
  take(text: string): Entry | undefined {
    const entry = this.#byText.get(text);
    if (!entry) return undefined;
    this.#byText.delete(text);
    this.#byFirst.delete(entry.first);
    return entry;
  }
}

/** Adds entries to `target`, skipping ones already there; throws (changing nothing) on overlaps. */
export function addEntries(target: FamilyEntries, entries: Entry[]): string[] {
  const batch = new FamilyEntries();
  const conflicts: string[] = [];
  for (const entry of entries) {
    if (target.has(entry.text) || batch.has(entry.text)) continue;
    const other = target.overlapping(entry) ?? batch.overlapping(entry);
    if (other !== undefined) {
      conflicts.push(`${entry.text} overlaps ${other}`);
      continue;
    }
    batch.add(entry);
  }
  if (conflicts.length > 0) {
    throw netnsError(ErrorCodes.ADDRSET_OVERLAP, `overlapping entries in one set: ${conflicts.slice(0, 10).join(', ')}`);
  }
  const fresh = batch.texts();
  for (const text of fresh) target.add(batch.take(text)!);
  return fresh;
}
