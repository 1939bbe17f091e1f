// Regressions from a hostile probe of the netlink layer, without a kernel: a
// polluted Object.prototype reaches neither what is parsed nor what is sent;
// a large batch is checked whole before its first part goes; raw requests
// that cannot work are refused unsent; replies cut short are coded errors.
import { afterEach, describe, expect, it } from 'vitest';
import { attr, AttributeMap, ErrorCodes, openNetlink, type NetlinkTransport } from '../../dist/netlink/index.js';
import { encodeAttributes } from '../../dist/netlink/attributes.js';
import { addAddressRequest } from '../../dist/netlink/addresses.js';
import { ack, fake, nlmsg, split, type Sent } from '../helpers/netlink-wire.js';

const polluted = Object.prototype as Record<PropertyKey, unknown>;
const pollutions: PropertyKey[] = [];
function pollute(key: PropertyKey, value: unknown): void {
  polluted[key] = value;
  pollutions.push(key);
}
afterEach(() => {
  for (const key of pollutions.splice(0)) delete polluted[key];
});

/** An RTM_NEWLINK for `index` named `name` with mtu 1500. */
function linkMessage(seq: number, index: number, name: string): Buffer {
  const head = Buffer.alloc(16);
  head.writeInt32LE(index, 4);
  return nlmsg(16, 2, seq, Buffer.concat([head, encodeAttributes([attr.string(3, name), attr.u32(4, 1500)])]));
}

const answerLinks = (m: Sent): Buffer[] => [linkMessage(m.seq, 7, 'veth0'), nlmsg(3, 2, m.seq, Buffer.alloc(4))];

describe('a polluted Object.prototype', () => {
  it('is not read as an attribute of a parsed message', async () => {
    pollute(3, 0); // IFLA_IFNAME
    pollute(4, 2); // IFLA_MTU
    pollute(2, 0);
    expect(AttributeMap.parse(encodeAttributes([attr.u32(1, 9)])).has(2)).toBe(false);
    const { transport } = fake(answerLinks);
    const nl = await openNetlink(undefined, { transport });
    expect((await nl.links.list()).map((l) => [l.name, l.mtu])).toEqual([['veth0', 1500]]);
    nl.close();
  });

  it('changes no byte sent: attribute values, raw attributes, a veth peer namespace', async () => {
    // Not the helpers' fake: vitest's own expect() breaks under a polluted `value`.
    const send = async () => {
      const sent: string[] = [];
      const transport: NetlinkTransport = {
        open: async () => ({ fd: 77, portId: 4242 }),
        transact(_fd, request) {
          const messages = split(request);
          for (const m of messages) sent.push(`${m.type} ${m.payload.toString('hex')}`);
          return Buffer.concat(messages.flatMap((m) => (m.type === 18 ? [linkMessage(m.seq, 7, 'x'), ...ack(m)] : ack(m))));
        },
        close: () => undefined,
      };
      const nl = await openNetlink(undefined, { transport });
      await nl.links.add({ kind: 'bridge', name: 'br0', mtu: 1400 });
      await nl.handle.request([{ type: 16, flags: 0, header: Buffer.alloc(16), what: 'raw' }]);
      await nl.links.add({ kind: 'veth', name: 'v0', peer: { name: 'v1' } });
      nl.close();
      return sent;
    };
    const clean = await send();
    pollute('value', Buffer.from('cafebabe', 'hex'));
    pollute('attributes', [attr.u32(10, 1)]);
    pollute('netns', {});
    const dirty = await send();
    for (const key of pollutions.splice(0)) delete polluted[key];
    expect(dirty).toEqual(clean);
  });
});

describe('a spec is read once, as its own properties', () => {
  /** The messages sent, as "type payload-hex"; `onSend` runs inside each transaction (a lookup included). */
  function recordingTransport(onSend: (type: number) => void = () => undefined) {
    const sent: string[] = [];
    const transport: NetlinkTransport = {
      open: async () => ({ fd: 77, portId: 4242 }),
      transact(_fd, request) {
        const messages = split(request);
        for (const m of messages) {
          sent.push(`${m.type} ${m.payload.toString('hex')}`);
          onSend(m.type);
        }
        return Buffer.concat(messages.flatMap((m) => (m.type === 18 ? [linkMessage(m.seq, 7, 'x'), ...ack(m)] : ack(m))));
      },
      close: () => undefined,
    };
    return { sent, transport };
  }

  it('a property defined on Object.prototype, not enumerable, is no option', async () => {
    const send = async () => {
      const { sent, transport } = recordingTransport();
      const nl = await openNetlink(undefined, { transport });
      await nl.routes.add({ destination: '198.51.100.0/24', device: 3 });
      await nl.links.add({ kind: 'veth', name: 'pa', peer: { name: 'pb' } });
      await nl.neighbours.add({ link: 3, address: '10.9.9.8' });
      nl.close();
      return sent;
    };
    const clean = await send();
    for (const [key, value] of Object.entries({ gateway: '192.0.2.66', metric: 7, up: true, mtu: 1280, advmss: 1200, proxy: true })) {
      Object.defineProperty(Object.prototype, key, { value, configurable: true, writable: true });
      pollutions.push(key);
    }
    expect(await send()).toEqual(clean);
  });

  it('pollution that lands while a call awaits a lookup is no option either', async () => {
    const send = async (polluteDuringLookup: boolean) => {
      const { sent, transport } = recordingTransport((type) => {
        if (type === 18 && polluteDuringLookup) pollute('up', true); // the master's lookup
      });
      const nl = await openNetlink(undefined, { transport });
      await nl.links.add({ kind: 'veth', name: 'pg', peer: { name: 'ph' }, master: 'tbridge' });
      nl.close();
      return sent;
    };
    const clean = await send(false);
    expect(await send(true)).toEqual(clean);
  });

  it('a getter is read once: the lladdr checked is the lladdr sent, the link looked up is the link used', async () => {
    const { sent, transport } = recordingTransport();
    const nl = await openNetlink(undefined, { transport });
    let reads = 0;
    const spec = {
      address: '10.8.2.2',
      link: 3,
      get lladdr() {
        return reads++ === 0 ? '0a:0b:0c:0d:0e:0f:10:11:12:13' : '02:00:00:00:00:01';
      },
    };
    await expect(nl.neighbours.add(spec)).rejects.toMatchObject({ code: ErrorCodes.NETLINK_INVALID, message: expect.stringContaining('is 10 bytes') });
    expect(sent.map((m) => m.split(' ')[0])).toEqual(['18']); // the lookup only
    let links = 0;
    await nl.neighbours.add({ address: '10.8.2.3', proxy: true, get link() { return links++ === 0 ? 3 : Number.NaN; } });
    expect(sent.at(-1)!.slice(0, 3 + 16)).toBe(`28 0200000003000000`); // ndmsg: AF_INET, index 3
    nl.close();
  });
});

describe('openNetlink options the types allow or not', () => {
  it('a bad transport, protocol, isGet or options value is a coded error, not a TypeError later', async () => {
    const cases: unknown[] = [null, 5, 'x', { transport: 'x' }, { transport: { open() {} } }, { protocol: 999 }, { protocol: -1 }, { protocol: '12' }, { isGet: 'x' }];
    for (const options of cases) {
      await expect(openNetlink(undefined, options as never), JSON.stringify(options)).rejects.toMatchObject({ code: ErrorCodes.INVALID_ARG });
    }
  });

  it('an inherited acceptInterrupted does not make a dump take an interrupted answer', async () => {
    pollute('acceptInterrupted', true);
    // Every answer marked NLM_F_DUMP_INTR (0x10): only an explicit acceptInterrupted may take one.
    const { transport } = fake((m) => [nlmsg(16, 2 | 0x10, m.seq, linkMessage(m.seq, 7, 'veth0').subarray(16)), nlmsg(3, 2 | 0x10, m.seq, Buffer.alloc(4))]);
    const nl = await openNetlink(undefined, { transport });
    await expect(nl.links.list()).rejects.toMatchObject({ code: ErrorCodes.NETLINK_DUMP_INTERRUPTED });
    expect((await nl.handle.dump(18, Buffer.alloc(16), [], 'list links', { acceptInterrupted: true })).length).toBe(1);
    await expect(nl.handle.dump(18, Buffer.alloc(16), [], 'list links', null as never)).rejects.toMatchObject({ code: ErrorCodes.INVALID_ARG });
    await expect(nl.handle.dump(18, Buffer.alloc(16), [], 'list links', { acceptInterrupted: 'yes' } as never)).rejects.toMatchObject({ code: ErrorCodes.INVALID_ARG });
    nl.close();
  });

  it('never takes a transport from a polluted Object.prototype', async () => {
    const { transport, sent } = fake(ack);
    pollute('transport', transport);
    const nl = await openNetlink(undefined, {}); // the addon's socket, in this namespace: reading needs no privilege
    expect((await nl.links.list()).some((link) => link.name === 'lo')).toBe(true);
    nl.close();
    expect(sent).toEqual([]);
  });
});

describe('raw requests', () => {
  it('a batch over 128 requests with a bad one late is refused whole: nothing is sent', async () => {
    const { sent, transport } = fake(ack);
    const nl = await openNetlink(undefined, { transport });
    const requests = Array.from({ length: 300 }, (_, i) => addAddressRequest({ link: 1, address: `10.9.${i >> 8}.${i & 255}/32` }, 1));
    requests[200]!.flags = 0x10000;
    await expect(nl.handle.requestSettled(requests)).rejects.toMatchObject({ code: ErrorCodes.NETLINK_INVALID });
    expect(sent).toEqual([]);
    nl.close();
  });

  it('a dump of a type that is not a GET (or below RTM_BASE), and a header that is not a Buffer, are refused unsent', async () => {
    const { sent, transport } = fake(ack);
    const nl = await openNetlink(undefined, { transport });
    await expect(nl.handle.dump(20, Buffer.alloc(8), [], 'dump addresses wrongly')).rejects.toMatchObject({ code: ErrorCodes.NETLINK_INVALID });
    await expect(nl.handle.dump(6, Buffer.alloc(0), [], 'dump a control type')).rejects.toMatchObject({ code: ErrorCodes.NETLINK_INVALID }); // the kernel answers no type below 16
    await expect(nl.handle.request([{ type: 16, flags: 0, header: new Uint8Array(16) as Buffer, what: 'raw' }])).rejects.toMatchObject({
      code: ErrorCodes.NETLINK_INVALID,
    });
    expect(sent).toEqual([]);
    nl.close();
  });
});

describe('replies cut short', () => {
  it('a link message shorter than its ifinfomsg, an address without an address, an error reply without its error: ERR_NETNS_NETLINK_MALFORMED', async () => {
    const cases: [(m: Sent) => Buffer[], (nl: Awaited<ReturnType<typeof openNetlink>>) => Promise<unknown>][] = [
      [(m) => [nlmsg(16, 2, m.seq, Buffer.alloc(8)), nlmsg(3, 2, m.seq, Buffer.alloc(4))], (nl) => nl.links.list()],
      [(m) => [nlmsg(20, 2, m.seq, Buffer.from([2, 32, 0, 0, 1, 0, 0, 0])), nlmsg(3, 2, m.seq, Buffer.alloc(4))], (nl) => nl.addresses.list()],
      [(m) => [nlmsg(2, 0, m.seq, Buffer.alloc(2))], (nl) => nl.links.list()],
    ];
    for (const [answer, call] of cases) {
      const { transport } = fake(answer);
      const nl = await openNetlink(undefined, { transport });
      await expect(call(nl)).rejects.toMatchObject({ code: ErrorCodes.NETLINK_MALFORMED });
      nl.close();
    }
  });
});
