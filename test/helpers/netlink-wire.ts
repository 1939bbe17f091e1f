// Netlink messages without a kernel: what a test's fake transport saw sent,
// and the replies it answers with, shaped as the kernel shapes them.
import { expect } from 'vitest';
import { NsHandle } from '../../dist/core/handle.js';
import { attr, ErrorCodes, openNetlink, type Netlink, type NetlinkTransport } from '../../dist/netlink/index.js';
import { encodeAttributes } from '../../dist/netlink/attributes.js';
import { encodeMessages } from '../../dist/netlink/message.js';

/** A namespace handle standing for `fd`, as `ip` had /run/netns/NS open (never closed: the fd is not ours). */
export class FakeNs extends NsHandle {
  constructor(fd: number) {
    super('/run/netns/NS', fd, 0, 0);
  }
}

export const hex = (s: string): Buffer => Buffer.from(s.replace(/[^0-9a-f]/gi, ''), 'hex');

export interface Sent {
  type: number;
  flags: number;
  seq: number;
  bytes: Buffer;
  payload: Buffer;
}

export function split(buffer: Buffer): Sent[] {
  const out: Sent[] = [];
  for (let o = 0; o < buffer.length; ) {
    const len = buffer.readUInt32LE(o);
    const bytes = buffer.subarray(o, o + len);
    out.push({ type: bytes.readUInt16LE(4), flags: bytes.readUInt16LE(6), seq: bytes.readUInt32LE(8), bytes, payload: bytes.subarray(16) });
    o += (len + 3) & ~3;
  }
  return out;
}

/** Each request as encoded for sending (NLM_F_REQUEST), its seq zeroed, in hex: to compare with another tool's captures. */
export function wire(requests: Parameters<typeof encodeMessages>[0]): string[] {
  return split(encodeMessages(requests, 0, 1)).map(({ bytes }) => {
    const message = Buffer.from(bytes);
    message.fill(0, 8, 12);
    return message.toString('hex');
  });
}

export function nlmsg(type: number, flags: number, seq: number, payload: Buffer): Buffer {
  const head = Buffer.alloc(16);
  head.writeUInt32LE(16 + payload.length, 0);
  head.writeUInt16LE(type, 4);
  head.writeUInt16LE(flags, 6);
  head.writeUInt32LE(seq, 8);
  head.writeUInt32LE(4242, 12);
  return Buffer.concat([head, payload]);
}

/** An NLMSG_ERROR as the kernel sends it with CAP_ACK: error, the request's header, then TLVs. */
export function errorReply(request: Sent, errno: number, text?: string): Buffer {
  const err = Buffer.alloc(4);
  err.writeInt32LE(-errno);
  const tlvs = text === undefined ? Buffer.alloc(0) : encodeAttributes([attr.string(1, text)]);
  const flags = errno === 0 ? 0x100 : 0x100 | (text === undefined ? 0 : 0x200);
  return nlmsg(2, flags, request.seq, Buffer.concat([err, request.bytes.subarray(0, 16), tlvs]));
}

export const done = (seq: number, flags = 2): Buffer => nlmsg(3, flags, seq, Buffer.alloc(4));

export const ack = (m: Sent): Buffer[] => [errorReply(m, 0)];

/** A transport answering each request with `answer`; records what was sent (one array per transaction) and closed. */
export function fake(answer: (request: Sent, call: number) => Buffer[]) {
  const sent: Sent[][] = [];
  const closed: number[] = [];
  const transport: NetlinkTransport = {
    open: async () => ({ fd: 77, portId: 4242 }),
    transact(_fd, request, firstSeq, count) {
      const messages = split(request);
      expect(messages.map((m) => m.seq)).toEqual(Array.from({ length: count }, (_, i) => firstSeq + i));
      sent.push(messages);
      return Buffer.concat(messages.flatMap((m) => answer(m, sent.length)));
    },
    close: (fd) => void closed.push(fd),
  };
  return { sent, closed, transport };
}

/** `call` is refused as bad input (`code`) before any message is sent. */
export async function expectRefusedUnsent(call: (nl: Netlink) => Promise<unknown>, code: string = ErrorCodes.NETLINK_INVALID): Promise<void> {
  const { sent, transport } = fake(ack);
  const nl = await openNetlink(undefined, { transport });
  await expect(call(nl)).rejects.toMatchObject({ code });
  expect(sent).toEqual([]);
  nl.close();
}
