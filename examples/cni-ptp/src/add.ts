// ADD: IPAM first; then forwarding on the host, the veth pair, the
// container's addresses and routes, the host end, masquerade and the
// attachment's address set. A failure after IPAM undoes what was made and
// releases the allocation (execAddThen), so a failed ADD leaves nothing.
import { NetNS } from 'netns';
import { CniCode, CniError, CURRENT_VERSION, execAddThen, prevResultOf, type CmdArgs, type Result } from 'netns/cni';
import { addMasquerade, attachmentKey, configureInterface, deleteHostEnd, enableForward, familiesOf, hostAlias, deleteMasquerade, setupVeth } from 'netns/cni/plumbing';
import { ensureAddressSet } from './address-sets.js';
import { readSettings, type PtpConf, type Settings } from './config.js';
import { appendTo } from './chain.js';
import { hostEnd, pointToPoint, routeThroughGateway } from './point-to-point.js';

export async function cmdAdd(args: CmdArgs<PtpConf>): Promise<Result> {
  const settings = readSettings(args.config);
  const prev = prevResultOf(args.config); // read before IPAM allocates: a bad one fails with nothing to undo
  const result = await execAddThen(args, (ipam) => plumb(args, settings, ipam));
  return appendTo(prev, result);
}

/** Everything after IPAM; what it made is undone if a later step fails. */
async function plumb(args: CmdArgs<PtpConf>, settings: Settings, ipam: Result): Promise<Result> {
  const ips = ipam.ips ?? [];
  if (ips.length === 0) throw new CniError(CniCode.INTERNAL, 'IPAM plugin returned missing IP config');
  const links = pointToPoint(ips);
  const attachment = { network: settings.network, containerID: args.containerId, ifname: args.ifname };
  using host = NetNS.current();
  using container = NetNS.open(args.netns);
  await enableForward(host, familiesOf(ips));
  // txqueuelen 0 on both ends, as Debian's ptp (plugins 1.1.1) makes them; see setupVeth.
  const veth = await setupVeth({ containerNs: container, ifname: args.ifname, mtu: settings.mtu, txQueueLength: 0, hostNs: host, hostAlias: hostAlias(settings.network, attachment) });
  const result: Result = {
    cniVersion: CURRENT_VERSION,
    interfaces: [veth.host, veth.container],
    ips: ips.map((ip) => ({ ...ip, interface: 1 })),
    ...(ipam.routes?.length ? { routes: ipam.routes } : {}), // none: no key, as Go's omitempty
    dns: settings.dns ?? ipam.dns ?? {},
  };
  try {
    await configureInterface(container, args.ifname, result);
    await routeThroughGateway(container, args.ifname, links);
    await hostEnd(host, veth.host.name, links);
    if (settings.ipMasq) await addMasquerade(host, attachment, ips.map((ip) => ip.address));
    if (settings.addressSets.enabled) await ensureAddressSet(host, settings.addressSets, attachmentKey(settings.network, attachment), links.map((link) => link.address));
  } catch (error) {
    await undo(host, attachment);
    throw error;
  }
  return result;
}

/** The pair goes by its host end, found by this attachment's alias (never a name another may hold now); the rules by their comment. */
async function undo(host: NetNS, attachment: { network: string; containerID: string; ifname: string }): Promise<void> {
  await deleteHostEnd(host, attachment.network, attachment).catch(() => {});
  await deleteMasquerade(host, attachment).catch(() => {});
}
