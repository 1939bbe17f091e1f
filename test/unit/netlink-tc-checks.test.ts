// Traffic control without a kernel: bad specs refused before anything is sent;
// a kernel without the qdisc, classifier or action module answers with an
// ERR_NETNS_UNSUPPORTED naming it (what the lab falls back on); dumps this
// kernel cannot produce (netem, matchall), shaped as the kernel shapes them,
// read back in the specs' units.
import { describe, expect, it } from 'vitest';
import { attr, ErrorCodes, openNetlink, type Netlink } from '../../dist/netlink/index.js';
import { encodeAttributes } from '../../dist/netlink/attributes.js';
import { parsePsched } from '../../dist/netlink/tc-core.js';
import { done, errorReply, expectRefusedUnsent, fake, nlmsg, type Sent } from '../helpers/netlink-wire.js';

const anyKeys = <T>(spec: Record<string, unknown>): T => spec as T;

describe('bad tc specs are refused before anything is sent', () => {
  const refused: [string, (nl: Netlink) => Promise<unknown>][] = [
    ['tbf without limit or latency', (nl) => nl.qdiscs.add({ link: 3, kind: 'tbf', rate: 125_000, burst: 4096 })],
    ['tbf with both limit and latency', (nl) => nl.qdiscs.add({ link: 3, kind: 'tbf', rate: 125_000, burst: 4096, limit: 1, latency: 1 })],
    ['tbf rate 0', (nl) => nl.qdiscs.add({ link: 3, kind: 'tbf', rate: 0, burst: 4096, limit: 1 })],
    ['tbf rate in bits as a string', (nl) => nl.qdiscs.add(anyKeys({ link: 3, kind: 'tbf', rate: '1mbit', burst: 4096, limit: 1 }))],
    ['tbf burst too long at its rate for 32-bit ticks', (nl) => nl.qdiscs.add({ link: 3, kind: 'tbf', rate: 1, burst: 1_000_000, limit: 1 })],
    ['tbf with an unknown key (rtae)', (nl) => nl.qdiscs.add(anyKeys({ link: 3, kind: 'tbf', rtae: 1, rate: 1, burst: 1, limit: 1 }))],
    ['htb with a netem key (delay)', (nl) => nl.qdiscs.add(anyKeys({ link: 3, kind: 'htb', delay: 1 }))],
    ['an unknown qdisc kind', (nl) => nl.qdiscs.add(anyKeys({ link: 3, kind: 'sfq' }))],
    ['a qdisc handle with a minor', (nl) => nl.qdiscs.add({ link: 3, kind: 'pfifo', handle: '1:2' as never })],
    ['a qdisc handle not in hex', (nl) => nl.qdiscs.add({ link: 3, kind: 'pfifo', handle: 'x:' as never })],
    ['a parent that is no handle', (nl) => nl.qdiscs.add({ link: 3, kind: 'pfifo', parent: 'top' as never })],
    ['clsact at the root', (nl) => nl.qdiscs.add({ link: 3, kind: 'clsact', parent: 'root' })],
    ['tbf at the clsact hook', (nl) => nl.qdiscs.add({ link: 3, kind: 'tbf', parent: 'clsact', rate: 1, burst: 1, limit: 1 })],
    ['ingress with a handle other than ffff:', (nl) => nl.qdiscs.add({ link: 3, kind: 'ingress', handle: '1:' })],
    ['netem loss over 100%', (nl) => nl.qdiscs.add({ link: 3, kind: 'netem', loss: 101 })],
    ['netem delay in milliseconds as a fraction', (nl) => nl.qdiscs.add({ link: 3, kind: 'netem', delay: 0.5 })],
    ['netem delay past 32-bit ticks', (nl) => nl.qdiscs.add({ link: 3, kind: 'netem', delay: 300_000_000 })],
    ['netem reorder without a delay', (nl) => nl.qdiscs.add({ link: 3, kind: 'netem', reorder: 25 })],
    ['pfifo limit negative', (nl) => nl.qdiscs.add({ link: 3, kind: 'pfifo', limit: -1 })],
    ['qdiscs.delete with kind', (nl) => nl.qdiscs.delete(anyKeys({ link: 3, kind: 'tbf' }))],
    ['qdiscs.list with dev', (nl) => nl.qdiscs.list(anyKeys({ dev: 'v0' }))],
    ['a class whose classid has another major than its parent', (nl) => nl.classes.add({ link: 3, parent: '1:', classid: '2:10', kind: 'htb', rate: 1000 })],
    ['a classid without a minor', (nl) => nl.classes.add({ link: 3, parent: '1:', classid: '1:' as never, kind: 'htb', rate: 1000 })],
    ['a classid whose minor is 0 (the qdisc itself)', (nl) => nl.classes.add({ link: 3, parent: '1:', classid: '1:0' as never, kind: 'htb', rate: 1000 })],
    ['a class of a kind other than htb', (nl) => nl.classes.add(anyKeys({ link: 3, parent: '1:', classid: '1:1', kind: 'hfsc', rate: 1000 }))],
    ['a class without a rate', (nl) => nl.classes.add(anyKeys({ link: 3, parent: '1:', classid: '1:1', kind: 'htb' }))],
    ['a class with a netem key', (nl) => nl.classes.add(anyKeys({ link: 3, parent: '1:', classid: '1:1', kind: 'htb', rate: 1, delay: 1 }))],
    ['classes.list without a link', (nl) => nl.classes.list(anyKeys({}))],
    ['a u32 filter matching nothing', (nl) => nl.filters.add({ link: 3, parent: '1:', kind: 'u32', match: {}, classid: '1:10' })],
    ['a u32 match with an unknown key (dst)', (nl) => nl.filters.add({ link: 3, parent: '1:', kind: 'u32', match: anyKeys({ dst: '10.0.0.1' }), classid: '1:10' })],
    ['a u32 match of two families', (nl) => nl.filters.add({ link: 3, parent: '1:', kind: 'u32', match: { source: '10.0.0.1', destination: 'fd00::1' }, classid: '1:10' })],
    ['a u32 IPv6 match with protocol ip', (nl) => nl.filters.add({ link: 3, parent: '1:', protocol: 'ip', kind: 'u32', match: { destination: 'fd00::1' }, classid: '1:10' })],
    ['a u32 filter without a classid minor', (nl) => nl.filters.add({ link: 3, parent: '1:', kind: 'u32', match: { destination: '10.0.0.1' }, classid: '1:' as never })],
    ['a filter priority of 0', (nl) => nl.filters.add({ link: 3, parent: '1:', priority: 0, kind: 'u32', match: { destination: '10.0.0.1' }, classid: '1:10' })],
    ['a filter protocol arp', (nl) => nl.filters.add(anyKeys({ link: 3, parent: '1:', protocol: 'arp', kind: 'matchall', action: 'drop' }))],
    ['a matchall action other than drop', (nl) => nl.filters.add(anyKeys({ link: 3, parent: 'ingress', kind: 'matchall', action: 'pass' }))],
    ['a matchall filter with a classid', (nl) => nl.filters.add(anyKeys({ link: 3, parent: 'ingress', kind: 'matchall', action: 'drop', classid: '1:1' }))],
    ['an unknown classifier', (nl) => nl.filters.add(anyKeys({ link: 3, parent: 'ingress', kind: 'flower' }))],
    ['filters.delete with kind', (nl) => nl.filters.delete(anyKeys({ link: 3, parent: '1:', kind: 'u32' }))],
    ['filters.list with a bad parent', (nl) => nl.filters.list({ link: 3, parent: 'up' as never })],
  ];
  for (const [what, call] of refused) it(what, () => expectRefusedUnsent(call));

  it('names the method, the key and the known ones for an unknown key', async () => {
    const { sent, transport } = fake(() => []);
    const nl = await openNetlink(undefined, { transport });
    await expect(nl.qdiscs.add(anyKeys({ link: 3, kind: 'tbf', rate: 1, burst: 1, limti: 1 }))).rejects.toMatchObject({
      code: ErrorCodes.NETLINK_INVALID,
      message: expect.stringMatching(/qdiscs\.add: unknown key "limti" \(did you mean limit\?\); known: link, parent, handle, kind, rate, burst, limit, latency/),
    });
    expect(sent).toEqual([]);
    nl.close();
  });
});

describe('a kernel without the module: ERR_NETNS_UNSUPPORTED naming it', () => {
  /** The error `call` rejects with when the kernel answers every request with `errno` and `text`. */
  async function refusal(call: (nl: Netlink) => Promise<unknown>, errno: number, text?: string): Promise<Error & { code: string; cause?: unknown }> {
    const { transport } = fake((m: Sent) => [errorReply(m, errno, text)]);
    const nl = await openNetlink(undefined, { transport });
    try {
      return await call(nl).then(
        () => expect.fail('resolved'),
        (e: unknown) => e as Error & { code: string },
      );
    } finally {
      nl.close();
    }
  }

  it('netem: sch_netem, the kernel error kept as cause', async () => {
    const error = await refusal((nl) => nl.qdiscs.add({ link: 3, kind: 'netem', delay: 100_000 }), 2, 'Specified qdisc kind is unknown');
    expect(error).toMatchObject({ code: ErrorCodes.UNSUPPORTED, message: expect.stringMatching(/^netlink: tc qdisc add dev #3 root netem: this kernel has no sch_netem \(load it: modprobe sch_netem\)/) });
    expect(error.cause).toMatchObject({ code: 'ENOENT', syscall: 'netlink', extack: 'Specified qdisc kind is unknown' });
  });

  it('matchall: cls_matchall; its drop action: act_gact', async () => {
    const drop = (nl: Netlink) => nl.filters.add({ link: 3, parent: 'ingress', kind: 'matchall', action: 'drop' });
    expect(await refusal(drop, 2, 'TC classifier not found')).toMatchObject({ code: ErrorCodes.UNSUPPORTED, message: expect.stringContaining('modprobe cls_matchall') });
    expect(await refusal(drop, 95, 'Failed to load TC action module')).toMatchObject({ code: ErrorCodes.UNSUPPORTED, message: expect.stringContaining('modprobe act_gact') });
  });

  it('any other ENOENT stays ENOENT (a parent that is not there)', async () => {
    const error = await refusal((nl) => nl.qdiscs.add({ link: 3, parent: '1:10', kind: 'pfifo' }), 2, 'Failed to find specified qdisc');
    expect(error).toMatchObject({ code: 'ENOENT', message: expect.stringMatching(/^netlink: tc qdisc add dev #3 parent 1:10 pfifo: ENOENT: Failed to find specified qdisc/) });
  });
});

describe('dumps read back in the units of the specs', () => {
  /** struct tcmsg for a reply. */
  function tcmsg(index: number, handle: number, parent: number, info = 0): Buffer {
    const out = Buffer.alloc(20);
    out.writeInt32LE(index, 4);
    out.writeUInt32LE(handle, 8);
    out.writeUInt32LE(parent, 12);
    out.writeUInt32LE(info, 16);
    return out;
  }
  const u64 = (type: number, n: bigint): ReturnType<typeof attr.bytes> => {
    const value = Buffer.alloc(8);
    value.writeBigInt64LE(n);
    return attr.bytes(type, value);
  };

  it('netem: times from the 64-bit nanosecond attributes, probabilities as percentages, the rate', async () => {
    // As net/sched/sch_netem.c netem_dump() answers for `netem delay 100ms 10ms loss 1% duplicate 2% corrupt 0.1% limit 500 rate 1mbit`.
    const qopt = Buffer.alloc(24);
    [1_562_500, 500, 42_949_673, 0, 85_899_346, 156_250].forEach((n, i) => qopt.writeUInt32LE(n, i * 4));
    const corrupt = Buffer.alloc(8);
    corrupt.writeUInt32LE(4_294_967, 0);
    const rate = Buffer.alloc(16);
    rate.writeUInt32LE(125_000, 0);
    const options = Buffer.concat([qopt, encodeAttributes([attr.bytes(4, corrupt), attr.bytes(6, rate), u64(10, 100_000_000n), u64(11, 10_000_000n)])]);
    const reply = (m: Sent) => [nlmsg(36, 2, m.seq, Buffer.concat([tcmsg(3, 0x80010000, 0xffffffff), encodeAttributes([attr.string(1, 'netem'), attr.bytes(2, options)])])), done(m.seq)];
    const { transport } = fake(reply);
    const nl = await openNetlink(undefined, { transport });
    expect(await nl.qdiscs.list({ link: 3 })).toEqual([
      { link: 3, kind: 'netem', handle: '8001:', parent: 'root', options: { delay: 100_000, jitter: 10_000, loss: 1, duplicate: 2, corrupt: 0.1, reorder: 0, limit: 500, rate: 125_000 } },
    ]);
    nl.close();
  });

  it('matchall: its parent hook, priority, protocol and drop action; a classifier head without a handle is not a filter', async () => {
    const gact = Buffer.alloc(20);
    gact.writeInt32LE(2, 8);
    const action = attr.nest(1, [attr.string(1, 'gact'), attr.nest(2, [attr.bytes(2, gact)])]);
    const body = encodeAttributes([attr.string(1, 'matchall'), attr.nest(2, [attr.nest(2, [action])])]);
    const reply = (m: Sent) => [
      nlmsg(44, 2, m.seq, Buffer.concat([tcmsg(3, 0, 0xfffffff2, 0x00010300), encodeAttributes([attr.string(1, 'matchall')])])),
      nlmsg(44, 2, m.seq, Buffer.concat([tcmsg(3, 1, 0xfffffff2, 0x00010300), body])),
      done(m.seq),
    ];
    const { transport } = fake(reply);
    const nl = await openNetlink(undefined, { transport });
    expect(await nl.filters.list({ link: 3, parent: 'ingress' })).toEqual([{ link: 3, parent: 'ingress', priority: 1, protocol: 'all', kind: 'matchall', handle: 1, action: 'drop' }]);
    nl.close();
  });

  it('the scheduler clock as tc reads /proc/net/psched', () => {
    expect(parsePsched('000003e8 00000040 000f4240 3b9aca00\n')).toEqual({ ticksPerUsec: 15.625, hz: 1_000_000_000 });
    // An old kernel's nanosecond clock_res: t2us is taken as us2t (tc_core_init's compatibility hack).
    expect(parsePsched('000003e8 00000040 3b9aca00 3b9aca00')).toEqual({ ticksPerUsec: 1000, hz: 100 });
  });
});
