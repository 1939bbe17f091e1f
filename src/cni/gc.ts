// GC (spec 1.1) for the host side of one network: the host veths (found by
// the IFLA_IFALIAS setupVeth gave them, hostAlias's) and masquerade rules
// (by their comments) of attachments the runtime no longer lists, and, given
// the GC call's IPAM input, each stale veth's IPAM allocation (released before
// its veth goes: the alias is the only record of the attachment, so a failed
// release keeps it for the next GC). Scoped by the network's hash, so other
// networks' resources are never looked at; continues past failures and
// returns them with what it removed. Without an attachment list it refuses to
// start: only an explicit empty list means "none is valid" (a runtime without
// GC arguments sends no key at all).
import { ErrorCodes, type NetnsError, netnsError } from '../core/errors.js';
import { openNetlink } from '../netlink/index.js';
import { own } from '../netlink/validate.js';
import type { NetNS } from '../netns.js';
import { attachmentKey, attachmentOf, keyOfTag, networkTagPrefix } from './identity.js';
import { execDel, type IpamInput } from './ipam.js';
import { deleteMasqueradeRules, listMasquerade } from './masquerade.js';
import type { Attachment } from './types.js';
import { listWithAliases } from './veth.js';
import { checkNs, checkObject } from './arg-checks.js';

/** What collectGarbage takes: the host namespace, the network, the attachments still valid, and optionally IPAM. */
export interface GcOptions {
  /** The host namespace (where the host veths and the masquerade table are). */
  hostNs: NetNS;
  /** The network's name (the configuration's `name`): only its resources are looked at. */
  network: string;
  /** `cni.dev/valid-attachments`: required; [] means none is valid. */
  validAttachments: readonly Attachment[];
  /**
   * The GC call's args (configuration and its bytes): each stale veth's
   * attachment is released by IPAM DEL with this configuration and that
   * attachment's CNI_CONTAINERID and CNI_IFNAME. Without it, IPAM is left alone.
   */
  ipam?: IpamInput;
}

/** One thing collectGarbage removed. */
export interface GcRemoved {
  /** A host veth (with its IPAM allocation, when `ipam` was given) or a masquerade rule. */
  kind: 'veth' | 'masquerade';
  /** The interface name, or the rule's handle. */
  name: string;
  /** `<network hash>-<attachment hash>`. */
  key: string;
}

/** What collectGarbage removed and what failed; it never rejects for a single failure. */
export interface GcReport {
  /** What went, in order. */
  removed: GcRemoved[];
  /** Every failure, in order; the rest went on regardless. */
  errors: Error[];
}

/**
 * CNI GC (spec 1.1) for the host side of one network: removes the host veths
 * (found by the alias setupVeth gave them) and masquerade rules of every
 * attachment not in `validAttachments`, and with `ipam` releases each stale
 * veth's IPAM allocation first (IPAM DEL). Only this network's resources are
 * looked at. Async; goes on past failures and resolves with what it removed
 * and every error. Rejects with ERR_NETNS_INVALID_ARG, removing nothing, when
 * `validAttachments` is missing ([] means none is valid) or `network` is bad.
 */
export async function collectGarbage(options: GcOptions): Promise<GcReport> {
  // Own properties only: an inherited validAttachments (a polluted Object.prototype) must never stand for the list.
  checkObject('collectGarbage', 'options', options);
  const { hostNs, network, validAttachments, ipam } = own(options);
  checkNs('collectGarbage', 'options.hostNs', hostNs);
  if (!Array.isArray(validAttachments)) {
    throw netnsError(ErrorCodes.INVALID_ARG, 'collectGarbage: validAttachments is required (an empty list means none is valid); without it nothing is removed');
  }
  networkTagPrefix(network); // checks it
  const keep = new Set(validAttachments.map((a) => attachmentKey(network, a)));
  const report: GcReport = { removed: [], errors: [] };
  await collectVeths(hostNs, network, keep, ipam, report).catch((error: Error) => report.errors.push(error));
  await collectRules(hostNs, network, keep, report).catch((error: Error) => report.errors.push(error));
  return report;
}

async function collectVeths(hostNs: NetNS, network: string, keep: Set<string>, ipam: IpamInput | undefined, report: GcReport): Promise<void> {
  const nl = await openNetlink(hostNs);
  try {
    for (const link of await listWithAliases(nl)) {
      const key = link.kind === 'veth' ? keyOfTag(network, link.alias) : undefined;
      if (key === undefined || keep.has(key)) continue;
      try {
        if (ipam) await release(ipam, network, link.name, link.alias!, report);
        await nl.links.delete(link.index);
        report.removed.push({ kind: 'veth', name: link.name, key });
      } catch (error) {
        if ((error as NetnsError).code !== 'ENODEV') report.errors.push(error as Error); // gone meanwhile: fine
      }
    }
  } finally {
    nl.close();
  }
}

/**
 * IPAM DEL of the attachment a stale veth's alias names, with the GC's
 * configuration (a copy of its args: process.env is left alone). An alias cut
 * short (by an older version) names none: the veth still goes, and the
 * report says its allocation is left to the IPAM plugin's own GC.
 */
async function release(ipam: IpamInput, network: string, veth: string, alias: string, report: GcReport): Promise<void> {
  const attachment = attachmentOf(network, alias);
  if (attachment) return execDel({ ...ipam, containerId: attachment.containerID, ifname: attachment.ifname });
  report.errors.push(netnsError(ErrorCodes.CNI_GC_UNRELEASED, `GC: the alias of ${veth} does not carry its attachment's whole container id and ifname: its IPAM allocation is not released`));
}

async function collectRules(hostNs: NetNS, network: string, keep: Set<string>, report: GcReport): Promise<void> {
  for (const rule of await listMasquerade(hostNs, network)) {
    if (keep.has(rule.key)) continue;
    try {
      await deleteMasqueradeRules(hostNs, [rule]);
      report.removed.push({ kind: 'masquerade', name: String(rule.handle), key: rule.key });
    } catch (error) {
      if ((error as NetnsError).code !== 'ENOENT') report.errors.push(error as Error);
    }
  }
}
