// GC (spec 1.1) for the host side of one network: the host veths (found by
// the IFLA_IFALIAS setupVeth gave them, attachmentTag's) and masquerade rules
// (by their comments) of attachments the runtime no longer lists. Scoped by
// the network's hash, so other networks' resources are never looked at;
// continues past failures and returns them with what it removed. Without an
// attachment list it refuses to start: only an explicit empty list means
// "none is valid" (a runtime without GC arguments sends no key at all).
import { ErrorCodes, type NetnsError, netnsError } from '../core/errors.js';
import { openNetlink } from '../netlink/index.js';
import { own } from '../netlink/validate.js';
import type { NetNS } from '../netns.js';
import { attachmentKey, keyOfTag, networkTagPrefix } from './identity.js';
import { deleteMasqueradeRules, listMasquerade } from './masquerade.js';
import type { Attachment } from './types.js';
import { listWithAliases } from './veth.js';

export interface GcOptions {
  /** The host namespace (where the host veths and the masquerade table are). */
  hostNs: NetNS;
  network: string;
  /** `cni.dev/valid-attachments`: required; [] means none is valid. */
  validAttachments: readonly Attachment[];
}

export interface GcRemoved {
  kind: 'veth' | 'masquerade';
  /** The interface name, or the rule's handle. */
  name: string;
  /** `<network hash>-<attachment hash>`. */
  key: string;
}

export interface GcReport {
  removed: GcRemoved[];
  /** Every failure, in order; the rest went on regardless. */
  errors: Error[];
}

export async function collectGarbage(options: GcOptions): Promise<GcReport> {
  // Own properties only: an inherited validAttachments (a polluted Object.prototype) must never stand for the list.
  const { hostNs, network, validAttachments } = own(options);
  if (!Array.isArray(validAttachments)) {
    throw netnsError(ErrorCodes.INVALID_ARG, 'collectGarbage: validAttachments is required (an empty list means none is valid); without it nothing is removed');
  }
  networkTagPrefix(network); // checks it
  const keep = new Set(validAttachments.map((a) => attachmentKey(network, a)));
  const report: GcReport = { removed: [], errors: [] };
  await collectVeths(hostNs, network, keep, report).catch((error: Error) => report.errors.push(error));
  await collectRules(hostNs, network, keep, report).catch((error: Error) => report.errors.push(error));
  return report;
}

async function collectVeths(hostNs: NetNS, network: string, keep: Set<string>, report: GcReport): Promise<void> {
  const nl = await openNetlink(hostNs);
  try {
    for (const link of await listWithAliases(nl)) {
      const key = link.kind === 'veth' ? keyOfTag(network, link.alias) : undefined;
      if (key === undefined || keep.has(key)) continue;
      try {
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
