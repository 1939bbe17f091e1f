// A lab's way out, as planned (spec.ts checks `nat`, nat.ts makes it): the router given `nat: {}`,
// the /30 between its `uplink` and the machine's end (given, or a random one
// of 100.64.0.0/10 that nothing of the lab's or the machine's overlaps), and
// both ends' names and addresses.
import { randomBytes, randomInt } from 'node:crypto';
import { ErrorCodes, netnsError } from '../../core/errors.js';
import { formatAddress, networkOf, parsePrefix, prefixesOverlap, type ParsedPrefix } from '../../netlink/validate.js';

/** The NAT router as planned. */
export interface PlannedNat {
  /** The router's key. */
  node: string;
  /** The subnet between the router's `uplink` and the machine's end. */
  subnet: string;
  /** The router's end: `uplink`. */
  iface: string;
  /** The router's end's address, with prefix length: what the machine sees the lab's traffic come from. */
  routerAddress: string;
  /** The machine's end, in the namespace that built the lab. */
  machineIface: string;
  /** The machine's end's address, with prefix length: the router's default gateway. */
  machineAddress: string;
}

export const UPLINK = 'uplink';
/** Carrier-grade NAT space (RFC 6598): meant for such a link between two networks, rarely a machine's own. */
const SHARED_SPACE = '100.64.0.0/10';
const PICK_ATTEMPTS = 64;

/** The uplink of router `node`: the given subnet, or a /30 of 100.64.0.0/10 overlapping no subnet in `taken`. */
export function planNat(node: string, subnet: string | undefined, taken: string[]): PlannedNat {
  const chosen = subnet ?? pickSubnet(taken);
  const network = networkOf(parsePrefix(chosen)); // checked already, by the spec or as picked
  const length = chosen.split('/')[1]!;
  const host = (n: number): string => `${formatAddress(offset(network, n))}/${length}`;
  return { node, subnet: chosen, iface: UPLINK, routerAddress: host(2), machineIface: `nslab${randomBytes(4).toString('hex')}`, machineAddress: host(1) };
}

function offset(network: Buffer, n: number): Buffer {
  const out = Buffer.from(network);
  out.writeUInt32BE((out.readUInt32BE(0) + n) >>> 0);
  return out;
}

function pickSubnet(taken: string[]): string {
  const space = networkOf(parsePrefix(SHARED_SPACE)).readUInt32BE(0);
  const used = taken.map((cidr) => parsePrefix(cidr)); // checked already; an IPv6 one overlaps no /30
  for (let attempt = 0; attempt < PICK_ATTEMPTS; attempt++) {
    const candidate = Buffer.alloc(4);
    candidate.writeUInt32BE((space + randomInt(1 << 20) * 4) >>> 0); // a random /30 of the /10: two labs rarely pick the same
    const prefix = { family: 2, bytes: candidate, prefixLength: 30 } as ParsedPrefix;
    if (!used.some((other) => prefixesOverlap(prefix, other))) return `${formatAddress(candidate)}/30`;
  }
  throw netnsError(ErrorCodes.FIXTURE, `createLab: no free /30 found in ${SHARED_SPACE} for the NAT uplink: give one (routers: { r: { nat: { subnet } } })`);
}

