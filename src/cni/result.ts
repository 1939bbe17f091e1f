// Results across spec versions. The library holds a result in one shape, the
// current one (1.x, types.ts's Result, labelled CURRENT_VERSION), and meets
// other versions only at the edges: parseResult reads any version by the
// result's OWN cniVersion (a 0.4.0 prevResult under a 1.0.0 config is read as
// 0.4.0, the mistake of cni#862), and convertResult writes the shape of the
// version a configuration asked for.
import { isIP } from '../core/ip.js';
import { assertConfig, CniCode, CniError } from './errors.js';
import type { Dns, Interface, IpConfig, NetConf, Result, Result040, Route } from './types.js';
import { CURRENT_VERSION, isSpecVersion, versionOf } from './version.js';

/** A 0.1.0 / 0.2.0 address: one per family, with that family's routes. */
export interface IpConfig020 {
  /** The address, CIDR (e.g. 10.1.1.2/24). */
  ip: string;
  /** The gateway, without a prefix length. */
  gateway?: string;
  /** Routes in this family: destination CIDR and optional next hop. */
  routes?: {
    /** The destination, CIDR. */
    dst: string;
    /** The next hop; when absent, the plugin's default gateway. */
    gw?: string;
  }[];
}

/** A 0.1.0 / 0.2.0 result: at most one IPv4 and one IPv6 address, no interfaces. */
export interface Result020 {
  /** '0.1.0' or '0.2.0'. */
  cniVersion: string;
  /** The IPv4 address and routes. */
  ip4?: IpConfig020;
  /** The IPv6 address and routes. */
  ip6?: IpConfig020;
  /** DNS settings. */
  dns?: Dns;
}

/** A result as some version puts it on the wire. */
export type WireResult = Result | Result040 | Result020;

const OLD_VERSIONS = ['0.1.0', '0.2.0'];
const FIELDS_1_1 = { interface: ['mtu', 'socketPath', 'pciID'], route: ['mtu', 'advmss', 'priority', 'table', 'scope'] } as const;

type Json = Record<string, unknown>;

function fail(where: string, what: string): never {
  throw new CniError(CniCode.DECODING_FAILURE, `${where} ${what}`);
}

function object(value: unknown, where: string): Json {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) fail(where, 'must be an object');
  return value as Json;
}

function list(value: unknown, where: string): unknown[] {
  if (!Array.isArray(value)) fail(where, 'must be an array');
  return value;
}

/** An own string field (a polluted Object.prototype must not supply one), or undefined when absent. */
function text(json: Json, key: string, where: string): string | undefined {
  if (!Object.hasOwn(json, key) || json[key] === undefined) return undefined;
  if (typeof json[key] !== 'string') fail(`${where}.${key}`, 'must be a string');
  return json[key];
}

function integer(json: Json, key: string, where: string): number | undefined {
  if (!Object.hasOwn(json, key) || json[key] === undefined) return undefined;
  const value = json[key];
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) fail(`${where}.${key}`, 'must be a non-negative integer');
  return value;
}

function field(json: Json, key: string): unknown {
  return Object.hasOwn(json, key) ? json[key] : undefined;
}

/** 4 or 6 for "address/prefix" (prefix within the family's bits), else a decoding failure. */
function cidrFamily(cidr: string, where: string): 4 | 6 {
  const [ip, prefix, extra] = cidr.split('/');
  const family = isIP(ip ?? '');
  const bits = family === 4 ? 32 : 128;
  if (family === 0 || extra !== undefined || !/^\d{1,3}$/.test(prefix ?? '') || Number(prefix) > bits) {
    fail(where, `must be an address with a prefix length, got ${JSON.stringify(cidr)}`);
  }
  return family as 4 | 6;
}

function ipAddress(json: Json, key: string, where: string): string | undefined {
  const value = text(json, key, where);
  if (value !== undefined && isIP(value) === 0) fail(`${where}.${key}`, `must be an IP address, got ${JSON.stringify(value)}`);
  return value;
}

function withDefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

function readStrings(json: Json, key: string, where: string): string[] | undefined {
  const value = field(json, key);
  if (value === undefined) return undefined;
  return list(value, `${where}.${key}`).map((item, i) => {
    if (typeof item !== 'string') fail(`${where}.${key}[${i}]`, 'must be a string');
    return item;
  });
}

function readDns(value: unknown, where: string): Dns {
  const json = object(value, where);
  return withDefined({
    nameservers: readStrings(json, 'nameservers', where),
    domain: text(json, 'domain', where),
    search: readStrings(json, 'search', where),
    options: readStrings(json, 'options', where),
  });
}

function readRoute(value: unknown, where: string): Route {
  const json = object(value, where);
  const dst = text(json, 'dst', where) ?? fail(`${where}.dst`, 'is required');
  cidrFamily(dst, `${where}.dst`);
  const route: Route = { dst, ...withDefined({ gw: ipAddress(json, 'gw', where) }) };
  for (const key of FIELDS_1_1.route) {
    const number = integer(json, key, where);
    if (number !== undefined) route[key] = number;
  }
  return route;
}

function readInterface(value: unknown, where: string): Interface {
  const json = object(value, where);
  const name = text(json, 'name', where) ?? fail(`${where}.name`, 'is required');
  return withDefined({
    name,
    mac: text(json, 'mac', where),
    sandbox: text(json, 'sandbox', where),
    mtu: integer(json, 'mtu', where),
    socketPath: text(json, 'socketPath', where),
    pciID: text(json, 'pciID', where),
  });
}

/** A 0.3/0.4 `version`, if given, must agree with the address; 1.x has none and it is not kept. */
function readIp(value: unknown, where: string): IpConfig {
  const json = object(value, where);
  const address = text(json, 'address', where) ?? fail(`${where}.address`, 'is required');
  const family = cidrFamily(address, `${where}.address`);
  const version = text(json, 'version', where);
  if (version !== undefined && version !== String(family)) fail(`${where}.version`, `is ${JSON.stringify(version)} for an IPv${family} address`);
  return withDefined({ interface: integer(json, 'interface', where), address, gateway: ipAddress(json, 'gateway', where) });
}

/** `json[key]` read item by item with `read`, or undefined when absent. */
function readList<T>(json: Json, key: string, where: string, read: (value: unknown, where: string) => T): T[] | undefined {
  const value = field(json, key);
  return value === undefined ? undefined : list(value, `${where}.${key}`).map((v, i) => read(v, `${where}.${key}[${i}]`));
}

function readCurrent(json: Json, where: string): Result {
  if (Object.hasOwn(json, 'ip4') || Object.hasOwn(json, 'ip6')) fail(where, 'has ip4/ip6, which only 0.1.0 and 0.2.0 results have (0.3.0 and later use ips)');
  const dns = field(json, 'dns');
  return withDefined({
    cniVersion: CURRENT_VERSION,
    interfaces: readList(json, 'interfaces', where, readInterface),
    ips: readList(json, 'ips', where, readIp),
    routes: readList(json, 'routes', where, readRoute),
    dns: dns === undefined ? undefined : readDns(dns, `${where}.dns`),
  });
}

function readOld(json: Json, where: string): Result {
  for (const key of ['interfaces', 'ips', 'routes']) {
    if (Object.hasOwn(json, key)) fail(where, `has ${key}, which 0.1.0 and 0.2.0 results do not (they use ip4 and ip6)`);
  }
  const ips: IpConfig[] = [];
  const routes: Route[] = [];
  for (const key of ['ip4', 'ip6']) {
    if (field(json, key) === undefined) continue;
    const ip = object(json[key], `${where}.${key}`);
    const address = text(ip, 'ip', `${where}.${key}`) ?? fail(`${where}.${key}.ip`, 'is required');
    cidrFamily(address, `${where}.${key}.ip`);
    ips.push(withDefined({ address, gateway: ipAddress(ip, 'gateway', `${where}.${key}`) }));
    routes.push(...(readList(ip, 'routes', `${where}.${key}`, readRoute) ?? []));
  }
  const dns = field(json, 'dns');
  return withDefined({ cniVersion: CURRENT_VERSION, ips, routes, dns: dns === undefined ? undefined : readDns(dns, `${where}.dns`) });
}

/**
 * Reads a result of any spec version (a parsed JSON value) by its own
 * `cniVersion`, or `fallbackVersion` when it has none (an IPAM plugin may
 * leave it out; the configuration's version is then assumed, as Go's invoke
 * does). Returns a fresh result in the current shape. Malformed: code 6; a
 * version the spec does not define: code 1.
 */
export function parseResult(value: unknown, fallbackVersion: string = CURRENT_VERSION, where = 'result'): Result {
  const json = object(value, where);
  const version = field(json, 'cniVersion') === undefined || json.cniVersion === '' ? fallbackVersion : versionOf(json);
  if (!isSpecVersion(version)) throw new CniError(CniCode.INCOMPATIBLE_VERSION, `${where} has cniVersion ${JSON.stringify(version)}, which no spec defines`);
  return OLD_VERSIONS.includes(version) ? readOld(json, where) : readCurrent(json, where);
}

function withoutFields<T extends object>(value: T, keys: readonly string[]): T {
  return Object.fromEntries(Object.entries(value).filter(([key]) => !keys.includes(key))) as T;
}

function writeBefore1_1(result: Result): Result {
  return withDefined({
    ...result,
    interfaces: result.interfaces?.map((i) => withoutFields(i, FIELDS_1_1.interface)),
    routes: result.routes?.map((r) => withoutFields(r, FIELDS_1_1.route)),
  });
}

function write040(result: Result, version: string): Result040 {
  const older = writeBefore1_1(result);
  const ips = older.ips?.map((ip) => ({ version: String(cidrFamily(ip.address, 'address')) as '4' | '6', ...ip }));
  return withDefined({ ...older, cniVersion: version, ips });
}

/** 0.1/0.2 hold the first address of each family, and only routes of a family that has one. */
function write020(result: Result, version: string): Result020 {
  const out: Result020 = { cniVersion: version };
  for (const ip of result.ips ?? []) {
    const key = cidrFamily(ip.address, 'address') === 4 ? 'ip4' : 'ip6';
    out[key] ??= withDefined({ ip: ip.address, gateway: ip.gateway });
  }
  if (!out.ip4 && !out.ip6) {
    throw new CniError(CniCode.INCOMPATIBLE_VERSION, `the result cannot be given in cniVersion ${version}: it has no IP address, which that version requires`);
  }
  for (const route of result.routes ?? []) {
    const target = cidrFamily(route.dst, 'dst') === 4 ? out.ip4 : out.ip6;
    if (target) (target.routes ??= []).push(withDefined({ dst: route.dst, gw: route.gw }));
  }
  if (result.dns) out.dns = result.dns;
  return out;
}

/**
 * A result of any version, as `toVersion` puts it on the wire: 1.1.0 as is;
 * 1.0.0 without the 1.1 fields; 0.3.x/0.4.0 also with `ips[].version` by
 * address family; 0.1.0/0.2.0 as ip4/ip6 (code 1 if there is no address).
 */
export function convertResult(result: WireResult, toVersion: string): WireResult {
  if (!isSpecVersion(toVersion)) throw new CniError(CniCode.INCOMPATIBLE_VERSION, `cniVersion ${JSON.stringify(toVersion)} is not one the spec defines`);
  const current = parseResult(result);
  if (toVersion === '1.1.0') return current;
  if (toVersion === '1.0.0') return { ...writeBefore1_1(current), cniVersion: toVersion };
  if (OLD_VERSIONS.includes(toVersion)) return write020(current, toVersion);
  return write040(current, toVersion);
}

/** The configuration's prevResult read by its own cniVersion (else the configuration's), or undefined on the first ADD of a chain. */
export function prevResultOf(config: NetConf): Result | undefined {
  assertConfig(config, 'prevResultOf');
  const prev = field(config, 'prevResult');
  return prev === undefined ? undefined : parseResult(prev, versionOf(config), 'prevResult');
}

/**
 * What ADD returns when the plugin only adds to the chain (a firewall, a
 * bandwidth limit) and leaves the result as the previous plugin made it: the
 * prevResult, which pluginMain prints in the configuration's version.
 * Without one: code 7, since such a plugin cannot come first in a chain.
 */
export function passThrough(config: NetConf): Result {
  const prev = prevResultOf(config);
  if (!prev) throw new CniError(CniCode.INVALID_NETWORK_CONFIG, 'prevResult is required: this plugin only adds to the result of a plugin before it in the chain');
  return prev;
}
