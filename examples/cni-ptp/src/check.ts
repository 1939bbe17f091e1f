// CHECK: IPAM's CHECK, then everything the ADD made is still there as its
// result says: the container end (a veth, its MAC, its addresses), every
// route of the result and ptp's own two per address, and what makes the
// container reachable from the host: the host end (found by its alias, up,
// holding the gateway), the host route to each address through it,
// forwarding, the masquerade rule (ipMasq) and the attachment's address set. Later plugins of a chain may
// have added to the result: only what is this attachment's is judged.
import { NetNS } from 'netns';
import { CniCode, CniError, execCheck, prevResultOf, type CmdArgs, type IpConfig, type Result } from 'netns/cni';
import { attachmentKey, checkInterface, checkRoutes, listMasquerade } from 'netns/cni/plumbing';
import { missingFromSet } from './address-sets.js';
import { readSettings, type PtpConf } from './config.js';
import { checkHostEnd, checkMismatch } from './host-check.js';
import { pointToPoint } from './point-to-point.js';

export async function cmdCheck(args: CmdArgs<PtpConf>): Promise<void> {
  const settings = readSettings(args.config);
  await execCheck(args);
  const prev = prevResultOf(args.config);
  if (!prev) throw new CniError(CniCode.INVALID_NETWORK_CONFIG, 'CHECK needs prevResult: the result of the ADD');
  const links = pointToPoint(ownAddresses(prev, args.ifname, args.netns));
  using container = NetNS.open(args.netns);
  await checkInterface(container, args.ifname, prev, { kind: 'veth', sandbox: args.netns });
  await checkRoutes(container, { cniVersion: prev.cniVersion, ips: prev.ips ?? [], routes: prev.routes ?? [] });
  // ptp's own: the gateway on-link, the subnet through it.
  await checkRoutes(container, { cniVersion: prev.cniVersion, routes: links.flatMap((link) => [{ dst: `${link.gateway}/${link.v6 ? 128 : 32}` }, { dst: link.subnet, gw: link.gateway }]) });
  const attachment = { containerID: args.containerId, ifname: args.ifname };
  const key = attachmentKey(settings.network, attachment);
  const host = args.hostNs;
  await checkHostEnd(host, settings.network, key, links);
  // (An address whose subnet is /0 has no rule: nothing is outside it.)
  const masqueraded = settings.ipMasq && links.some((link) => !link.subnet.endsWith('/0'));
  if (masqueraded && !(await listMasquerade(host, settings.network)).some((rule) => rule.key === key)) {
    throw checkMismatch(`no masquerade rule for the attachment in inet cni_plugins_masquerade`);
  }
  const sets = settings.addressSets;
  if (sets.enabled) {
    const missing = await missingFromSet(host, sets, key, links.map((link) => link.address));
    if (missing.length > 0) throw checkMismatch(`the attachment's address set in table ${sets.table} lacks ${missing.join(', ')}`);
  }
}

/** The addresses the result puts on this attachment's interface (by name and sandbox, as Go's ptp finds it). */
function ownAddresses(result: Result, ifname: string, netns: string): IpConfig[] {
  const index = (result.interfaces ?? []).findIndex((entry) => entry.name === ifname && entry.sandbox === netns);
  if (index < 0) throw checkMismatch(`prevResult has no interface ${ifname} with sandbox ${netns}`);
  const ips = (result.ips ?? []).filter((ip) => ip.interface === index);
  if (ips.length === 0) throw checkMismatch(`prevResult has no address on ${ifname}`);
  return ips;
}
