// Refusing keys an options object does not take, with the key most likely
// meant: a typo (`tabel`) or another spec's name for a field (`link` where a
// route says `device`) would otherwise be dropped, and the call would do
// something else than asked. Used by netlink's specs, createTestNetwork and watch().
import type { NetnsError } from './errors.js';

// A name that means something in a neighbouring spec: the likeliest slip.
const HINTS: Readonly<Record<string, string>> = { link: 'device', dev: 'device', device: 'link', mac: 'lladdr', lladdr: 'mac', dst: 'destination', via: 'gateway' };

// A key longer than this is cut in the message (it may be anything a caller parsed).
const MAX_SHOWN = 64;

/**
 * Throws `error(message)` for the first own key of `value` that `known` lacks,
 * the message naming `what`, the key, the likely one and the known ones.
 * Anything not a plain object passes: callers refuse those their own way.
 */
export function refuseUnknownKeys(value: unknown, known: readonly string[], what: string, error: (message: string) => NetnsError): void {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return;
  for (const key of Object.keys(value)) {
    if (known.includes(key)) continue;
    const hint = suggestion(key, known);
    const shown = key.length > MAX_SHOWN ? `${key.slice(0, MAX_SHOWN)}…` : key;
    throw error(`${what}: unknown key ${JSON.stringify(shown)}${hint ? ` (did you mean ${hint}?)` : ''}; known: ${known.join(', ')}`);
  }
}

/** The known key `key` was likely meant as: another spec's name for it, or the nearest within two edits. */
function suggestion(key: string, known: readonly string[]): string | undefined {
  const mapped = Object.hasOwn(HINTS, key) ? HINTS[key] : undefined; // not Object.prototype's (constructor)
  if (mapped !== undefined && known.includes(mapped)) return mapped;
  let best: string | undefined;
  let bestDistance = 3; // more than two edits away is no likely slip
  for (const k of known) {
    // Stryker disable next-line EqualityOperator: with > a key exactly bestDistance longer is measured too, and is never nearer: only time differs
    if (Math.abs(key.length - k.length) >= bestDistance) continue; // that many edits at least: no table to build
    const distance = editDistance(key.toLowerCase(), k.toLowerCase());
    if (distance < bestDistance && distance < k.length) [best, bestDistance] = [k, distance];
  }
  return best;
}

/** Levenshtein distance, with a transposition of neighbours (tabel, nmae) counted as one edit (optimal string alignment). */
export function editDistance(a: string, b: string): number {
  // Row 0 is 0..b.length; every other row starts i and is filled left to right.
  const d = Array.from({ length: a.length + 1 }, (_, i) => (i === 0 ? Array.from({ length: b.length + 1 }, (_, j) => j) : [i]));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, d[i - 2]![j - 2]! + 1);
      d[i]![j] = best;
    }
  }
  return d[a.length]![b.length]!;
}
