// NSID messages without a kernel: the bytes against what `ip netns set /
// list-id` (iproute2 6.1) sent, captured with `strace -e write=`, with the
// namespace's descriptor as fd 6; the kernel's answers decoded; bad input
// refused before anything is sent.
import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { NetNS } from '../../dist/index.js';
import { attr, ErrorCodes, openNetlink } from '../../dist/netlink/index.js';
import { encodeAttributes } from '../../dist/netlink/attributes.js';
import { ack, done, errorReply, expectRefusedUnsent, fake, FakeNs, hex, nlmsg, type Sent } from '../helpers/netlink-wire.js';

const RTM_NEWNSID = 88;
const RTM_GETNSID = 90;

/** An RTM_NEWNSID as the kernel answers: rtgenmsg padded to 4, NETNSA_NSID, NETNSA_CURRENT_NSID if given. */
function nsidReply(seq: number, nsid: number, current?: number, flags = 0): Buffer {
  const attributes = [attr.s32(1, nsid), ...(current === undefined ? [] : [attr.s32(5, current)])];
  return nlmsg(RTM_NEWNSID, flags, seq, Buffer.concat([Buffer.alloc(4), encodeAttributes(attributes)]));
}

/** The message as sent, its seq zeroed: to compare with ip's capture. */
const withoutSeq = (m: Sent): Buffer => Buffer.concat([m.bytes.subarray(0, 8), Buffer.alloc(4), m.bytes.subarray(12)]);

// ip's bytes, but for set's flags: ip asks for an ACK where this layer asks
// for the kernel's echo of the id assigned (docs/netlink.md).
describe('nsid requests as ip sends them', () => {
  it('ip netns set NS 5: NETNSA_FD then NETNSA_NSID; "auto" is -1', async () => {
    const { sent, transport } = fake((m) => [nsidReply(m.seq, 5)]);
    const nl = await openNetlink(undefined, { transport });
    await expect(nl.nsids.set(new FakeNs(6), 5)).resolves.toBe(5);
    await nl.nsids.set(new FakeNs(6), 'auto');
    // flags 0x0009: REQUEST | ECHO (ip: 0x0005, REQUEST | ACK)
    expect(withoutSeq(sent[0]![0]!)).toEqual(hex('24000000 5800 0900 00000000 00000000 00 000000 0800 0300 06000000 0800 0100 05000000'));
    expect(withoutSeq(sent[1]![0]!)).toEqual(hex('24000000 5800 0900 00000000 00000000 00 000000 0800 0300 06000000 0800 0100 ffffffff'));
  });

  it('ip netns list (the id of NS): NETNSA_FD alone, as ip sends it', async () => {
    const { sent, transport } = fake((m) => [nsidReply(m.seq, 7)]);
    const nl = await openNetlink(undefined, { transport });
    await expect(nl.nsids.get(new FakeNs(6))).resolves.toBe(7);
    expect(withoutSeq(sent[0]![0]!)).toEqual(hex('1c000000 5a00 0100 00000000 00000000 00 000000 0800 0300 06000000'));
  });

  it('ip netns list-id target-nsid 5 nsid 0: a lookup by NETNSA_NSID, then NETNSA_TARGET_NSID, as ip sends it', async () => {
    const { sent, transport } = fake((m) => [nsidReply(m.seq, 3, 0)]);
    const nl = await openNetlink(undefined, { transport });
    await expect(nl.nsids.list({ targetNsid: 5, nsid: 0 })).resolves.toEqual([{ nsid: 3, currentNsid: 0 }]);
    expect(withoutSeq(sent[0]![0]!)).toEqual(hex('24000000 5a00 0100 00000000 00000000 00 000000 0800 0100 00000000 0800 0400 05000000'));
  });

  it('ip netns list-id [target-nsid 5]: a dump (REQUEST | DUMP), with NETNSA_TARGET_NSID when filtered', async () => {
    const { sent, transport } = fake((m) => [nsidReply(m.seq, 0, undefined, 2), nsidReply(m.seq, 4, 1, 2), done(m.seq)]);
    const nl = await openNetlink(undefined, { transport });
    await expect(nl.nsids.list()).resolves.toEqual([{ nsid: 0 }, { nsid: 4, currentNsid: 1 }]);
    await nl.nsids.list({ targetNsid: 5 });
    expect(withoutSeq(sent[0]![0]!)).toEqual(hex('14000000 5a00 0103 00000000 00000000 00 000000'));
    expect(withoutSeq(sent[1]![0]!)).toEqual(hex('1c000000 5a00 0103 00000000 00000000 00 000000 0800 0400 05000000'));
  });

  it('a process is named by NETNSA_PID (u32)', async () => {
    const { sent, transport } = fake((m) => [nsidReply(m.seq, -1)]);
    const nl = await openNetlink(undefined, { transport });
    await nl.nsids.get({ pid: 4321 });
    expect(sent[0]![0]!.payload.subarray(4)).toEqual(hex('0800 0200 e1100000'));
  });
});

describe('the kernel’s answers', () => {
  it('NETNSA_NSID_NOT_ASSIGNED (-1) reads as none, here and as a current-nsid', async () => {
    const { transport } = fake((m) => (m.type === RTM_GETNSID && (m.flags & 0x300) === 0 ? [nsidReply(m.seq, -1, 2)] : [nsidReply(m.seq, 6, -1, 2), done(m.seq)]));
    const nl = await openNetlink(undefined, { transport });
    await expect(nl.nsids.get(new FakeNs(6))).resolves.toBeUndefined();
    await expect(nl.nsids.list({ targetNsid: 1, nsid: 2 })).resolves.toEqual([{ currentNsid: 2 }]);
    await expect(nl.nsids.list({ targetNsid: 1 })).resolves.toEqual([{ nsid: 6 }]);
  });

  it('a refusal keeps its errno and gives the extended-ACK text as extack', async () => {
    const { transport } = fake((m) => [errorReply(m, 17, 'Peer netns already has a nsid assigned')]);
    const nl = await openNetlink(undefined, { transport });
    await expect(nl.nsids.set(new FakeNs(6), 3)).rejects.toMatchObject({
      code: 'EEXIST',
      errno: -17,
      extack: 'Peer netns already has a nsid assigned',
      message: 'netlink: set nsid 3 for /run/netns/NS: EEXIST: Peer netns already has a nsid assigned',
    });
  });

  it('a kernel that does not echo (before 5.4): an id asked for is the one assigned; for auto, the error says it was assigned', async () => {
    const { transport } = fake(() => []);
    const nl = await openNetlink(undefined, { transport });
    await expect(nl.nsids.set(new FakeNs(6), 8)).resolves.toBe(8);
    await expect(nl.nsids.set(new FakeNs(6), 'auto')).rejects.toMatchObject({ code: ErrorCodes.NETLINK_MALFORMED, message: expect.stringContaining('assigned, but') });
  });

  it('names(): one GETNSID per name in one sendmsg; names that cannot be opened, have no id or are refused left out; of two names for one id the first wins', async () => {
    const answers = [(seq: number) => nsidReply(seq, 4), (seq: number) => nsidReply(seq, -1), null, (seq: number) => nsidReply(seq, 4), (seq: number) => nsidReply(seq, 9)];
    let n = 0;
    const { sent, transport } = fake((m) => {
      const answer = answers[n++];
      return answer ? [answer(m.seq)] : [errorReply(m, 22, 'Peer netns reference is invalid')];
    });
    const nl = await openNetlink(undefined, { transport });
    const fds = readdirSync('/proc/self/fd').length;
    // Our own namespace stands for each: any network namespace file opens the same way.
    const own = '/proc/self/ns/net';
    const names = ['a', 'none', 'refused', 'a-again', 'd'].map((name) => ({ name, path: own }));
    const named = await nl.nsids.names([names[0]!, { name: 'gone', path: '/run/netns/nsnsid-absent' }, ...names.slice(1)]);
    expect(named).toEqual(new Map([[4, 'a'], [9, 'd']]));
    expect(sent).toHaveLength(1);
    expect(sent[0]!.map((m) => m.type)).toEqual([RTM_GETNSID, RTM_GETNSID, RTM_GETNSID, RTM_GETNSID, RTM_GETNSID]);
    expect(readdirSync('/proc/self/fd').length).toBe(fds);
  });
});

describe('bad input is refused before anything is sent (ERR_NETNS_INVALID_ARG)', () => {
  const cases: [string, Parameters<typeof expectRefusedUnsent>[0]][] = [
    ['a negative id', (nl) => nl.nsids.set(new FakeNs(6), -1)],
    ['an id over 2^31-1', (nl) => nl.nsids.set(new FakeNs(6), 2 ** 31)],
    ['a fractional id', (nl) => nl.nsids.set(new FakeNs(6), 1.5)],
    ['an id given as text', (nl) => nl.nsids.set(new FakeNs(6), '5' as unknown as number)],
    ['another word than auto', (nl) => nl.nsids.set(new FakeNs(6), 'AUTO' as 'auto')],
    ['no id', (nl) => nl.nsids.set(new FakeNs(6), undefined as unknown as number)],
    ['pid 0', (nl) => nl.nsids.get({ pid: 0 })],
    ['a pid as text', (nl) => nl.nsids.get({ pid: '1' as unknown as number })],
    ['an object without a pid', (nl) => nl.nsids.get({} as { pid: number })],
    ['null', (nl) => nl.nsids.get(null as unknown as string)],
    ['an empty name', (nl) => nl.nsids.get('')],
    ['a negative targetNsid', (nl) => nl.nsids.list({ targetNsid: -1 })],
    ['an nsid filter as text', (nl) => nl.nsids.list({ nsid: '0' as unknown as number })],
    ['a filter that is no object', (nl) => nl.nsids.list(5 as never)],
    ['names() of no array', (nl) => nl.nsids.names('a' as never)],
    ['names() of an entry without a path', (nl) => nl.nsids.names([{ name: 'a' } as never])],
  ];
  for (const [what, call] of cases) it(what, () => expectRefusedUnsent(call, ErrorCodes.INVALID_ARG));

  it('an inherited targetNsid is no filter', async () => {
    const { sent, transport } = fake((m) => [done(m.seq)]);
    const nl = await openNetlink(undefined, { transport });
    const proto = Object.prototype as { targetNsid?: number };
    proto.targetNsid = 5;
    try {
      await nl.nsids.list({});
    } finally {
      delete proto.targetNsid;
    }
    expect(sent[0]![0]!.payload.length).toBe(4);
  });

  it('a closed NetNS is ERR_NETNS_CLOSED, nothing sent', async () => {
    const { sent, transport } = fake(ack);
    const nl = await openNetlink(undefined, { transport });
    const ns = NetNS.open('/proc/self/ns/net');
    ns.close();
    await expect(nl.nsids.get(ns)).rejects.toMatchObject({ code: ErrorCodes.CLOSED });
    await expect(nl.nsids.set(ns, 1)).rejects.toMatchObject({ code: ErrorCodes.CLOSED });
    expect(sent).toEqual([]);
  });
});
