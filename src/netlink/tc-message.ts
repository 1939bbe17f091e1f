// What qdiscs, classes and filters share: struct tcmsg, handles as tc writes
// them ("1:", "1:10", root, ingress, clsact), and the kernel's answer when a
// module is missing, turned into ERR_NETNS_UNSUPPORTED naming the module.
import { ErrorCodes, NetnsError, netnsError } from '../core/errors.js';
import { AttributeMap } from './attributes.js';
import { invalid } from './checks.js';
import type { NetlinkMessage, NetlinkRequest } from './message.js';
import type { NetlinkHandle } from './handle.js';
import { sendOnLink, type LinkRef, type Links } from './links.js';
import { INGRESS_HANDLE, TC_H_INGRESS, TC_H_MIN_EGRESS, TC_H_MIN_INGRESS, TC_H_ROOT, TCA_KIND, TCMSG_SIZE } from './tc-constants.js';

/** A class or qdisc id as tc writes it: major and minor in hex, "1:10"; a qdisc's handle "1:" (minor 0). */
export type TcHandle = `${string}:${string}`;

/** struct tcmsg: family AF_UNSPEC, ifindex (filled in when sent), handle, parent, info. */
export function tcmsg(handle: number, parent: number, info = 0, index = 0): Buffer {
  const out = Buffer.alloc(TCMSG_SIZE);
  out.writeInt32LE(index, 4);
  out.writeUInt32LE(handle >>> 0, 8);
  out.writeUInt32LE(parent >>> 0, 12);
  out.writeUInt32LE(info >>> 0, 16);
  return out;
}

/** The fields of a received tcmsg, and its attributes. */
export interface TcHeader {
  index: number;
  handle: number;
  parent: number;
  info: number;
  kind: string;
  attributes: AttributeMap;
}

export function parseTcmsg(message: NetlinkMessage): TcHeader {
  const p = message.payload;
  const attributes = AttributeMap.parse(p, TCMSG_SIZE);
  return { index: p.readInt32LE(4), handle: p.readUInt32LE(8), parent: p.readUInt32LE(12), info: p.readUInt32LE(16), kind: attributes.string(TCA_KIND) ?? '', attributes };
}

const HANDLE = /^([0-9a-f]{1,4}):([0-9a-f]{0,4})$/i;

/**
 * "M:N" (hex, as tc reads it) to TC_H_MAKE(M << 16, N). `minor`: 'none' for a
 * qdisc's "M:", 'required' for a class id, 'any' for a parent.
 */
export function parseHandle(text: unknown, what: string, minor: 'none' | 'required' | 'any'): number {
  const match = typeof text === 'string' ? HANDLE.exec(text) : null;
  const shape = minor === 'none' ? '"M:" (hex, like "1:")' : minor === 'required' ? '"M:N" (hex, like "1:10")' : '"M:" or "M:N" (hex, like "1:10")';
  // "1:0" is "1:", the qdisc's own handle: no class id.
  if (!match || (minor === 'none' && match[2] !== '') || (minor === 'required' && parseInt(match[2] || '0', 16) === 0)) {
    throw invalid(`${what} must be ${shape}, got ${JSON.stringify(text)}`);
  }
  return ((parseInt(match[1]!, 16) << 16) | parseInt(match[2] || '0', 16)) >>> 0;
}

/** A handle as tc prints it: "1:" for minor 0, "1:10" otherwise. */
export function formatHandle(handle: number): TcHandle {
  const major = (handle >>> 16).toString(16);
  const minor = handle & 0xffff;
  return `${major}:${minor === 0 ? '' : minor.toString(16)}`;
}

/** A qdisc's parent as this API names it: root, ingress or clsact (by the qdisc's kind), or "M:N". */
export function formatParent(parent: number, kind: string): string {
  if (parent === TC_H_ROOT) return 'root';
  if (parent === TC_H_INGRESS) return kind === 'clsact' ? 'clsact' : 'ingress';
  return formatHandle(parent);
}

/** A filter's parent: "M:", or ingress / egress for clsact's hooks. */
export function filterParent(text: unknown): number {
  if (text === 'ingress') return (INGRESS_HANDLE | TC_H_MIN_INGRESS) >>> 0;
  if (text === 'egress') return (INGRESS_HANDLE | TC_H_MIN_EGRESS) >>> 0;
  return parseHandle(text, 'filter parent', 'any');
}

/** A filter's or class's parent as reported: ingress / egress (clsact's hooks), root (a class right under its qdisc), or "M:N". */
export function formatFilterParent(parent: number): string {
  if (parent === ((INGRESS_HANDLE | TC_H_MIN_INGRESS) >>> 0)) return 'ingress';
  if (parent === ((INGRESS_HANDLE | TC_H_MIN_EGRESS) >>> 0)) return 'egress';
  return parent === TC_H_ROOT ? 'root' : formatHandle(parent);
}

/** The extended-ACK texts of a kernel without the module a request needs (net/sched/sch_api.c, cls_api.c, act_api.c). */
const ENOENT = 2;
const EOPNOTSUPP = 95;

const MISSING_MODULE: [RegExp, (name: string) => string][] = [
  [/qdisc kind is unknown/i, (name) => `sch_${name}`],
  [/classifier not found/i, (name) => `cls_${name}`],
  [/load TC action module/i, (name) => `act_${name}`],
];

/**
 * The kernel's refusal of a qdisc kind, classifier or action it has no module
 * for as ERR_NETNS_UNSUPPORTED naming the module to load (`modules`: by
 * what the request needs: qdisc, classifier, action), the kernel's error kept
 * as cause; any other error as it is.
 */
export function unsupportedOr(error: unknown, what: string, modules: { qdisc?: string; classifier?: string; action?: string }): unknown {
  // By number: Node names EOPNOTSUPP (95) ENOTSUP.
  if (!(error instanceof NetnsError) || (error.errno !== -ENOENT && error.errno !== -EOPNOTSUPP) || error.extack === undefined) return error;
  const names = [modules.qdisc, modules.classifier, modules.action];
  for (const [i, [text, module]] of MISSING_MODULE.entries()) {
    const name = names[i];
    if (name !== undefined && text.test(error.extack)) {
      const load = module(name);
      return netnsError(ErrorCodes.UNSUPPORTED, `netlink: ${what}: this kernel has no ${load} (load it: modprobe ${load}): ${error.extack}`, { cause: error });
    }
  }
  return error;
}

/** Sends `request` on `link` (its index written into the tcmsg), a missing module reported as ERR_NETNS_UNSUPPORTED. */
export async function sendTc(nl: NetlinkHandle, links: Links, request: NetlinkRequest, link: LinkRef, modules: Parameters<typeof unsupportedOr>[2] = {}): Promise<void> {
  try {
    await sendOnLink(nl, links, request, link);
  } catch (error) {
    throw unsupportedOr(error, request.what, modules);
  }
}
