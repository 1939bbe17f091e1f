// The shapes the CNI spec puts on the wire (SPEC 1.1.0 §5, and the 0.3/0.4
// result for conversion), shared by the skel, result conversion, IPAM
// delegation, the plumbing helpers and the test harness. Field names are the
// spec's, so a value of these types is printed as is.

/** Every version the spec has defined; a plugin declares which it supports. */
export const SPEC_VERSIONS = ['0.1.0', '0.2.0', '0.3.0', '0.3.1', '0.4.0', '1.0.0', '1.1.0'] as const;
/** One of SPEC_VERSIONS, e.g. '1.1.0'. */
export type SpecVersion = (typeof SPEC_VERSIONS)[number];

/** CNI_COMMAND: the operation the runtime asks of a plugin. */
export type CniCommand = 'ADD' | 'DEL' | 'CHECK' | 'GC' | 'STATUS' | 'VERSION';

/** DNS settings, in a configuration or a result (resolv.conf's terms). */
export interface Dns {
  /** Name server addresses, in order of preference. */
  nameservers?: string[];
  /** The local domain, for short names. */
  domain?: string;
  /** Search domains, in order. */
  search?: string[];
  /** Resolver options, e.g. 'ndots:5'. */
  options?: string[];
}

/** An interface a plugin made or configured; `sandbox` is the netns path for a container's. */
export interface Interface {
  /** The interface's name, e.g. eth0 inside the container. */
  name: string;
  /** Its hardware address, e.g. 02:42:ac:11:00:02. */
  mac?: string;
  /** For an interface inside the container: its CNI_NETNS path; absent for a host interface. */
  sandbox?: string;
  /** 1.1.0 */
  mtu?: number;
  /** 1.1.0 */
  socketPath?: string;
  /** 1.1.0 */
  pciID?: string;
}

/** One address a result assigns. */
export interface IpConfig {
  /** Index into `interfaces`; absent in an IPAM plugin's result. */
  interface?: number;
  /** CIDR: the address with its subnet's prefix length, e.g. 10.1.1.2/24. */
  address: string;
  /** The default gateway for this address's subnet, without a prefix length. */
  gateway?: string;
}

/** A route a result asks for inside the container. */
export interface Route {
  /** The destination, CIDR (0.0.0.0/0 for a default route). */
  dst: string;
  /** The next hop; absent: the plugin's default (configureInterface takes the first gateway of the route's family among the result's ips). */
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
  /** The version the result is written in; convertResult sets it to the configuration's. */
  cniVersion: string;
  /** Interfaces the plugin made, host ends included; `ips[].interface` indexes into it. */
  interfaces?: Interface[];
  /** Addresses assigned (by IPAM), each with its gateway. */
  ips?: IpConfig[];
  /** Routes to add inside the container. */
  routes?: Route[];
  /** DNS settings for the container. */
  dns?: Dns;
}

/** A 0.3.0 / 0.3.1 / 0.4.0 result: as 1.0 plus `ips[].version`. */
export interface Result040 extends Omit<Result, 'ips'> {
  /** As Result's, each with its family, '4' or '6'. */
  ips?: (IpConfig & {
    /** The address's family. */
    version: '4' | '6';
  })[];
}

/** One attachment the runtime still holds (GC's `cni.dev/valid-attachments`). */
export interface Attachment {
  /** The container's id, CNI_CONTAINERID of the ADD that made the attachment. */
  containerID: string;
  /** The interface name in the container, CNI_IFNAME of that ADD. */
  ifname: string;
}

/** The network configuration on stdin, with the keys the spec and well-known plugins give meaning to. */
export interface NetConf {
  /** The spec version the runtime speaks for this call; the result is printed in it. Missing means 0.1.0. */
  cniVersion: string;
  /** The network's name (a letter or digit, then letters, digits, _ . -), checked before a handler runs. */
  name: string;
  /** The plugin's executable name, as found in CNI_PATH. */
  type: string;
  /** Capabilities the plugin declares (e.g. portMappings: true): the runtime then passes them in runtimeConfig. */
  capabilities?: Record<string, boolean>;
  /** The IPAM plugin to delegate addressing to (`type`), with its own keys; see execAdd. */
  ipam?: {
    /** The IPAM plugin's executable name, looked up in CNI_PATH (e.g. host-local). */
    type: string;
    [key: string]: unknown;
  };
  /** DNS settings the network asks for. */
  dns?: Dns;
  /** Well-known plugins' key: masquerade traffic leaving the container's subnet (see addMasquerade). */
  ipMasq?: boolean;
  /** Well-known plugins' key: the MTU of the interfaces made. */
  mtu?: number;
  /** Capability arguments the runtime passes for declared capabilities; runtimeConfig() reads the well-known ones. */
  runtimeConfig?: Record<string, unknown>;
  /** Arbitrary per-container arguments from the runtime (CONVENTIONS.md `args`). */
  args?: Record<string, unknown>;
  /** The previous plugin's result in a chain, in its own version (parse it with its own cniVersion). */
  prevResult?: Record<string, unknown>;
  /** GC only: the attachments the runtime still holds; validAttachments() reads it. */
  'cni.dev/valid-attachments'?: Attachment[];
  [key: string]: unknown;
}

/** The spec's error object, printed on stdout with a non-zero exit. */
export interface ErrorObject {
  /** The configuration's version (the spec asks for it; Go's plugins leave it out). */
  cniVersion?: string;
  /** The CNI error code: CniCode's values, or the plugin's own (100 and up). */
  code: number;
  /** A short message. */
  msg: string;
  /** A longer explanation, when there is one. */
  details?: string;
}
