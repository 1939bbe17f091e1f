// The addon's netlink transport: a socket made inside a namespace answers for
// that namespace, and a transaction returns exactly its own replies. Messages
// are built by hand here; src/netlink/ is the typed layer on top.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { native } from '../../dist/core/native.js';
import { NetNS } from '../../dist/index.js';
import { openFdCount } from '../helpers/process-state.js';
import { privileged } from '../helpers/privileges.js';

const RTM_GETLINK = 18;
const RTM_NEWADDR = 20;
const NLMSG_ERROR = 2;
const NLMSG_DONE = 3;
const REQUEST_DUMP = 0x301;
const REQUEST_ACK = 0x5;

function message(type: number, flags: number, seq: number, body: Buffer): Buffer {
  const header = Buffer.alloc(16);
  header.writeUInt32LE(16 + body.length, 0);
  header.writeUInt16LE(type, 4);
  header.writeUInt16LE(flags, 6);
  header.writeUInt32LE(seq, 8);
  return Buffer.concat([header, body]);
}

const linkDump = (seq: number) => message(RTM_GETLINK, REQUEST_DUMP, seq, Buffer.alloc(16));

/** [type, seq] of each message in a reply stream. */
function parse(stream: Buffer | null): [number, number][] {
  if (stream === null) throw new Error('expected replies, got null (bare ACKs only)');
  const messages: [number, number][] = [];
  for (let offset = 0; offset + 16 <= stream.length; offset += (stream.readUInt32LE(offset) + 3) & ~3) {
    messages.push([stream.readUInt16LE(offset + 4), stream.readUInt32LE(offset + 8)]);
  }
  return messages;
}

describe.skipIf(!privileged)('netlink transport', () => {
  let ns: NetNS;
  let socket: { fd: number; portId: number };

  beforeAll(async () => {
    ns = await NetNS.create(`nsnl-${process.pid}`);
    socket = await native().netlinkOpen(ns.fd, 0);
  });

  afterAll(async () => {
    if (socket) native().closeFd(socket.fd);
    ns?.close();
    await NetNS.delete(`nsnl-${process.pid}`).catch(() => {});
  });

  it("answers for the namespace it was made in: a fresh one has only lo", () => {
    const replies = parse(native().netlinkTransact(socket.fd, linkDump(1), 1, 1));
    expect(replies).toEqual([
      [16, 1],
      [NLMSG_DONE, 1],
    ]);
    expect(socket.portId).toBeGreaterThan(0);
  });

  it('runs several requests in one send and returns each one its terminal reply, in order', () => {
    // Two RTM_NEWADDR without attributes: the kernel refuses each with an error reply.
    const bad = (seq: number) => message(RTM_NEWADDR, REQUEST_ACK, seq, Buffer.alloc(8));
    const replies = native().netlinkTransact(socket.fd, Buffer.concat([bad(10), bad(11), linkDump(12)]), 10, 3);
    expect(parse(replies)).toEqual([
      [NLMSG_ERROR, 10],
      [NLMSG_ERROR, 11],
      [16, 12],
      [NLMSG_DONE, 12],
    ]);
    expect(replies!.readInt32LE(16)).toBeLessThan(0); // the first reply's error: -errno
  });

  it('returns null when every request was simply acknowledged, the replies when one was not', () => {
    // RTM_NEWADDR / DELADDR of 10.1.1.1/32 on lo (index 1): ifaddrmsg, then IFA_LOCAL.
    const address = (type: number, flags: number, seq: number) =>
      message(type, flags, seq, Buffer.from([2, 32, 0, 0, 1, 0, 0, 0, 8, 0, 2, 0, 10, 1, 1, 1]));
    const RTM_DELADDR = 21;
    expect(native().netlinkTransact(socket.fd, address(RTM_NEWADDR, REQUEST_ACK | 0x600, 30), 30, 1)).toBeNull();
    // deleted twice: the second is refused, so the whole batch's replies come back
    const replies = native().netlinkTransact(socket.fd, Buffer.concat([address(RTM_DELADDR, REQUEST_ACK, 31), address(RTM_DELADDR, REQUEST_ACK, 32)]), 31, 2);
    expect(parse(replies)).toEqual([
      [NLMSG_ERROR, 31],
      [NLMSG_ERROR, 32],
    ]);
    expect([replies!.readInt32LE(16), replies!.readInt32LE(16 + 36)]).toEqual([0, -99]); // ACK, then EADDRNOTAVAIL
  });

  it('quiet (no ACK asked for): a success returns null at once, a failure its error, a GET its answer', () => {
    const address = (type: number, flags: number, seq: number) =>
      message(type, flags, seq, Buffer.from([2, 32, 0, 0, 1, 0, 0, 0, 8, 0, 2, 0, 10, 1, 1, 2]));
    const REQUEST = 0x1;
    expect(native().netlinkTransact(socket.fd, address(RTM_NEWADDR, REQUEST | 0x600, 40), 40, 1, true)).toBeNull();
    const again = native().netlinkTransact(socket.fd, address(RTM_NEWADDR, REQUEST | 0x600, 41), 41, 1, true);
    expect(parse(again)).toEqual([[NLMSG_ERROR, 41]]);
    expect(again!.readInt32LE(16)).toBe(-17); // EEXIST
    const lo = Buffer.alloc(16);
    lo.writeInt32LE(1, 4);
    expect(parse(native().netlinkTransact(socket.fd, message(RTM_GETLINK, REQUEST, 42, lo), 42, 1, true))).toEqual([[16, 42]]);
    expect(native().netlinkTransact(socket.fd, address(21, REQUEST, 43), 43, 1, true)).toBeNull(); // RTM_DELADDR
  });

  it('drops replies of other seqs', () => {
    const bad = message(RTM_NEWADDR, REQUEST_ACK, 20, Buffer.alloc(8));
    // seq 20's error reply comes first, but only seq 21 is this transaction's.
    expect(parse(native().netlinkTransact(socket.fd, Buffer.concat([bad, linkDump(21)]), 21, 1))).toEqual([
      [16, 21],
      [NLMSG_DONE, 21],
    ]);
  });

  it('leaves no descriptor behind over many sockets and transactions', async () => {
    const before = openFdCount();
    for (let i = 0; i < 200; i++) {
      const { fd } = await native().netlinkOpen(ns.fd, 0);
      for (let k = 0; k < 5; k++) native().netlinkTransact(fd, linkDump(100 + k), 100 + k, 1);
      native().closeFd(fd);
    }
    // An I/O thread the pool starts meanwhile holds its home namespace open: 2 at most; a leak would be 200.
    expect(Math.abs(openFdCount() - before)).toBeLessThanOrEqual(2);
  });

  it('refuses bad arguments with a TypeError, and a closed descriptor with EBADF', () => {
    expect(() => native().netlinkTransact(socket.fd, 'x' as unknown as Buffer, 1, 1)).toThrow(TypeError);
    expect(() => native().netlinkTransact(socket.fd, linkDump(1), 1, 0)).toThrow(RangeError); // nothing to wait for would leave a dump undrained
    expect(() => native().netlinkTransact(-1, linkDump(1), 1, 1)).toThrow(expect.objectContaining({ code: 'EBADF' }));
  });
});
