// What a runtime passes besides the configuration's own keys: CNI_ARGS (the
// old "K=V;K=V" channel, kept for runtimes that still use it), runtimeConfig
// (the capability arguments the plugin declared it takes) and GC's list of
// attachments still valid.
import { ErrorCodes, netnsError } from '../core/errors.js';
import { isIP } from '../core/ip.js';
import { assertConfig, CniCode, CniError } from './errors.js';
import type { Attachment, NetConf } from './types.js';

/** How a declared CNI_ARGS key's value is read: as is, as an IP address, or as 1/true/0/false (any case). */
export type ArgKind = 'string' | 'ip' | 'boolean';

/** The keys a plugin understands and their kinds, e.g. `{ IP: 'ip', K8S_POD_NAME: 'string' }`. */
export type ArgSpec = Record<string, ArgKind>;

/** The parsed CNI_ARGS: each declared key that was given, typed by its kind. */
export type CniArgs<S extends ArgSpec> = { [K in keyof S]?: S[K] extends 'boolean' ? boolean : string } & {
  /** The runtime's IgnoreUnknown=1 or true: keys the spec does not declare were skipped, not refused. */
  IgnoreUnknown?: boolean;
};

const KINDS: readonly string[] = ['string', 'ip', 'boolean'];

function invalid(message: string): CniError {
  return new CniError(CniCode.INVALID_ENVIRONMENT, `CNI_ARGS: ${message}`);
}

function checkSpec(spec: unknown): asserts spec is ArgSpec {
  const valid =
    typeof spec === 'object' && spec !== null && Object.values(spec).every((kind) => KINDS.includes(kind as string)); // includes compares by ===: nothing else matches
  if (!valid) throw netnsError(ErrorCodes.INVALID_ARG, `the CNI_ARGS spec maps each key to one of ${KINDS.join(', ')}`);
}

function readValue(kind: ArgKind, pair: string, value: string): string | boolean {
  if (kind === 'string') return value;
  if (kind === 'ip') {
    if (isIP(value) === 0) throw invalid(`${JSON.stringify(pair)}: the value is not an IP address`);
    return value;
  }
  const lower = value.toLowerCase();
  if (lower === '1' || lower === 'true') return true;
  if (lower === '0' || lower === 'false') return false;
  throw invalid(`${JSON.stringify(pair)}: the value is not 1, true, 0 or false`);
}

/**
 * Parses CNI_ARGS ("K=V;K=V") into the keys `spec` declares. A piece that is
 * not exactly one `=` (so a value cannot hold `=`, and a trailing `;` fails)
 * and a bad value are code 4. Keys are case-sensitive; unknown keys are code
 * 4, all named together, unless the runtime passed IgnoreUnknown=1 or true
 * (runtimes add keys such as K8S_POD_NAME that most plugins do not know).
 * Empty or undefined: {}. Where the configuration's `args.cni` has an
 * equivalent key, the conventions say to use that one and ignore this.
 */
export function parseCniArgs<S extends ArgSpec>(text: string | undefined, spec: S): CniArgs<S> {
  checkSpec(spec);
  if (text !== undefined && typeof text !== 'string') throw netnsError(ErrorCodes.INVALID_ARG, 'parseCniArgs takes the CNI_ARGS text');
  if (text === undefined || text === '') return {} as CniArgs<S>;
  const entries: [string, string | boolean][] = [];
  const unknown: string[] = [];
  for (const pair of text.split(';')) {
    const kv = pair.split('=');
    if (kv.length !== 2) throw invalid(`invalid pair ${JSON.stringify(pair)}`);
    const [key, value] = kv as [string, string];
    const kind = key === 'IgnoreUnknown' ? 'boolean' : Object.hasOwn(spec, key) ? spec[key] : undefined;
    if (kind === undefined) unknown.push(pair);
    else entries.push([key, readValue(kind, pair, value)]);
  }
  // fromEntries defines properties: a "__proto__" key stays a plain key.
  const args = Object.fromEntries(entries) as CniArgs<S>;
  if (unknown.length > 0 && args.IgnoreUnknown !== true) {
    throw invalid(`unknown keys ${unknown.map((pair) => JSON.stringify(pair)).join(', ')} (the runtime may pass IgnoreUnknown=1)`);
  }
  return args;
}

/** A port mapping as the `portMappings` capability carries it (CONVENTIONS.md). */
export interface PortMapping {
  /** The port on the host. */
  hostPort: number;
  /** The port in the container it maps to. */
  containerPort: number;
  /** 'tcp', 'udp' or 'sctp'. */
  protocol: string;
  /** The host address to bind; absent means every address. */
  hostIP?: string;
}

/** The well-known capability arguments of CONVENTIONS.md, with their shapes there. */
export interface WellKnownRuntimeConfig {
  /** Host ports to forward to the container. */
  portMappings: PortMapping[];
  /** Address ranges for IPAM to allocate from, as host-local's `ranges` (a list of range sets). */
  ipRanges: {
    /** The subnet, CIDR (e.g. 10.1.2.0/24). */
    subnet: string;
    /** The first address IPAM may hand out; the IPAM plugin's default when absent. */
    rangeStart?: string;
    /** The last address IPAM may hand out; the IPAM plugin's default when absent. */
    rangeEnd?: string;
    /** The gateway address, without a prefix length. */
    gateway?: string;
  }[][];
  /** Traffic shaping, rates in bits per second and bursts in bits. */
  bandwidth: {
    /** Traffic into the container, bits per second. */
    ingressRate?: number;
    /** The burst of ingress traffic allowed, bits. */
    ingressBurst?: number;
    /** Traffic out of the container, bits per second. */
    egressRate?: number;
    /** The burst of egress traffic allowed, bits. */
    egressBurst?: number;
  };
  /** DNS settings for the container. */
  dns: {
    /** Name server addresses. */
    servers?: string[];
    /** Search domains. */
    searches?: string[];
    /** resolv.conf options (e.g. ndots:2). */
    options?: string[];
  };
  /** Static addresses the runtime asks for, CIDR (e.g. 10.10.0.1/24). */
  ips: string[];
  /** The MAC address for the container's interface. */
  mac: string;
  /** An InfiniBand GUID for the interface. */
  infinibandGUID: string;
  /** A device (e.g. an SR-IOV PCI address) to attach. */
  deviceID: string;
  /** Names for the container on this network (IPAM or DNS plugins may use them). */
  aliases: string[];
  /** The container's cgroup path. */
  cgroupPath: string;
}

/** Whether the configuration declares `capability` (so the runtime may pass it in runtimeConfig). */
export function hasCapability(config: NetConf, capability: string): boolean {
  assertConfig(config, 'hasCapability');
  const capabilities = Object.hasOwn(config, 'capabilities') ? config.capabilities : undefined;
  return typeof capabilities === 'object' && capabilities !== null && Object.hasOwn(capabilities, capability) && capabilities[capability] === true;
}

/**
 * The runtime's argument for `key`, or undefined when it passed none. The
 * runtime fills runtimeConfig only with capabilities the configuration
 * declares. Typed by CONVENTIONS.md for the well-known keys, but the runtime
 * wrote it: a plugin checks what it relies on.
 */
export function runtimeConfig<K extends keyof WellKnownRuntimeConfig>(config: NetConf, key: K): WellKnownRuntimeConfig[K] | undefined;
export function runtimeConfig(config: NetConf, key: string): unknown;
export function runtimeConfig(config: NetConf, key: string): unknown {
  assertConfig(config, 'runtimeConfig');
  const given = Object.hasOwn(config, 'runtimeConfig') ? config.runtimeConfig : undefined;
  if (typeof given !== 'object' || given === null) return undefined;
  return Object.hasOwn(given, key) ? given[key] : undefined;
}

/** The keys GC's list may come under: the spec's, then the one of the 1.1.0 tag that libcni also sends (cni#1101). */
const ATTACHMENT_KEYS = ['cni.dev/valid-attachments', 'cni.dev/attachments'] as const;

function readAttachment(value: unknown, where: string): Attachment {
  const item = typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
  const containerID = Object.hasOwn(item, 'containerID') ? item.containerID : undefined;
  const ifname = Object.hasOwn(item, 'ifname') ? item.ifname : undefined;
  if (typeof containerID !== 'string' || containerID === '' || typeof ifname !== 'string' || ifname === '') {
    throw new CniError(CniCode.INVALID_NETWORK_CONFIG, `${where} must be an object with non-empty containerID and ifname`);
  }
  return { containerID, ifname };
}

/**
 * GC's attachments still valid, or undefined when the runtime sent no list.
 * Undefined is not an empty list: a GC that took it as one would remove every
 * attachment of the network, so a plugin then removes nothing. Code 7 when malformed.
 */
export function validAttachments(config: NetConf): Attachment[] | undefined {
  assertConfig(config, 'validAttachments');
  const key = ATTACHMENT_KEYS.find((k) => Object.hasOwn(config, k) && config[k] !== undefined);
  if (key === undefined) return undefined;
  const list = config[key];
  if (!Array.isArray(list)) throw new CniError(CniCode.INVALID_NETWORK_CONFIG, `${key} must be an array`);
  return list.map((item, i) => readAttachment(item, `${key}[${i}]`));
}
