// A veth pair between a container's namespace and the host's, as Go's
// ip.SetupVeth: the container end named as asked, both made by one message
// from inside the container (the peer placed directly in the host namespace:
// no half-made pair, and no moment where the host end sits in the container),
// the MTU (and a transmit queue length, if asked) on both ends, the host end
// up with IPv6 router advertisements ignored (accept_ra=0). Each end's result
// entry carries the MTU the kernel gave it (spec 1.1 `interfaces[].mtu`).
// Given an alias that starts with an attachment key (hostAlias's), the host
// end is named from that key (hostEndNames) in the creating message, so DEL
// and GC find it by name from the moment it exists, even if the ADD is killed
// before the alias is written; a retried ADD deletes such a leftover of its
// own. Without one, the host end is `veth` + 8 random hex digits, as Go's.
import { crypto } from '../core/builtins.js';
import { ErrorCodes, NetnsError, netnsError } from '../core/errors.js';
import { attr, AttributeMap } from '../netlink/attributes.js';
import { IFINFOMSG_SIZE, RTM_GETLINK, RTM_NEWLINK } from '../netlink/constants.js';
import { openNetlink, type Link, type Netlink } from '../netlink/index.js';
import { ifinfomsg, parseLink } from '../netlink/links.js';
import { own } from '../netlink/validate.js';
import type { NetNS } from '../netns.js';
import type { Interface } from './types.js';
import { checkNetlink, checkNs, checkObject, checkString } from './arg-checks.js';
import { hostEndNames, leadingKey } from './identity.js';
import { isPeerOf, isUnaliasedHostEnd } from './leftover.js';

const IFLA_IFALIAS = 20;
/** As Go's SetupVeth: a fresh random name this many times before giving up. */
const RANDOM_NAMES = 10;

/** What setupVeth takes: the two namespaces, the container end's name, and optional MTU, queue length, MAC and host alias. */
export interface VethOptions {
  /** The namespace of the container end. */
  containerNs: NetNS;
  /** The container end's name (CNI_IFNAME); an error if the container has one already. */
  ifname: string;
  /** Both ends' MTU; the kernel's default (1500) when 0 or absent. */
  mtu?: number;
  /**
   * Both ends' transmit queue length (IFLA_TXQLEN); the kernel's default (1000) when absent.
   * Go's SetupVeth sent 0 for both up to plugins 1.5 (a struct literal; 1.6 and 1.7 leave the
   * kernel's, 1.8 on send 0 for the host end only).
   */
  txQueueLength?: number;
  /** The container end's MAC; the kernel's random one when absent. */
  mac?: string;
  /** The namespace of the host end. */
  hostNs: NetNS;
  /**
   * IFLA_IFALIAS of the host end (e.g. hostAlias(network, attachment), by which findHostEnd and GC find it).
   * When it starts with an attachment key, as hostAlias's does, the host end is named from that key, not at random.
   */
  hostAlias?: string;
}

/** The pair setupVeth made, each end ready to put in a result's `interfaces`. */
export interface Veth {
  /** The host end: name, MAC and MTU. */
  host: Interface & {
    /** Its link-layer address, as the kernel chose it. */
    mac: string;
    /** Its MTU in bytes. */
    mtu: number;
  };
  /** The container end: name, MAC, MTU and sandbox (the container namespace's path). */
  container: Interface & {
    /** Its link-layer address: VethOptions.mac, or the kernel's random one. */
    mac: string;
    /** Its MTU in bytes. */
    mtu: number;
    /** The container namespace's path, for the result's `sandbox`. */
    sandbox: string;
  };
}

// node:crypto only here: with an alias (as cni-ptp gives) no random name is made.
const randomName = (): string => `veth${crypto().randomBytes(4).toString('hex')}`;

/**
 * Makes a veth pair as Go's ip.SetupVeth: the container end named `ifname`
 * inside `containerNs`, the host end in `hostNs`, made in one message (never
 * a half-made pair), the host end up with IPv6 router advertisements ignored;
 * the container end is left down for configureInterface. The host end is
 * named from the attachment key `hostAlias` starts with (the first of its
 * names no other link holds; a pair of the same attachment an earlier ADD
 * left, alias written or not, is deleted first), or `veth` + 8 random hex
 * digits without one. Async, over netlink. Rejects with EEXIST when the
 * container already has `ifname` (or no host name was free),
 * ERR_NETNS_INVALID_ARG for a bad alias, or the kernel's code; on failure
 * after the pair was made, the pair is deleted again.
 */
export async function setupVeth(options: VethOptions): Promise<Veth> {
  checkObject('setupVeth', 'options', options);
  const { containerNs, hostNs, ifname, mac, hostAlias, mtu: asked, txQueueLength } = own(options);
  checkNs('setupVeth', 'options.containerNs', containerNs);
  checkNs('setupVeth', 'options.hostNs', hostNs);
  checkString('setupVeth', 'options.ifname', ifname);
  if (hostAlias !== undefined) checkAlias(hostAlias);
  const key = hostAlias === undefined ? undefined : leadingKey(hostAlias);
  const both = { ...(asked ? { mtu: asked } : {}), ...(txQueueLength === undefined ? {} : { txQueueLength }) };
  using inside = await openNetlink(containerNs);
  using host = await openNetlink(hostNs);
  const names = key === undefined ? Array.from({ length: RANDOM_NAMES }, randomName) : await freeNames(host, inside, containerNs, ifname, key);
  await refuseExisting(inside, ifname);
  for (const hostName of names) {
    try {
      const peer = { name: hostName, netns: hostNs, ...both };
      const link = await inside.links.add({ kind: 'veth', name: ifname, ...both, ...(mac === undefined ? {} : { mac }), peer });
      const end = await finishHostEnd(hostNs, host, hostName, hostAlias).catch(async (error: unknown) => {
        await inside.links.delete(link.index).catch(() => {}); // the host end goes with it; the first failure is the one to report
        throw error;
      });
      return { host: { name: hostName, mac: end.mac!, mtu: end.mtu }, container: { name: ifname, mac: link.mac!, mtu: link.mtu, sandbox: containerNs.path } };
    } catch (error) {
      if ((error as NetnsError).code !== 'EEXIST') throw error;
      await refuseExisting(inside, ifname); // taken meanwhile: not a clash of the host name
    }
  }
  throw netnsError('EEXIST', `setupVeth: the ${key === undefined ? `${RANDOM_NAMES} random` : 'attachment\'s'} host interface names were all taken in ${hostNs.path}`);
}

/**
 * The attachment's host-end names (hostEndNames of `key`) that no other
 * link holds. A pair of its own that an earlier ADD left (killed, or retried
 * without a DEL) is deleted first, its container end with it: the host end
 * whose alias carries `key`, or one without an alias (isUnaliasedHostEnd)
 * whose peer is `ifname` in the container. Anything else keeps its name.
 */
async function freeNames(host: Netlink, inside: Netlink, containerNs: NetNS, ifname: string, key: string): Promise<string[]> {
  const links = await listWithAliases(host);
  const free: string[] = [];
  for (const name of hostEndNames(key)) {
    const link = links.find((l) => l.name === name);
    if (link !== undefined) {
      const ours = link.kind === 'veth' && (leadingKey(link.alias ?? '') === key || (isUnaliasedHostEnd(link) && (await isPeerOf(host, link, inside, containerNs, ifname))));
      if (!ours) continue;
      await host.links.delete(link.index).catch((error: NetnsError) => {
        if (error.code !== 'ENODEV') throw error; // gone meanwhile
      });
    }
    free.push(name);
  }
  return free;
}

async function refuseExisting(nl: Netlink, ifname: string): Promise<void> {
  const existing = await nl.links.get(ifname).catch((error: NetnsError) => {
    if (error.code === 'ENODEV') return undefined;
    throw error;
  });
  if (existing) throw netnsError('EEXIST', `setupVeth: the container already has an interface named ${ifname}`);
}

/** accept_ra=0 (when IPv6 is there at all), the alias, up; returns the link as it is then. */
async function finishHostEnd(hostNs: NetNS, host: Netlink, name: string, alias: string | undefined): Promise<Link> {
  await hostNs.sysctl.set(`net/ipv6/conf/${name}/accept_ra`, 0).catch((error: NetnsError) => {
    if (error.code !== 'ENOENT') throw error; // no IPv6 on this host
  });
  if (alias !== undefined) await setAlias(host, name, alias);
  await host.links.up(name);
  return host.links.get(name);
}

function checkAlias(alias: unknown): void {
  if (typeof alias !== 'string' || Buffer.byteLength(alias) > 255 || /[\0-\x1f\x7f]/.test(alias)) {
    throw netnsError(ErrorCodes.INVALID_ARG, 'an interface alias is a string of at most 255 bytes without control characters');
  }
}

/**
 * Sets a link's alias (IFLA_IFALIAS, `ip link set NAME alias TEXT`) through
 * `nl`: sent as bytes, never through a shell. Async; an alias over 255 bytes
 * or with control characters rejects with ERR_NETNS_INVALID_ARG.
 */
export async function setAlias(nl: Netlink, link: string | number, alias: string): Promise<void> {
  checkNetlink('setAlias', nl);
  checkAlias(alias);
  const index = await nl.links.index(link);
  await nl.handle.request([{ type: RTM_NEWLINK, flags: 0, header: ifinfomsg(index), attributes: [attr.rawString(IFLA_IFALIAS, alias)], what: `set link #${index} alias` }]);
}

/** Every link of `nl`'s namespace with its alias (IFLA_IFALIAS), which links.list() does not read. Async. */
export async function listWithAliases(nl: Netlink): Promise<
  (Link & {
    /** The alias (IFLA_IFALIAS); absent when the link has none. */
    alias?: string;
  })[]
> {
  checkNetlink('listWithAliases', nl);
  const messages = await nl.handle.dump(RTM_GETLINK, ifinfomsg(), [], 'list links');
  return messages
    .filter((m) => m.type === RTM_NEWLINK)
    .map((m) => {
      const alias = AttributeMap.parse(m.payload, IFINFOMSG_SIZE).string(IFLA_IFALIAS);
      return alias === undefined ? parseLink(m) : { ...parseLink(m), alias };
    });
}
