// CHECK of the host side, which decides whether the container is reachable:
// the host end of this attachment's pair (found by the alias ADD gave it, so
// a renamed or re-made pair is not taken for it) is up and holds each
// gateway, each container address has its host route through it, and the
// host forwards the families in use.
import type { NetNS } from 'netns';
import { CniCode, CniError } from 'netns/cni';
import { findHostEnd } from 'netns/cni/plumbing';
import { openNetlink } from 'netns/netlink';
import type { PointToPoint } from './point-to-point.js';

/** The same code as the CHECK helpers' mismatches (110): one answer for "not as ADD left it". */
export const checkMismatch = (message: string): CniError => new CniError(CniCode.CHECK_FAILED, `CHECK: ${message}`);

const FORWARDING = { 4: 'net/ipv4/ip_forward', 6: 'net/ipv6/conf/all/forwarding' } as const;

export async function checkHostEnd(host: NetNS, network: string, key: string, links: readonly PointToPoint[]): Promise<void> {
  using nl = await openNetlink(host);
  const hostEnd = await findHostEnd(nl, network, key);
  if (!hostEnd) throw checkMismatch('the host end of the veth pair is missing');
  if (!hostEnd.flags.includes('UP')) throw checkMismatch(`the host end ${hostEnd.name} is down`);
  const addresses = new Set((await nl.addresses.list({ link: hostEnd.index })).map((a) => a.address));
  const routes = await nl.routes.list();
  for (const link of links) {
    if (!addresses.has(link.gateway)) throw checkMismatch(`the host end ${hostEnd.name} lacks the gateway ${link.gateway}`);
    const prefix = `${link.address}/${link.v6 ? 128 : 32}`;
    if (!routes.some((route) => route.destination === prefix && route.device === hostEnd.index)) throw checkMismatch(`no host route to ${link.address} through ${hostEnd.name}`);
  }
  for (const family of new Set(links.map((link) => (link.v6 ? 6 : 4)))) {
    if ((await host.sysctl.get(FORWARDING[family])) !== '1') throw checkMismatch(`IPv${family} forwarding is off on the host`);
  }
}
