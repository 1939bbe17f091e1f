// The addresses of one owner in one family, as held in the kernel. nft
// interval sets refuse overlapping elements, so overlaps are found here,
// before anything is sent, and reported by name.
import { netnsError } from '../errors.js';
import type { Entry, Family } from './addresses.js';
import { AddrsetCodes } from './codes.js';

export class FamilyEntries {
  readonly #singles = new Map<string, bigint>();
  readonly #ranges = new Map<string, Entry>();

  get size(): number {
    return this.#singles.size + this.#ranges.size;
  }

  has(text: string): boolean {
    return this.#singles.has(text) || this.#ranges.has(text);
  }

  texts(): string[] {
    return [...this.#singles.keys(), ...this.#ranges.keys()];
  }

  /** A copy to plan changes on; the original stays as the kernel has it until they commit. */
  clone(): FamilyEntries {
    const copy = new FamilyEntries();
    for (const [text, value] of this.#singles) copy.#singles.set(text, value);
    for (const [text, entry] of this.#ranges) copy.#ranges.set(text, entry);
    return copy;
  }

  /** The existing entry `entry` overlaps without being identical, if any. */
  overlapping(entry: Entry): string | undefined {
    for (const [text, range] of this.#ranges) {
      if (text !== entry.text && range.first <= entry.last && entry.first <= range.last) return text;
    }
    if (entry.first === entry.last) return undefined;
    for (const [text, value] of this.#singles) {
      if (entry.first <= value && value <= entry.last) return text;
    }
    return undefined;
  }

  add(entry: Entry): void {
    if (entry.first === entry.last) this.#singles.set(entry.text, entry.first);
    else this.#ranges.set(entry.text, entry);
  }

  delete(text: string): boolean {
    return this.#singles.delete(text) || this.#ranges.delete(text);
  }

  /** Removes an entry and returns it, so that it can be put back. */
  take(text: string, family: Family): Entry | undefined {
    const value = this.#singles.get(text);
    if (value !== undefined) {
      this.#singles.delete(text);
      return { family, text, first: value, last: value };
    }
    const range = this.#ranges.get(text);
    this.#ranges.delete(text);
    return range;
  }

  clear(): void {
    this.#singles.clear();
    this.#ranges.clear();
  }
}

/** Adds entries to `target`, skipping ones already there; throws (changing nothing) on overlaps. */
export function addEntries(target: FamilyEntries, entries: Entry[]): string[] {
  const batch = new FamilyEntries();
  const conflicts: string[] = [];
  const fresh: Entry[] = [];
  for (const entry of entries) {
    if (target.has(entry.text) || batch.has(entry.text)) continue;
    const other = target.overlapping(entry) ?? batch.overlapping(entry);
    if (other !== undefined) {
      conflicts.push(`${entry.text} overlaps ${other}`);
      continue;
    }
    batch.add(entry);
    fresh.push(entry);
  }
  if (conflicts.length > 0) {
    throw netnsError(AddrsetCodes.OVERLAP, `overlapping entries in one set: ${conflicts.slice(0, 10).join(', ')}`);
  }
  for (const entry of fresh) target.add(entry);
  return fresh.map((entry) => entry.text);
}
