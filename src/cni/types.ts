// The shapes the CNI spec puts on the wire (SPEC 1.1.0 §5, and the 0.3/0.4
// result for conversion), shared by the skel, result conversion, IPAM
// delegation, the plumbing helpers and the test harness. Field names are the
// spec's, so a value of these types is printed as is.

/** Every version the spec has defined; a plugin declares which it supports. */
export const SPEC_VERSIONS = ['0.1.0', '0.2.0', '0.3.0', '0.3.1', '0.4.0', '1.0.0', '1.1.0'] as const;
export type SpecVersion = (typeof SPEC_VERSIONS)[number];

export type CniCommand = 'ADD' | 'DEL' | 'CHECK' | 'GC' | 'STATUS' | 'VERSION';

export interface Dns {
  nameservers?: string[];
  domain?: string;
  search?: string[];
  options?: string[];
}

/** An interface a plugin made or configured; `sandbox` is the netns path for a container's. */
export interface Interface {
  name: string;
  mac?: string;
  sandbox?: string;
  /** 1.1.0 */
  mtu?: number;
  /** 1.1.0 */
  socketPath?: string;
  /** 1.1.0 */
  pciID?: string;
}

export interface IpConfig {
  /** Index into `interfaces`; absent in an IPAM plugin's result. */
  interface?: number;
  /** CIDR: the address with its subnet's prefix length, e.g. 10.1.1.2/24. */
  address: string;
  gateway?: string;
}

export interface Route {
  dst: string;
  gw?: string;
  /** 1.1.0 */
  mtu?: number;
  /** 1.1.0 */
  advmss?: number;
  /** 1.1.0 */
  priority?: number;
  /** 1.1.0 */
  table?: number;
  /** 1.1.0 */
  scope?: number;
}

/** A result in the current format (1.0.0 and 1.1.0); the library works in this one and converts at the edges. */
export interface Result {
  cniVersion: string;
  interfaces?: Interface[];
  ips?: IpConfig[];
  routes?: Route[];
  dns?: Dns;
}

/** A 0.3.0 / 0.3.1 / 0.4.0 result: as 1.0 plus `ips[].version`. */
export interface Result040 extends Omit<Result, 'ips'> {
  ips?: (IpConfig & { version: '4' | '6' })[];
}

/** One attachment the runtime still holds (GC's `cni.dev/valid-attachments`). */
export interface Attachment {
  containerID: string;
  ifname: string;
}

/** The network configuration on stdin, with the keys the spec and well-known plugins give meaning to. */
export interface NetConf {
  cniVersion: string;
  name: string;
  type: string;
  capabilities?: Record<string, boolean>;
  ipam?: { type: string; [key: string]: unknown };
  dns?: Dns;
  ipMasq?: boolean;
  mtu?: number;
  runtimeConfig?: Record<string, unknown>;
  args?: Record<string, unknown>;
  /** The previous plugin's result in a chain, in its own version (parse it with its own cniVersion). */
  prevResult?: Record<string, unknown>;
  'cni.dev/valid-attachments'?: Attachment[];
  [key: string]: unknown;
}

/** The spec's error object, printed on stdout with a non-zero exit. */
export interface ErrorObject {
  cniVersion?: string;
  code: number;
  msg: string;
  details?: string;
}
