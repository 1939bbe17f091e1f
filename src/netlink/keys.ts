// The keys each spec, options and filter object of nl.links / routes /
// addresses / neighbours / nsids takes. Any other key is refused before
// anything is sent: a typo (`tabel`) or another method's name for a field
// (`link` on a route, `mac` on a neighbour) would otherwise be dropped, and
// the call would do something else (a route in the main table) or fail with a
// bare kernel EINVAL. test/unit/netlink-spec-keys.test.ts holds each list
// equal to its TypeScript type, so no key valid by the types is refused.
import { invalid } from './checks.js';
import type { NetnsError } from '../core/errors.js';

const LINK_COMMON = ['kind', 'name', 'mtu', 'mac', 'txQueueLength', 'up', 'master'] as const;

/** links.add(): the keys of each kind beyond the common ones (LinkSpec). */
export const LINK_KIND_KEYS: Readonly<Record<string, readonly string[]>> = {
  veth: ['peer'],
  bridge: [],
  dummy: [],
  vlan: ['parent', 'id'],
  macvlan: ['parent', 'mode'],
  ipvlan: ['parent', 'mode', 'flags'],
};

/** Every other object a public method takes, by the method (and part) as errors name it. */
export const SPEC_KEYS = {
  'links.add veth peer': ['name', 'netns', 'mtu', 'mac', 'txQueueLength'],
  'links.set': ['up', 'mtu', 'mac', 'name', 'master'],
  'links.move': ['name'],
  route: ['destination', 'family', 'gateway', 'device', 'source', 'scope', 'metric', 'table', 'protocol', 'type', 'onlink', 'multipath', 'mtu', 'advmss'],
  'next hop': ['gateway', 'device', 'weight', 'onlink'],
  'routes.list': ['family', 'table'],
  address: ['link', 'address', 'peer', 'broadcast', 'scope', 'flags', 'label', 'validLifetime', 'preferredLifetime'],
  'addresses.delete': ['link', 'address', 'peer'],
  'addresses.list': ['link', 'family'],
  neighbour: ['link', 'address', 'lladdr', 'state', 'flags', 'proxy', 'family'],
  'neighbours.delete': ['link', 'address', 'proxy'],
  'neighbours.list': ['link', 'family', 'proxy'],
  'nsids.get': ['pid'],
  'nsids.set': ['pid'],
  'nsids.list': ['targetNsid', 'nsid'],
} as const satisfies Record<string, readonly string[]>;

/** The keys of links.add()'s spec for `kind`; undefined for a kind not made here (refused as such later). */
export function linkSpecKeys(kind: unknown): readonly string[] | undefined {
  if (typeof kind !== 'string' || !Object.hasOwn(LINK_KIND_KEYS, kind)) return undefined;
  return [...LINK_COMMON, ...LINK_KIND_KEYS[kind]!];
}

// A name that means something in a neighbouring spec: the likeliest slip.
const HINTS: Readonly<Record<string, string>> = { link: 'device', dev: 'device', device: 'link', mac: 'lladdr', lladdr: 'mac', dst: 'destination', via: 'gateway' };

/**
 * Refuses (`error`, netlink's NETLINK_INVALID by default) the first own key of
 * `spec` that `known` lacks, naming `method`, the key and the known ones.
 * Anything not a plain object passes: each method refuses those its own way.
 */
export function checkKeys(spec: unknown, known: readonly string[], method: string, error: (message: string) => NetnsError = invalid): void {
  if (typeof spec !== 'object' || spec === null || Array.isArray(spec)) return;
  for (const key of Object.keys(spec)) {
    if (known.includes(key)) continue;
    const hint = suggestion(key, known);
    throw error(`${method}: unknown key ${JSON.stringify(key)}${hint ? ` (did you mean ${hint}?)` : ''}; known: ${known.join(', ')}`);
  }
}

/** The known key `key` was likely meant as: another spec's name for it, or the nearest within two edits. */
function suggestion(key: string, known: readonly string[]): string | undefined {
  const mapped = Object.hasOwn(HINTS, key) ? HINTS[key] : undefined; // not Object.prototype's (constructor)
  if (mapped !== undefined && known.includes(mapped)) return mapped;
  let best: string | undefined;
  let bestDistance = 3; // more than two edits away is no likely slip
  for (const k of known) {
    const distance = editDistance(key.toLowerCase(), k.toLowerCase());
    if (distance < bestDistance && distance < k.length) [best, bestDistance] = [k, distance];
  }
  return best;
}

/** Levenshtein distance, with a transposition (tabel, nmae) counted as one edit. */
function editDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...new Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
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
