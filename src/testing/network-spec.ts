// createTestNetwork's spec, checked whole before anything is made: a bad spec
// must never leave half a network behind, nor be built as something else
// (a string's characters taken as host keys, an address ignored).
import { ErrorCodes, kindOf, netnsError, shownValue } from '../core/errors.js';
import { refuseUnknownKeys } from '../core/known-keys.js';
import { assertValidName } from '../core/names.js';
import { own } from '../core/own.js';
import { parsePrefix } from '../netlink/validate.js';
import { DEFAULT_PREFIX, ownerStem } from './owner.js';

// The shapes of network.ts's TestNetworkSpec, restated: importing them from there would make a cycle.
type TestHostSpec = { addr?: string };
type TestLinkSpec = [string, string] | [string, string, Record<string, string>];
/** A spec as checkedSpec returns it: own properties only, every default filled in. */
export interface CheckedSpec {
  hosts: Record<string, TestHostSpec>;
  links: TestLinkSpec[];
  prefix: string;
}

const HOST_KEY = /^[A-Za-z0-9_-]{1,32}$/;
const HOST_OPTIONS = ['addr'];
const SPEC_OPTIONS = ['hosts', 'links', 'prefix'];

const invalid = (message: string, cause?: unknown) => netnsError(ErrorCodes.INVALID_ARG, message, cause === undefined ? {} : { cause });
const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** An address with its prefix length, as the netlink request will take it; refused here rather than half-way. */
function checkCidr(cidr: unknown, what: string): string {
  try {
    parsePrefix(cidr, what);
  } catch (error) {
    throw invalid(error instanceof Error ? error.message : `bad ${what}`, error);
  }
  return cidr as string;
}

// Checked parts have no prototype: a host named `constructor` reads as itself, and a
// polluted Object.prototype.addr gives no host an address.
const bare = <T>(): Record<string, T> => Object.create(null) as Record<string, T>;

function checkHosts(hosts: unknown): Record<string, TestHostSpec> {
  if (!isRecord(hosts)) throw invalid(`hosts must be an object of host specs by key, got ${kindOf(hosts)}`);
  const checked = bare<TestHostSpec>();
  for (const [key, spec] of Object.entries(own(hosts))) {
    if (!HOST_KEY.test(key) || key === '__proto__') throw invalid(`host key ${JSON.stringify(key)} must match ${HOST_KEY} and not be __proto__`);
    if (!isRecord(spec)) throw invalid(`host ${key} must be an object ({} or { addr }), got ${kindOf(spec)}`);
    const { addr } = own(spec) as { addr?: unknown };
    refuseUnknownKeys(spec, HOST_OPTIONS, `createTestNetwork: host ${key}`, invalid);
    checked[key] = Object.assign(bare(), addr === undefined ? {} : { addr: checkCidr(addr, `host ${key}'s addr`) });
  }
  return checked;
}

function checkLink(link: unknown, hosts: Record<string, TestHostSpec>): TestLinkSpec {
  if (!Array.isArray(link) || link.length < 2 || link.length > 3) {
    throw invalid(`a link is [hostA, hostB] or [hostA, hostB, { host: addr }], got ${kindOf(link)}`);
  }
  const [a, b, addresses] = link as unknown[];
  for (const end of [a, b]) {
    if (typeof end !== 'string' || !Object.hasOwn(hosts, end)) throw invalid(`link names unknown host ${shownValue(end, String)}`);
  }
  if (a === b) throw invalid(`a link joins two different hosts, not ${String(a)} to itself`);
  if (addresses === undefined) return [a as string, b as string];
  if (!isRecord(addresses)) throw invalid(`a link's addresses must be an object by host, got ${kindOf(addresses)}`);
  const checked = bare<string>();
  for (const [host, cidr] of Object.entries(own(addresses))) {
    if (host !== a && host !== b) throw invalid(`link ${String(a)}-${String(b)} gives an address to ${JSON.stringify(host)}, not one of its ends`);
    checked[host] = checkCidr(cidr, `link ${String(a)}-${String(b)}'s address for ${host}`);
  }
  return [a as string, b as string, checked];
}

/**
 * The spec as its own properties, every part checked: ERR_NETNS_INVALID_ARG
 * (ERR_NETNS_INVALID_NAME for a prefix no namespace name can start with). A
 * host's addr goes on its first link: on a host with no link it is refused,
 * since nothing would carry it.
 */
export function checkedSpec(spec: unknown): CheckedSpec {
  if (!isRecord(spec)) throw invalid(`createTestNetwork takes a spec { hosts, links?, prefix? }, got ${kindOf(spec)}`);
  const { hosts: given, links, prefix = DEFAULT_PREFIX } = own(spec) as { hosts?: unknown; links?: unknown; prefix?: unknown };
  refuseUnknownKeys(spec, SPEC_OPTIONS, 'createTestNetwork', invalid);
  const hosts = checkHosts(given);
  if (links !== undefined && !Array.isArray(links)) throw invalid(`links must be an array of [hostA, hostB] pairs, got ${kindOf(links)}`);
  const checkedLinks = (links ?? []).map((link: unknown) => checkLink(link, hosts));
  for (const [key, host] of Object.entries(hosts)) {
    if (host.addr !== undefined && !checkedLinks.some(([a, b]) => a === key || b === key)) {
      throw invalid(`host ${key} has an addr but no link to put it on (addr goes on a host's first link, eth0)`);
    }
  }
  if (typeof prefix !== 'string') throw invalid(`prefix must be a string, got ${kindOf(prefix)}`);
  for (const key of Object.keys(hosts)) assertValidName(`${prefix}${ownerStem('000000')}-${key}`); // as network.ts names them
  return { hosts, links: checkedLinks, prefix };
}
