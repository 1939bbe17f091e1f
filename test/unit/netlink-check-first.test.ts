// Regressions: every check is made before anything is sent, lookups (GETLINK)
// included, and non-object arguments are coded errors rather than TypeErrors.
import { describe, expect, it } from 'vitest';
import { attr, ErrorCodes, openNetlink, type NetlinkTransport } from '../../dist/netlink/index.js';
import { encodeAttributes } from '../../dist/netlink/attributes.js';
import { FakeNs } from '../helpers/netlink-wire.js';

/** Answers GETLINK with a link of index 9 and everything else with an ACK; records the types sent. */
function fake() {
  const types: number[] = [];
  const transport: NetlinkTransport = {
    open: async () => ({ fd: 77, portId: 4242 }),
    transact(_fd, request) {
      const out: Buffer[] = [];
      for (let o = 0; o < request.length; ) {
        const len = request.readUInt32LE(o);
        const type = request.readUInt16LE(o + 4);
        const seq = request.readUInt32LE(o + 8);
        types.push(type);
        const reply = (t: number, flags: number, payload: Buffer) => {
          const head = Buffer.alloc(16);
          head.writeUInt32LE(16 + payload.length, 0);
          head.writeUInt16LE(t, 4);
          head.writeUInt16LE(flags, 6);
          head.writeUInt32LE(seq, 8);
          out.push(head, payload);
        };
        if (type === 18) {
          const info = Buffer.alloc(16);
          info.writeInt32LE(9, 4);
          reply(16, 0, Buffer.concat([info, encodeAttributes([attr.string(3, 'eth0')])]));
        }
        reply(2, 0x100, Buffer.concat([Buffer.alloc(4), request.subarray(o, o + 16)]));
        o += (len + 3) & ~3;
      }
      return Buffer.concat(out);
    },
    close: () => undefined,
  };
  return { types, transport };
}

type Nl = Awaited<ReturnType<typeof openNetlink>>;

describe('checks come before any message, lookups included', () => {
  const cases: [string, (nl: Nl) => Promise<unknown>][] = [
    ['set by name with a new name and a bad MAC', (nl) => nl.links.set('eth0', { name: 'eth1', mac: 'zz' })],
    ['set by name with a new name and a bad MTU', (nl) => nl.links.set('eth0', { name: 'eth1', mtu: 1 })],
    ['set with a bad master name', (nl) => nl.links.set('eth0', { mtu: 1400, master: 'a/b' })],
    ['set with up not a boolean', (nl) => nl.links.set('eth0', { up: 'yes' as unknown as boolean })],
    ['set without changes', (nl) => nl.links.set('eth0', undefined as never)],
    ['move with a new name over 15 bytes', (nl) => nl.links.move('eth0', new FakeNs(4), { name: 'x'.repeat(16) })],
    ['flush with a bad family', (nl) => nl.addresses.flush('eth0', 5 as 4)],
    ['add an address without a spec', (nl) => nl.addresses.add(undefined as never)],
    ['add an address on a bad link name', (nl) => nl.addresses.add({ link: 'a b', address: '10.0.0.1/24' })],
    ['delete an address without a spec', (nl) => nl.addresses.delete(null as never)],
    ['list addresses with a null filter', (nl) => nl.addresses.list(null as never)],
    [
      'a multipath route whose second hop names a bad link',
      (nl) => nl.routes.add({ destination: '10.0.0.0/8', multipath: [{ gateway: '10.1.0.1', device: 'eth0' }, { gateway: '10.1.0.2', device: 'x'.repeat(16) }] }),
    ],
    ['a multipath route with a null hop', (nl) => nl.routes.add({ destination: '10.0.0.0/8', multipath: [null as never] })],
  ];
  for (const [what, call] of cases) {
    it(what, async () => {
      const { types, transport } = fake();
      const nl = await openNetlink(undefined, { transport });
      await expect(call(nl)).rejects.toMatchObject({ code: ErrorCodes.NETLINK_INVALID });
      expect(types).toEqual([]);
      nl.close();
    });
  }

  it('a good set by name with a new name looks the index up, then sends one NEWLINK', async () => {
    const { types, transport } = fake();
    const nl = await openNetlink(undefined, { transport });
    await nl.links.set('eth0', { name: 'eth1', mtu: 1400, master: null });
    expect(types).toEqual([18, 16]);
    nl.close();
  });

  it('multipath devices are looked up one after the other, then one NEWROUTE', async () => {
    const { types, transport } = fake();
    const nl = await openNetlink(undefined, { transport });
    await nl.routes.add({ destination: '10.0.0.0/8', multipath: [{ gateway: '10.1.0.1', device: 'eth0' }, { gateway: '10.1.0.2', device: 'eth0' }] });
    expect(types).toEqual([18, 18, 24]);
    nl.close();
  });
});
