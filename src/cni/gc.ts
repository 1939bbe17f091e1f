// GC (spec 1.1) for the host side of one network: the host veths (found by
// the IFLA_IFALIAS setupVeth gave them, hostAlias's) and masquerade rules
// (by their comments) of attachments the runtime no longer lists, and, given
// the GC call's IPAM input, each stale veth's IPAM allocation (released before
// its veth goes: the alias is the only record of the attachment, so a failed
// release keeps it for the next GC). A host end an ADD was killed before
// aliasing (leftover.ts) is found by the network's part of its name instead;
// no attachment can be read from it, so its allocation is left to the IPAM
// plugin's own GC, unless the caller released it already from a record of
// its own (`released`: its derived name says whose it is). Scoped by the network's hash, so other
// networks' resources are never looked at; continues past failures and
// returns them with what it removed. Without an attachment list it refuses to
// start: only an explicit empty list means "none is valid" (a runtime without
// GC arguments sends no key at all).
import { ErrorCodes, type NetnsError, netnsError } from '../core/errors.js';
import { openNetlink } from '../netlink/index.js';
import { own } from '../netlink/validate.js';
import type { NetNS } from '../netns.js';
import { attachmentKey, attachmentOf, hostEndNames, isHostEndNameOf, keyOfTag, networkTagPrefix } from './identity.js';
import { execDel, type IpamInput } from './ipam.js';
import { deleteMasqueradeRules, listMasquerade } from './masquerade.js';
import { isUnaliasedHostEnd } from './leftover.js';
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
  /**
   * Attachment keys (attachmentKey) whose IPAM allocation the caller has
   * already released, from a record of its own: their stale veths go with no
   * IPAM DEL, and one never aliased (known by its derived name) is not
   * reported unreleased.
   */
  released?: readonly string[];
}

/** One thing collectGarbage removed. */
export interface GcRemoved {
  /** A host veth (with its IPAM allocation, when `ipam` was given) or a masquerade rule. */
  kind: 'veth' | 'masquerade';
  /** The interface name, or the rule's handle. */
  name: string;
  /** `<network hash>-<attachment hash>`; absent for a host veth an ADD was killed before aliasing (found by its name, its attachment unknown). */
  key?: string;
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
 * veth's IPAM allocation first (IPAM DEL). A host veth an ADD was killed
 * before aliasing (no alias, down, named as setupVeth names this network's)
 * goes too, unless it bears a name of a valid attachment; with `ipam`, the
 * report's errors say its allocation was not released (unless `released`
 * names its attachment). Only this network's resources are
 * looked at. Async; goes on past failures and resolves with what it removed
 * and every error. Rejects with ERR_NETNS_INVALID_ARG, removing nothing, when
 * `validAttachments` is missing ([] means none is valid) or `network` is bad.
 */
export async function collectGarbage(options: GcOptions): Promise<GcReport> {
  // Own properties only: an inherited validAttachments (a polluted Object.prototype) must never stand for the list.
  checkObject('collectGarbage', 'options', options);
  const { hostNs, network, validAttachments, ipam, released = [] } = own(options);
  checkNs('collectGarbage', 'options.hostNs', hostNs);
  if (!Array.isArray(validAttachments)) {
    throw netnsError(ErrorCodes.INVALID_ARG, 'collectGarbage: validAttachments is required (an empty list means none is valid); without it nothing is removed');
  }
  if (!Array.isArray(released) || !released.every((key) => typeof key === 'string')) throw netnsError(ErrorCodes.INVALID_ARG, 'collectGarbage: released must be a list of attachment keys');
  networkTagPrefix(network); // checks it
  const keep = new Set(validAttachments.map((a) => attachmentKey(network, a)));
  const report: GcReport = { removed: [], errors: [] };
  await collectVeths(hostNs, network, keep, ipam && { ipam, released }, report).catch((error: Error) => report.errors.push(error));
  await collectRules(hostNs, network, keep, report).catch((error: Error) => report.errors.push(error));
  return report;
}

/** What collectVeths releases stale veths' allocations with, and the keys already released. */
interface Releasing {
  ipam: IpamInput;
  released: readonly string[];
}

async function collectVeths(hostNs: NetNS, network: string, keep: Set<string>, releasing: Releasing | undefined, report: GcReport): Promise<void> {
  using nl = await openNetlink(hostNs);
  const keepNames = new Set([...keep].flatMap(hostEndNames));
  const released = new Set(releasing?.released);
  const releasedNames = new Set([...released].flatMap(hostEndNames));
  for (const link of await listWithAliases(nl)) {
    const key = link.kind === 'veth' ? keyOfTag(network, link.alias) : undefined;
    // Without a key, only a host end never aliased, named as this network's and by no valid attachment's name.
    const stale = key === undefined ? isUnaliasedHostEnd(link) && isHostEndNameOf(network, link.name) && !keepNames.has(link.name) : !keep.has(key);
    if (!stale) continue;
    const releasedAlready = key === undefined ? releasedNames.has(link.name) : released.has(key);
    try {
      if (releasing && !releasedAlready) await release(releasing.ipam, network, link.name, link.alias, report);
      await nl.links.delete(link.index);
      report.removed.push({ kind: 'veth', name: link.name, ...(key === undefined ? {} : { key }) });
    } catch (error) {
      if ((error as NetnsError).code !== 'ENODEV') report.errors.push(error as Error); // gone meanwhile: fine
    }
  }
}

/**
 * IPAM DEL of the attachment a stale veth's alias names, with the GC's
 * configuration (a copy of its args: process.env is left alone). An alias cut
 * short (by an older version), or none (an ADD killed before writing it),
 * names none: the veth still goes, and the report says its allocation is left
 * to the IPAM plugin's own GC.
 */
async function release(ipam: IpamInput, network: string, veth: string, alias: string | undefined, report: GcReport): Promise<void> {
  const attachment = attachmentOf(network, alias);
  if (attachment) return execDel({ ...ipam, containerId: attachment.containerID, ifname: attachment.ifname });
  const why = alias === undefined ? `${veth} has no alias (its ADD was killed before writing it)` : `the alias of ${veth} does not carry its attachment's whole container id and ifname`;
  report.errors.push(netnsError(ErrorCodes.CNI_GC_UNRELEASED, `GC: ${why}: its IPAM allocation is not released`));
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
