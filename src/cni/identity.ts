// Who a host-side resource belongs to, written where the kernel keeps it (a
// masquerade rule's comment, the host veth's IFLA_IFALIAS), so DEL and GC find
// the resources of one network, and of one attachment in it, after a restart.
// Both start with the attachment key, <sha512(network)[:16]>-<sha512(ifname:containerID)[:16]>
// (GC scopes by the first hash, DEL and GC judge by both):
//   alias:   <key>, if:<ifname>, id:<containerID>, net:<network>
//   comment: <key>, net: <network>, if: <ifname>, id: <containerID>
// The comment is the official plugins' nftables masquerade comment, byte for
// byte, cut to 128 bytes (nft's limit). The alias may hold 255 bytes and puts
// the network last, so that the whole container id and ifname survive: GC
// reads them back to release a stale attachment's IPAM allocation.
// The host veth's name comes from the key too (hostEndNames), because the
// alias can only be written once the link exists: the kernel ignores
// IFLA_IFALIAS in the message that makes it.
import { ErrorCodes, netnsError } from '../core/errors.js';
import { sha256Hex, sha512Hex } from '../core/hashes.js';
import type { Attachment } from './types.js';

const MAX_TAG = 128;
/** IFALIASZ less its NUL. */
const MAX_ALIAS = 255;

function checkName(what: string, value: unknown): void {
  if (typeof value !== 'string' || value === '') throw netnsError(ErrorCodes.INVALID_ARG, `${what} must be a non-empty string, got ${typeof value === 'string' ? 'an empty string' : typeof value}`);
}

const hash16 = (text: string): string => sha512Hex(text).slice(0, 16);

/** The first field of every tag of this network's resources, '-' included. */
export function networkTagPrefix(network: string): string {
  checkName('network', network);
  return `${hash16(network)}-`;
}

/** `<network hash>-<attachment hash>`: the part of a tag that identifies the attachment. */
export function attachmentKey(network: string, attachment: Attachment): string {
  checkName('containerID', attachment?.containerID);
  checkName('ifname', attachment?.ifname);
  return `${networkTagPrefix(network)}${hash16(`${attachment.ifname}:${attachment.containerID}`)}`;
}

const readable = (text: string): string => text.replace(/[^A-Za-z0-9_.-]/g, (c) => [...Buffer.from(c)].map((b) => `%${b.toString(16).padStart(2, '0')}`).join(''));

/** The host veth's alias (setupVeth's hostAlias), at most 255 bytes: attachmentOf reads the attachment back. */
export function hostAlias(network: string, attachment: Attachment): string {
  const alias = `${attachmentKey(network, attachment)}, if:${readable(attachment.ifname)}, id:${readable(attachment.containerID)}, net:${readable(network)}`;
  return alias.slice(0, MAX_ALIAS);
}

/**
 * The attachment a tag or alias of `network` names, if it carries its ifname
 * and container id whole (they hash to its key); undefined otherwise (another
 * network's, or cut short).
 */
export function attachmentOf(network: string, tag: string | null | undefined): Attachment | undefined {
  const key = keyOfTag(network, tag);
  if (key === undefined) return undefined;
  const fields = new Map(tag!.slice(key.length).split(', ').map((field) => [field.slice(0, field.indexOf(':') + 1), field.slice(field.indexOf(':') + 1)]));
  const [ifname, containerID] = [unreadable(fields.get('if:')), unreadable(fields.get('id:'))];
  if (!ifname || !containerID) return undefined;
  return attachmentKey(network, { containerID, ifname }) === key ? { containerID, ifname } : undefined;
}

/** `readable` undone; undefined for text that readable could not have made (a cut %XX). */
function unreadable(text: string | undefined): string | undefined {
  try {
    return text === undefined ? undefined : decodeURIComponent(text);
  } catch {
    return undefined;
  }
}

/** The attachment key a tag starts with, if it is one of `network`'s; undefined otherwise. */
export function keyOfTag(network: string, tag: string | null | undefined): string | undefined {
  const prefix = networkTagPrefix(network);
  if (tag === undefined || tag === null) return undefined; // a link with no alias (null as parsed JSON has it)
  if (typeof tag !== 'string') throw netnsError(ErrorCodes.INVALID_ARG, `keyOfTag: tag must be a string (a link's alias), got ${typeof tag}`);
  return tag.startsWith(prefix) ? leadingKey(tag) : undefined;
}

/** The attachment key a tag starts with, whichever network's (setupVeth knows the alias, not the network). */
export function leadingKey(tag: string): string | undefined {
  const key = /^[0-9a-f]{16}-[0-9a-f]{16}(?=,|$)/.exec(tag);
  return key?.[0];
}

/** How many names hostEndNames gives: the first, then the alternates for a name another link holds. */
const HOST_END_NAMES = 10;

/**
 * The names the host veth of the attachment with this key may have, in the
 * order setupVeth tries them: `veth`, 4 hex digits of the network hash (so GC
 * can tell its network's from the rest without knowing the attachment), then
 * 7 of sha256(`<key>:<n>`), n = 0..9; 15 bytes, IFNAMSIZ's limit. The next is
 * taken only when a link that is not this attachment's holds a name.
 */
export function hostEndNames(key: string): string[] {
  if (typeof key !== 'string' || !/^[0-9a-f]{16}-[0-9a-f]{16}$/.test(key)) throw netnsError(ErrorCodes.INVALID_ARG, 'hostEndNames: key must be an attachment key (attachmentKey)');
  const suffix = (n: number): string => sha256Hex(`${key}:${n}`).slice(0, 7);
  return Array.from({ length: HOST_END_NAMES }, (_, n) => `veth${key.slice(0, 4)}${suffix(n)}`);
}

/** Whether `name` has the shape of a hostEndNames name of `network`'s (which attachment's, only the alias says). */
export function isHostEndNameOf(network: string, name: string): boolean {
  return new RegExp(`^veth${networkTagPrefix(network).slice(0, 4)}[0-9a-f]{7}$`).test(name);
}

/** Printable ASCII as is; anything else %XX, so a comment prints safely and cuts at a byte without splitting a character. */
const printable = (text: string): string => text.replace(/[^\x20-\x7e]/g, (c) => [...Buffer.from(c)].map((b) => `%${b.toString(16).padStart(2, '0')}`).join(''));

/**
 * The official plugins' nftables masquerade comment for this attachment,
 * byte for byte: `<attachmentKey>, net: NETWORK, if: IFNAME, id: CONTAINERID`,
 * names without their `"`, the whole cut to 128 bytes (nft's limit). Their
 * GC keeps a rule only if its comment is exactly the one it computes for a
 * valid attachment, so ours must be that one. (Upstream writes other bytes
 * through nft syntax, where it cannot match its own computation anyway; here
 * they are %XX.)
 */
export function masqueradeComment(network: string, attachment: Attachment): string {
  const name = (text: string): string => printable(text.replaceAll('"', ''));
  return `${attachmentKey(network, attachment)}, net: ${name(network)}, if: ${name(attachment.ifname)}, id: ${name(attachment.containerID)}`.slice(0, MAX_TAG);
}
