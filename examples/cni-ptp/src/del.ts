// DEL: IPAM first (its failure fails DEL: the address must be freed), then
// the pair, the masquerade rules and the address set. Every step runs even
// when one before it failed; the first failure is reported. A repeated DEL,
// a DEL after the namespace is gone and a DEL of an attachment never added
// succeed, and create nothing on the host (no table, no chain). The pair goes
// by its host end, whose alias names this attachment (or, an ADD killed before
// writing it, whose name does): the container's interface of that name may be
// another attachment's (this one's ADD may have failed because the name was taken).
// The attachment's record goes once IPAM has released what it says was taken.
import { execDel, type CmdArgs } from 'netns/cni';
import { attachmentKey, deleteHostEnd, deleteMasquerade } from 'netns/cni/plumbing';
import { releaseAddressSet } from './address-sets.js';
import { readSettings, type PtpConf } from './config.js';
import { removeRecord } from './records.js';

export async function cmdDel(args: CmdArgs<PtpConf>): Promise<void> {
  const settings = readSettings(args.config);
  await execDel(args);
  const attachment = { network: settings.network, containerID: args.containerId, ifname: args.ifname };
  const host = args.hostNs;
  const failures: unknown[] = [];
  const attempt = (step: () => Promise<unknown>) => step().catch((error: unknown) => failures.push(error));
  // Nothing found when the namespace went and took the pair with it.
  await attempt(() => deleteHostEnd(host, settings.network, attachment));
  // Whatever ipMasq says now: the ADD may have run with another configuration.
  await attempt(() => deleteMasquerade(host, attachment));
  // Also with addressSets off now: the ADD may have made one.
  await attempt(() => releaseAddressSet(host, settings.addressSets, attachmentKey(settings.network, attachment)));
  await attempt(async () => removeRecord(settings.dataDir, settings.network, attachment));
  if (failures.length > 0) throw failures[0];
}
