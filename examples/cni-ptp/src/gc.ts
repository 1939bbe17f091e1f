// GC (spec 1.1): the runtime lists the attachments of this network it still
// holds; the host veths, masquerade rules and address sets of any other
// attachment of this network go (other networks' are never looked at: they
// carry another network hash, and the address sets live in a table per
// network), and the network's table with its last set. Every step runs;
// every failure is reported together. Without a list (a runtime that sent no
// GC arguments) nothing is removed.
//
// The stale attachments' IPAM allocations: an IPAM plugin that speaks GC
// gets the list and frees its own (the spec: GC MUST reach it), and the
// stale records are dropped once it has. Otherwise (Debian's host-local
// 1.1.1) this plugin releases them by IPAM DEL: first each attachment a
// record names (records.ts: also one whose veth never existed, or went with
// its namespace before any DEL), with the configuration its ADD used; then
// each stale veth's that had no record (made before records were kept),
// whose alias names its attachment.
import { CniCode, CniError, execDel, execGc, validAttachments, type CmdArgs } from 'netns/cni';
import { attachmentKey, collectGarbage } from 'netns/cni/plumbing';
import { collectAddressSets } from './address-sets.js';
import { readSettings, type PtpConf, type Settings } from './config.js';
import { forIpamDel, ipamVersions, speaks } from './ipam-support.js';
import { listRecords, removeRecord, type AttachmentRecord } from './records.js';

export async function cmdGc(args: CmdArgs<PtpConf>): Promise<void> {
  const settings = readSettings(args.config);
  const failures: Error[] = [];
  const versions = await ipamVersions(args);
  const ipamCollects = speaks(versions, '1.1.0'); // one older would only refuse the command
  const ipamCollected = ipamCollects && (await execGc(args).then(() => true, (error: Error) => (failures.push(error), false)));
  const valid = validAttachments(args.config);
  if (valid === undefined) return reportFailures(failures);
  const live = valid.map((attachment) => attachmentKey(settings.network, attachment));
  // An IPAM GC that failed keeps the records: the next GC's IPAM DELs or IPAM GC release them.
  const released = ipamCollects && !ipamCollected ? [] : await releaseRecorded(args, settings, new Set(live), !ipamCollects, failures);
  const host = args.hostNs;
  const report = await collectGarbage({ hostNs: host, network: settings.network, validAttachments: valid, ...(ipamCollects ? {} : { ipam: forIpamDel(args, versions), released }) });
  failures.push(...report.errors);
  // Also with addressSets off: what an earlier configuration made is collected.
  await collectAddressSets(host, settings.addressSets, settings.network, live).catch((error: Error) => failures.push(error));
  reportFailures(failures);
}

/**
 * Each record of an attachment not `live`: its allocation released by IPAM
 * DEL (when `release`), then the record removed. Resolves with the keys of
 * those done; a failed one keeps its record for the next GC.
 */
async function releaseRecorded(args: CmdArgs<PtpConf>, settings: Settings, live: Set<string>, release: boolean, failures: Error[]): Promise<string[]> {
  const done: string[] = [];
  let records: AttachmentRecord[] = [];
  try {
    records = listRecords(settings.dataDir, settings.network);
  } catch (error) {
    failures.push(error as Error);
  }
  for (const record of records) {
    const key = attachmentKey(settings.network, record);
    if (live.has(key)) continue;
    try {
      if (release) await execDel(recordedIpam(args, record));
      removeRecord(settings.dataDir, settings.network, record);
      done.push(key);
    } catch (error) {
      failures.push(error as Error);
    }
  }
  return done;
}

/** IPAM DEL's input for a record: its ADD's configuration, its attachment, this call's environment (CNI_PATH). */
function recordedIpam(args: CmdArgs<PtpConf>, record: AttachmentRecord) {
  return { config: JSON.parse(record.config) as PtpConf, stdin: Buffer.from(record.config), env: args.env, containerId: record.containerID, ifname: record.ifname };
}

function reportFailures(failures: Error[]): void {
  if (failures.length === 0) return;
  throw new CniError(CniCode.INTERNAL, `GC: ${failures.length} step(s) failed: ${failures[0]!.message}`, failures.map((error) => error.message).join('\n'));
}
