// ADD: IPAM first; then forwarding on the host, the veth pair, the
// container's addresses and routes, the host end, masquerade and the
// attachment's address set. A failure after IPAM undoes what was made and
// releases the allocation (execAddThen), so a failed ADD leaves nothing. So
// does an abandoned one (resident mode: the shim gave up or was killed, or a
// DEL of the attachment came): args.signal is checked after each step, and
// its abort fails the ADD like any error; execAddThen kills IPAM if it is
// still running. The attachment's record (records.ts) is written before
// IPAM ADD, so that a GC can release the allocation of an ADD killed at any
// point after it; it stays until DEL or GC releases the allocation, but for
// an ADD that IPAM refused (a misspelt type, a full range): IPAM holds
// nothing of it, and a record kept would fail every later GC's IPAM DEL.
import { NetNS } from 'netns';
import { CniCode, CniError, CURRENT_VERSION, execAddThen, prevResultOf, type CmdArgs, type Result } from 'netns/cni';
import { addMasquerade, attachmentKey, configureInterface, deleteHostEnd, enableForward, familiesOf, hostAlias, deleteMasquerade, setupVeth } from 'netns/cni/plumbing';
import { ensureAddressSet, releaseAddressSet } from './address-sets.js';
import { readSettings, type PtpConf, type Settings } from './config.js';
import { appendTo } from './chain.js';
import { removeRecord, writeRecord } from './records.js';
import { hostEnd, pointToPoint, routeThroughGateway } from './point-to-point.js';

export async function cmdAdd(args: CmdArgs<PtpConf>): Promise<Result> {
  const settings = readSettings(args.config);
  const prev = prevResultOf(args.config); // read before IPAM allocates: a bad one fails with nothing to undo
  const attachment = { network: settings.network, containerID: args.containerId, ifname: args.ifname };
  const recordedBefore = writeRecord(settings.dataDir, { ...attachment, config: args.stdin.toString('utf8') });
  let allocated = false;
  try {
    const result = await execAddThen(args, (ipam) => {
      allocated = true;
      return plumb(args, settings, ipam);
    });
    return appendTo(prev, result);
  } catch (error) {
    // Abandoned, IPAM may have allocated before it was killed; an earlier ADD's record may stand for its allocation.
    if (!allocated && !args.signal.aborted && !recordedBefore) forgetRecord(settings.dataDir, attachment);
    throw error;
  }
}

/** The ADD's own error is the one the runtime needs: a record that cannot go is GC's to report. */
function forgetRecord(dir: string, attachment: { network: string; containerID: string; ifname: string }): void {
  try {
    removeRecord(dir, attachment.network, attachment);
  } catch {
    // kept: GC's IPAM DEL of it reports why
  }
}

/** Everything after IPAM; what it made is undone if a later step fails. */
async function plumb(args: CmdArgs<PtpConf>, settings: Settings, ipam: Result): Promise<Result> {
  const ips = ipam.ips ?? [];
  if (ips.length === 0) throw new CniError(CniCode.INTERNAL, 'IPAM plugin returned missing IP config');
  const links = pointToPoint(ips);
  const attachment = { network: settings.network, containerID: args.containerId, ifname: args.ifname };
  const host = args.hostNs;
  using container = NetNS.open(args.netns);
  const { signal } = args;
  await enableForward(host, familiesOf(ips));
  signal.throwIfAborted(); // nothing made yet but the allocation, which execAddThen releases
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
    signal.throwIfAborted();
    await configureInterface(container, args.ifname, result);
    await routeThroughGateway(container, args.ifname, links);
    await hostEnd(host, veth.host.name, links);
    signal.throwIfAborted();
    if (settings.ipMasq) await addMasquerade(host, attachment, ips.map((ip) => ip.address));
    signal.throwIfAborted();
    if (settings.addressSets.enabled) await ensureAddressSet(host, settings.addressSets, attachmentKey(settings.network, attachment), links.map((link) => link.address));
    // Abandoned at the last step: nobody will take this result, and a DEL may never come for it.
    signal.throwIfAborted();
  } catch (error) {
    await undo(host, settings, attachment);
    throw error; // execAddThen releases the IPAM allocation
  }
  return result;
}

/**
 * The pair goes by its host end, found by this attachment's alias or derived
 * name (never the container's ifname, which another may hold now); the rules
 * by their comment; the address set as DEL releases it (only this
 * attachment's, by its key). Each step is tried whatever the one before did.
 */
async function undo(host: NetNS, settings: Settings, attachment: { network: string; containerID: string; ifname: string }): Promise<void> {
  await deleteHostEnd(host, attachment.network, attachment).catch(() => {});
  await deleteMasquerade(host, attachment).catch(() => {});
  if (settings.addressSets.enabled) await releaseAddressSet(host, settings.addressSets, attachmentKey(settings.network, attachment)).catch(() => {});
}
