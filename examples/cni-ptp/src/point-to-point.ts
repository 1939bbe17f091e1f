// The routes that make a veth pair a point-to-point link, as the official
// ptp plugin lays them out. In the container, every address's subnet is
// reached through the gateway, the gateway itself on-link:
//   10.1.1.1 dev eth0 scope link src 10.1.1.2
//   10.1.1.0/24 via 10.1.1.1 dev eth0 src 10.1.1.2
// (the kernel's own "10.1.1.0/24 dev eth0" is deleted), so the container
// reaches its neighbours through the host. On the host end: the gateway as a
// /32 (/128) address and a host-scoped route to the container's address.
import ipaddr from 'ipaddr.js';
import type { NetNS } from 'netns';
import { CniCode, CniError, type IpConfig } from 'netns/cni';
import { openNetlink, type NetnsError } from 'netns/netlink';

/** An address of a result, split: "10.1.1.2/24" -> 10.1.1.2, its subnet 10.1.1.0/24, its gateway. */
export interface PointToPoint {
  address: string;
  subnet: string;
  gateway: string;
  v6: boolean;
}

function text(address: ipaddr.IPv4 | ipaddr.IPv6): string {
  return address.kind() === 'ipv6' ? (address as ipaddr.IPv6).toRFC5952String() : address.toString();
}

/** The result's IPs as point-to-point links; code 7 for an IP without a gateway (the link has no other end). */
export function pointToPoint(ips: readonly IpConfig[]): PointToPoint[] {
  return ips.map((ip) => {
    if (ip.gateway === undefined) throw new CniError(CniCode.INVALID_NETWORK_CONFIG, `IPAM gave ${ip.address} no gateway: ptp needs one for the host end`);
    const [address, length] = ipaddr.parseCIDR(ip.address);
    const network = address.kind() === 'ipv6' ? ipaddr.IPv6.networkAddressFromCIDR(ip.address) : ipaddr.IPv4.networkAddressFromCIDR(ip.address);
    return { address: text(address), subnet: `${text(network)}/${length}`, gateway: text(ipaddr.parse(ip.gateway)), v6: address.kind() === 'ipv6' };
  });
}

/** In the container, after the addresses are on `ifname`: the kernel's subnet route replaced by the two above. */
export async function routeThroughGateway(container: NetNS, ifname: string, links: readonly PointToPoint[]): Promise<void> {
  using nl = await openNetlink(container);
  const device = await nl.links.index(ifname);
  for (const link of links) {
    await nl.routes.delete({ destination: link.subnet, device });
    await nl.routes.add({ destination: link.gateway, device, scope: 'link', source: link.address });
    await nl.routes.add({ destination: link.subnet, gateway: link.gateway, device, source: link.address });
  }
}

const ignoreExisting = (error: NetnsError): void => {
  if (error.code !== 'EEXIST') throw error;
};

/** On the host end: each gateway as a host address, and a host-scoped route to each container address. */
export async function hostEnd(host: NetNS, hostIfname: string, links: readonly PointToPoint[]): Promise<void> {
  using nl = await openNetlink(host);
  const device = await nl.links.index(hostIfname);
  for (const link of links) {
    // No DAD for IPv6: nothing else can hold the gateway on a two-ended link, and a tentative gateway drops the first packets.
    await nl.addresses.add({ link: device, address: `${link.gateway}/${link.v6 ? 128 : 32}`, flags: link.v6 ? ['nodad'] : [] });
    await nl.routes.add({ destination: link.address, device, scope: 'host' }).catch(ignoreExisting);
  }
}
