// The keys each spec, options and filter object of nl.links / routes /
// addresses / neighbours / nsids / qdiscs / classes / filters takes. Any other
// key is refused before anything is sent: a typo (`tabel`) or another method's
// name for a field (`link` on a route, `mac` on a neighbour) would otherwise be
// dropped, and the call would do something else (a route in the main table) or
// fail with a bare kernel EINVAL. test/unit/netlink-spec-keys.test.ts holds
// each list equal to its TypeScript type, so no key valid by the types is refused.
import { invalid } from './checks.js';
import type { NetnsError } from '../core/errors.js';
import { refuseUnknownKeys } from '../core/known-keys.js';

const LINK_COMMON = ['kind', 'name', 'index', 'mtu', 'mac', 'txQueueLength', 'up', 'master'] as const;

/** links.add(): the keys of each kind beyond the common ones (LinkSpec). */
export const LINK_KIND_KEYS: Readonly<Record<string, readonly string[]>> = {
  veth: ['peer'],
  bridge: [],
  dummy: [],
  vlan: ['parent', 'id'],
  macvlan: ['parent', 'mode'],
  ipvlan: ['parent', 'mode', 'flags'],
};

const QDISC_COMMON = ['link', 'parent', 'handle', 'kind'] as const;

/** qdiscs.add() / replace() / change(): the keys of each kind beyond the common ones (QdiscSpec). */
export const QDISC_KIND_KEYS: Readonly<Record<string, readonly string[]>> = {
  tbf: ['rate', 'burst', 'limit', 'latency'],
  htb: ['defaultClass'],
  netem: ['delay', 'jitter', 'loss', 'duplicate', 'corrupt', 'reorder', 'limit', 'rate'],
  pfifo: ['limit'],
  clsact: [],
  ingress: [],
};

const FILTER_COMMON = ['link', 'parent', 'priority', 'protocol', 'kind'] as const;

/** filters.add(): the keys of each classifier beyond the common ones (FilterSpec). */
export const FILTER_KIND_KEYS: Readonly<Record<string, readonly string[]>> = {
  u32: ['match', 'classid'],
  matchall: ['action'],
};

/** Every other object a public method takes, by the method (and part) as errors name it. */
export const SPEC_KEYS = {
  'links.add veth peer': ['name', 'netns', 'index', 'mtu', 'mac', 'txQueueLength'],
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
  'qdiscs.delete': ['link', 'parent', 'handle'],
  'qdiscs.list': ['link'],
  class: ['link', 'parent', 'classid', 'kind', 'rate', 'ceil', 'burst', 'cburst'],
  'classes.delete': ['link', 'classid'],
  'classes.list': ['link'],
  'u32 match': ['destination', 'source'],
  'filters.delete': ['link', 'parent', 'priority', 'protocol'],
  'filters.list': ['link', 'parent'],
} as const satisfies Record<string, readonly string[]>;

/** The keys of links.add()'s spec for `kind`; undefined for a kind not made here (refused as such later). */
export function linkSpecKeys(kind: unknown): readonly string[] | undefined {
  return kindKeys(LINK_KIND_KEYS, LINK_COMMON, kind);
}

/** The keys of qdiscs.add()'s spec for `kind`; undefined for a kind not made here (refused as such later). */
export function qdiscSpecKeys(kind: unknown): readonly string[] | undefined {
  return kindKeys(QDISC_KIND_KEYS, QDISC_COMMON, kind);
}

/** The keys of filters.add()'s spec for `kind`; undefined for a classifier not made here (refused as such later). */
export function filterSpecKeys(kind: unknown): readonly string[] | undefined {
  return kindKeys(FILTER_KIND_KEYS, FILTER_COMMON, kind);
}

function kindKeys(table: Readonly<Record<string, readonly string[]>>, common: readonly string[], kind: unknown): readonly string[] | undefined {
  if (typeof kind !== 'string' || !Object.hasOwn(table, kind)) return undefined;
  return [...common, ...table[kind]!];
}

/**
 * Refuses (`error`, netlink's NETLINK_INVALID by default) the first own key of
 * `spec` that `known` lacks, naming `method`, the key, the likely one and the
 * known ones. Anything not a plain object passes: each method refuses those its own way.
 */
export function checkKeys(spec: unknown, known: readonly string[], method: string, error: (message: string) => NetnsError = invalid): void {
  refuseUnknownKeys(spec, known, method, error);
}
