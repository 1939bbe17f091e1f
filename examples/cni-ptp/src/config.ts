// The network configuration this plugin accepts on stdin.
import { isIPv4 } from 'node:net';
import { CniCodes, CniError, SUPPORTED_VERSIONS } from './protocol.js';

export interface PtpConfig {
  cniVersion: string;
  name: string;
  type: string;
  /** The container's address with prefix length, e.g. 10.22.0.2/24. */
  address: string;
  /** The host side's address, also the container's default gateway. */
  gateway: string;
  /** Where the host end of the veth pair goes (default: the plugin's own namespace). */
  hostNetns?: string;
  /** The nftables table of per-attachment address sets, in the host namespace. */
  addressSets: { table: string; deleteDelayMs?: number };
  prevResult?: PtpResult;
  'cni.dev/valid-attachments'?: { containerID: string; ifname: string }[];
}

export interface PtpResult {
  cniVersion: string;
  interfaces: { name: string; mac: string; sandbox?: string }[];
  ips: { address: string; gateway: string; interface: number }[];
  routes: { dst: string; gw: string }[];
  dns: Record<string, never>;
}

function fail(message: string): never {
  throw new CniError(CniCodes.INVALID_CONFIG, message);
}

export function parseConfig(text: string, needsAddress: boolean): PtpConfig {
  let raw: Record<string, unknown>;
  try {
    raw = JSON.parse(text) as Record<string, unknown>;
  } catch (error) {
    throw new CniError(CniCodes.DECODE_FAILURE, 'network configuration is not valid JSON', String(error));
  }
  if (typeof raw !== 'object' || raw === null) fail('network configuration must be a JSON object');
  const version = raw.cniVersion;
  if (typeof version !== 'string' || !SUPPORTED_VERSIONS.includes(version)) {
    throw new CniError(CniCodes.INCOMPATIBLE_VERSION, `unsupported cniVersion ${JSON.stringify(version)}; supported: ${SUPPORTED_VERSIONS.join(', ')}`);
  }
  if (typeof raw.name !== 'string' || raw.name === '') fail('name is required');
  const sets = raw.addressSets as { table?: unknown; deleteDelayMs?: unknown } | undefined;
  if (!sets || typeof sets.table !== 'string') fail('addressSets.table is required');
  if (needsAddress) {
    const [ip, length] = String(raw.address ?? '').split('/');
    if (!isIPv4(ip ?? '') || !/^\d+$/.test(length ?? '') || Number(length) > 30) fail('address must be an IPv4 address with a prefix length up to /30');
    if (typeof raw.gateway !== 'string' || !isIPv4(raw.gateway)) fail('gateway must be an IPv4 address');
  }
  if (raw.hostNetns !== undefined && typeof raw.hostNetns !== 'string') fail('hostNetns must be a path or a name');
  return raw as unknown as PtpConfig;
}
