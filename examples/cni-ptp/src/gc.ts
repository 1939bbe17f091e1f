// GC (spec 1.1): the runtime lists the attachments of this network it still
// holds; the host veths (each with its IPAM allocation), masquerade rules and
// address sets of any other attachment of this network go (other networks'
// are never looked at: they carry another network hash, and the address sets
// live in a table per network), and the network's table with its last set.
// Every step runs; every failure is reported together. Without a list (a
// runtime that sent no GC arguments) nothing is removed.
import { NetNS } from 'netns';
import { CniCode, CniError, execGc, validAttachments, type CmdArgs } from 'netns/cni';
import { attachmentKey, collectGarbage } from 'netns/cni/plumbing';
import { collectAddressSets } from './address-sets.js';
import { readSettings, type PtpConf } from './config.js';
import { forIpamDel, ipamVersions, speaks } from './ipam-support.js';

export async function cmdGc(args: CmdArgs<PtpConf>): Promise<void> {
  const settings = readSettings(args.config);
  const failures: Error[] = [];
  // The spec: GC MUST reach the delegates; one older than 1.1.0 would only refuse the command.
  const versions = await ipamVersions(args);
  if (speaks(versions, '1.1.0')) await execGc(args).catch((error: Error) => failures.push(error));
  const valid = validAttachments(args.config);
  if (valid === undefined) return reportFailures(failures);
  using host = NetNS.current();
  const report = await collectGarbage({ hostNs: host, network: settings.network, validAttachments: valid, ipam: forIpamDel(args, versions) });
  failures.push(...report.errors);
  // Also with addressSets off: what an earlier configuration made is collected.
  const live = valid.map((attachment) => attachmentKey(settings.network, attachment));
  await collectAddressSets(host, settings.addressSets, settings.network, live).catch((error: Error) => failures.push(error));
  reportFailures(failures);
}

function reportFailures(failures: Error[]): void {
  if (failures.length === 0) return;
  throw new CniError(CniCode.INTERNAL, `GC: ${failures.length} step(s) failed: ${failures[0]!.message}`, failures.map((error) => error.message).join('\n'));
}
