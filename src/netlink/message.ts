// Netlink message framing (struct nlmsghdr: u32 len, u16 type, u16 flags,
// u32 seq, u32 port) and the kernel's answers: NLMSG_ERROR (an ACK when its
// error is 0) and NLMSG_DONE, each turned into a NetnsError shaped like Node's
// system errors.
import { util } from '../core/builtins.js';
import { ErrorCodes, NetnsError, netnsError, systemError } from '../core/errors.js';
import { AttributeMap, writeAttributes, attributesSize, type Attribute } from './attributes.js';
import { checkUint } from './checks.js';
import {
  NLM_F_ACK_TLVS,
  NLM_F_CAPPED,
  NLMSG_DONE,
  NLMSG_ERROR,
  NLMSG_HDRLEN,
  NLMSGERR_ATTR_MSG,
  NLMSGERR_SIZE,
} from './constants.js';

const align4 = (n: number): number => (n + 3) & ~3;

/** A message to send: its type and flags, a fixed family header, attributes. */
/** One request for NetlinkHandle.request() / requestSettled(): the handle adds seq and port. */
export interface NetlinkRequest {
  /** nlmsg_type: RTM_NEWLINK, RTM_GETROUTE... */
  type: number;
  /** nlmsg_flags beyond NLM_F_REQUEST (and the ACK the handle asks for): NLM_F_CREATE, NLM_F_EXCL, NLM_F_DUMP... */
  flags: number;
  /** The fixed header (ifinfomsg, ifaddrmsg, rtmsg...), already encoded. */
  header: Buffer;
  /** The attributes after the header, in order (see attr). */
  attributes?: readonly Attribute[];
  /** What the request does, for errors: "add address 10.0.0.1/24 on eth0". */
  what: string;
}

/** A message received. `payload` is everything after the nlmsghdr. */
export interface NetlinkMessage {
  /** nlmsg_type. */
  type: number;
  /** nlmsg_flags (NLM_F_MULTI, NLM_F_DUMP_INTR...). */
  flags: number;
  /** nlmsg_seq: the request's it answers; 0 for an event. */
  seq: number;
  /** nlmsg_pid: the port of the socket that caused it (0: the kernel). */
  port: number;
  /** Everything after the nlmsghdr: the fixed header, then attributes. */
  payload: Buffer;
}

/**
 * One nlmsghdr-framed message; `nlmsg_len` includes the last attribute's
 * padding. `extraFlags` are added to the request's own.
 */
export function encodeMessage(request: NetlinkRequest, seq: number, port: number, extraFlags = 0): Buffer {
  const size = messageSize(request);
  // Pooled (see quadBytes in validate.ts), zeroed for the padding.
  const out = Buffer.allocUnsafe(size).fill(0);
  writeMessage(out, 0, request, size, extraFlags, seq, port);
  return out;
}

/**
 * Requests laid end to end in one buffer for one sendmsg, with seqs from
 * `firstSeq` on, port 0 (the kernel knows the sender), `flags` added to each
 * request's own.
 */
export function encodeMessages(requests: readonly NetlinkRequest[], firstSeq: number, flags: number): Buffer {
  if (requests.length === 1) return encodeMessage(requests[0]!, firstSeq, 0, flags);
  const sizes = requests.map(messageSize);
  // Pooled (see quadBytes in validate.ts), zeroed for the padding.
  const out = Buffer.allocUnsafe(sizes.reduce((sum, size) => sum + size, 0)).fill(0);
  let offset = 0;
  for (let i = 0; i < requests.length; i++) {
    writeMessage(out, offset, requests[i]!, sizes[i]!, flags, (firstSeq + i) >>> 0, 0);
    offset += sizes[i]!;
  }
  return out;
}

// Optional, so read as an own property: never from a polluted Object.prototype.
function attributesOf(request: NetlinkRequest): readonly Attribute[] {
  return Object.hasOwn(request, 'attributes') ? (request.attributes ?? []) : [];
}

function messageSize(request: NetlinkRequest): number {
  if (!Buffer.isBuffer(request.header)) throw netnsError(ErrorCodes.NETLINK_INVALID, `netlink: ${String(request.what)}: the request's header must be a Buffer`);
  return NLMSG_HDRLEN + align4(request.header.length) + attributesSize(attributesOf(request));
}

/** `extraFlags` are added to the request's own. */
function writeMessage(out: Buffer, offset: number, request: NetlinkRequest, size: number, extraFlags: number, seq: number, port: number): void {
  checkUint(request.type, 'message type', 0xffff);
  const flags = checkUint(request.flags, 'message flags', 0xffff) | extraFlags;
  out.writeUInt32LE(size, offset);
  out.writeUInt16LE(request.type, offset + 4);
  out.writeUInt16LE(flags, offset + 6);
  out.writeUInt32LE(seq >>> 0, offset + 8);
  out.writeUInt32LE(port >>> 0, offset + 12);
  request.header.copy(out, offset + NLMSG_HDRLEN);
  writeAttributes(out, offset + NLMSG_HDRLEN + align4(request.header.length), attributesOf(request));
}

/** Splits a reply buffer into its messages. */
export function splitMessages(buffer: Buffer): NetlinkMessage[] {
  const messages: NetlinkMessage[] = [];
  let offset = 0;
  while (offset + NLMSG_HDRLEN <= buffer.length) {
    const length = buffer.readUInt32LE(offset);
    if (length < NLMSG_HDRLEN || offset + length > buffer.length) {
      throw netnsError(ErrorCodes.NETLINK_MALFORMED, `netlink: malformed message at byte ${offset}`);
    }
    messages.push({
      type: buffer.readUInt16LE(offset + 4),
      flags: buffer.readUInt16LE(offset + 6),
      seq: buffer.readUInt32LE(offset + 8),
      port: buffer.readUInt32LE(offset + 12),
      payload: buffer.subarray(offset + NLMSG_HDRLEN, offset + length),
    });
    offset += align4(length);
  }
  return messages;
}

/** Whether a message ends its request's answer (as the transport also judges). */
export function isTerminal(message: NetlinkMessage): boolean {
  return message.type === NLMSG_ERROR || message.type === NLMSG_DONE;
}

/**
 * The error an NLMSG_ERROR or NLMSG_DONE carries, or null for an ACK, a clean
 * DONE (an empty DONE included) or any other message.
 */
export function messageError(message: NetlinkMessage, what: string): NetnsError | null {
  if (message.type !== NLMSG_ERROR && message.type !== NLMSG_DONE) return null;
  if (message.payload.length < 4) {
    // A DONE may be bare; an NLMSG_ERROR without its error field says nothing, and is no ACK.
    return message.type === NLMSG_DONE ? null : (netnsError(ErrorCodes.NETLINK_MALFORMED, `netlink: ${what}: an error reply without its error`) as NetnsError);
  }
  const error = message.payload.readInt32LE(0);
  if (error === 0) return null;
  return kernelError(-error, what, extendedAckText(message));
}

/**
 * The extended-ACK message (NLMSGERR_ATTR_MSG), if any. In an NLMSG_ERROR the
 * TLVs follow the echoed request: only its header when CAPPED, else the whole
 * request. In a DONE they follow the int error directly.
 */
function extendedAckText(message: NetlinkMessage): string | undefined {
  if ((message.flags & NLM_F_ACK_TLVS) === 0) return undefined;
  let start = 4;
  if (message.type === NLMSG_ERROR) {
    if (message.payload.length < NLMSGERR_SIZE) return undefined;
    const echoed = message.payload.readUInt32LE(4);
    start = 4 + ((message.flags & NLM_F_CAPPED) !== 0 ? NLMSG_HDRLEN : align4(echoed));
  }
  if (start > message.payload.length) return undefined;
  try {
    return AttributeMap.parse(message.payload, start).string(NLMSGERR_ATTR_MSG);
  } catch {
    return undefined; // a text is a courtesy: never hide the errno behind a parse failure
  }
}

/**
 * "netlink: add address 10.0.0.1/24 on eth0: EEXIST: ipv4: Address already assigned",
 * with Node's description of the errno when the kernel gave no text. The text
 * alone is `extack`, for a caller that prints it as `ip` does.
 */
export function kernelError(errno: number, what: string, text?: string): NetnsError {
  const { code } = systemError(errno, 'netlink');
  const detail = text ?? util().getSystemErrorMap().get(-errno)?.[1] ?? 'unknown system error';
  return new NetnsError(code, `netlink: ${what}: ${code}: ${detail}`, { errno: -Math.abs(errno), syscall: 'netlink', extack: text });
}
