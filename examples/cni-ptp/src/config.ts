// The network configuration: the official ptp plugin's keys (`ipam`, `mtu`,
// `ipMasq`, `dns`, as Go reads them) plus this plugin's `addressSets` and
// `dataDir`. A conflist written for ptp works with only `type` changed.
import { CniCode, CniError, type Dns, type NetConf } from 'netns/cni';
import { MAX_DELETE_DELAY_MS } from 'netns/addrset';
import { networkTagPrefix } from 'netns/cni/plumbing';

export interface PtpConf extends NetConf {
  ipam: { type: string; [key: string]: unknown };
  /** Both veth ends' MTU; 0 or absent: the kernel's default. */
  mtu?: number;
  /** Masquerade traffic leaving the subnet (nftables, the official plugin's table and chain). */
  ipMasq?: boolean;
  /** The official plugin's choice since 1.6; this one speaks nftables only. */
  ipMasqBackend?: string;
  /** `false` turns the per-attachment address sets off. */
  addressSets?: false | { table?: string; deleteDelayMs?: number };
  /** Where the attachment records GC releases IPAM allocations by are kept (records.ts). */
  dataDir?: string;
}

export interface AddressSetSettings {
  /** The host namespace's nftables table (default: one per network, `cni_ptp_<network hash>`). */
  table: string;
  deleteDelayMs: number;
  /** `addressSets: false`: ADD makes none; DEL and GC still clean up what an earlier configuration made. */
  enabled: boolean;
}

export interface Settings {
  network: string;
  mtu: number | undefined;
  ipMasq: boolean;
  /** Set when the configuration gives any DNS field: it then replaces what IPAM returned, as in Go's ptp. */
  dns: Dns | undefined;
  addressSets: AddressSetSettings;
  /** An absolute path: the attachment records' directory. */
  dataDir: string;
}

const DEFAULT_DELETE_DELAY_MS = 20_000;
const DEFAULT_DATA_DIR = '/var/lib/cni/cni-ptp';
/** Only tables of this plugin: its sets never land in an administrator's table or the masquerade one. */
const TABLE_PREFIX = 'cni_ptp_';

const invalid = (message: string): CniError => new CniError(CniCode.INVALID_NETWORK_CONFIG, message);

/** A key of the configuration, own properties only (the JSON's, never an inherited one). */
function field(config: NetConf, key: string): unknown {
  return Object.hasOwn(config, key) ? config[key] : undefined;
}

function readMtu(value: unknown): number | undefined {
  if (value === undefined || value === null || value === 0) return undefined;
  if (!Number.isInteger(value) || (value as number) < 68 || (value as number) > 65535) throw invalid(`mtu must be an integer from 68 to 65535 (or 0 for the default), got ${JSON.stringify(value)}`);
  return value as number;
}

function readBoolean(key: string, value: unknown): boolean {
  if (value === undefined || value === null) return false;
  if (typeof value !== 'boolean') throw invalid(`${key} must be true or false, got ${JSON.stringify(value)}`);
  return value;
}

function stringList(key: string, value: unknown): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value) || !value.every((item) => typeof item === 'string')) throw invalid(`dns.${key} must be a list of strings`);
  return value as string[];
}

/** Go's dnsConfSet: any field given (an empty list counts) makes the configuration's DNS the result's. */
function readDns(value: unknown): Dns | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value)) throw invalid('dns must be an object');
  const raw = value as Record<string, unknown>;
  const dns: Dns = {};
  for (const key of ['nameservers', 'search', 'options'] as const) {
    const list = Object.hasOwn(raw, key) ? stringList(key, raw[key]) : undefined;
    if (list) dns[key] = list;
  }
  const domain = Object.hasOwn(raw, 'domain') ? raw.domain : undefined;
  if (domain !== undefined && domain !== null && typeof domain !== 'string') throw invalid('dns.domain must be a string');
  if (typeof domain === 'string' && domain !== '') dns.domain = domain;
  return Object.keys(dns).length > 0 ? dns : undefined;
}

function readAddressSets(network: string, value: unknown): AddressSetSettings {
  const defaults = { table: `${TABLE_PREFIX}${networkTagPrefix(network).slice(0, -1)}`, deleteDelayMs: DEFAULT_DELETE_DELAY_MS };
  if (value === false) return { ...defaults, enabled: false };
  if (value !== undefined && (typeof value !== 'object' || value === null || Array.isArray(value))) throw invalid('addressSets must be an object or false');
  const raw = (value ?? {}) as Record<string, unknown>;
  const table = Object.hasOwn(raw, 'table') ? raw.table : defaults.table;
  if (typeof table !== 'string' || !new RegExp(`^${TABLE_PREFIX}[A-Za-z0-9_]{1,56}$`).test(table)) {
    throw invalid(`addressSets.table must be ${TABLE_PREFIX} followed by up to 56 letters, digits or _, got ${JSON.stringify(table)}`);
  }
  const delay = Object.hasOwn(raw, 'deleteDelayMs') ? raw.deleteDelayMs : defaults.deleteDelayMs;
  if (!Number.isSafeInteger(delay) || (delay as number) < 0 || (delay as number) > MAX_DELETE_DELAY_MS) {
    throw invalid(`addressSets.deleteDelayMs must be an integer from 0 to ${MAX_DELETE_DELAY_MS} (100 years), got ${JSON.stringify(delay)}`);
  }
  return { table, deleteDelayMs: delay as number, enabled: true };
}

function readDataDir(value: unknown): string {
  if (value === undefined || value === null) return DEFAULT_DATA_DIR;
  if (typeof value !== 'string' || !value.startsWith('/') || value.includes('\0')) throw invalid(`dataDir must be an absolute path, got ${JSON.stringify(value)}`);
  return value;
}

/** The settings this plugin reads, checked; code 7 (2 for an unsupported ipMasqBackend) otherwise. */
export function readSettings(config: PtpConf): Settings {
  const backend = field(config, 'ipMasqBackend');
  if (backend !== undefined && backend !== 'nftables') {
    throw new CniError(CniCode.UNSUPPORTED_FIELD, `unsupported field: ipMasqBackend ${JSON.stringify(backend)}`, 'this plugin masquerades with nftables only');
  }
  return {
    network: config.name,
    mtu: readMtu(field(config, 'mtu')),
    ipMasq: readBoolean('ipMasq', field(config, 'ipMasq')),
    dns: readDns(field(config, 'dns')),
    addressSets: readAddressSets(config.name, field(config, 'addressSets')),
    dataDir: readDataDir(field(config, 'dataDir')),
  };
}
