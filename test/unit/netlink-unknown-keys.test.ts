// A key a netlink method does not know is refused before anything is sent,
// naming the method, the key and the known ones: the typos a hostile probe
// found, each of which used to do something else without a word.
import { describe, expect, it } from 'vitest';
import { ErrorCodes, openNetlink } from '../../dist/netlink/index.js';
import { ack, expectRefusedUnsent, fake, FakeNs } from '../helpers/netlink-wire.js';

type Nl = Awaited<ReturnType<typeof openNetlink>>;
const anyKeys = <T>(spec: Record<string, unknown>): T => spec as T;

/** The error `call` is refused with, asserting nothing was sent. */
async function refusal(call: (nl: Nl) => Promise<unknown>): Promise<{ code: string; message: string }> {
  const { sent, transport } = fake(ack);
  const nl = await openNetlink(undefined, { transport });
  const error = await call(nl).then(
    () => expect.fail('resolved'),
    (e: unknown) => e as { code: string; message: string },
  );
  expect(sent).toEqual([]);
  nl.close();
  return error;
}

describe('unknown keys are refused before anything is sent', () => {
  it('routes.add with tabel: names the method, the key, a hint and the known keys', async () => {
    const error = await refusal((nl) => nl.routes.add(anyKeys({ destination: '10.2.0.0/16', gateway: '10.1.0.254', tabel: 100 })));
    expect(error.code).toBe(ErrorCodes.NETLINK_INVALID);
    expect(error.message).toMatch(/routes\.add: unknown key "tabel" \(did you mean table\?\); known: destination, .*table/);
  });

  it("routes.add with link (a route's link is device)", async () => {
    const error = await refusal((nl) => nl.routes.add(anyKeys({ destination: '10.4.0.0/16', link: 'v0' })));
    expect(error).toMatchObject({ code: ErrorCodes.NETLINK_INVALID, message: expect.stringContaining('unknown key "link" (did you mean device?)') });
  });

  it('links.set with nmae', async () => {
    const error = await refusal((nl) => nl.links.set('lo', anyKeys({ nmae: 'x' })));
    expect(error).toMatchObject({ code: ErrorCodes.NETLINK_INVALID, message: expect.stringContaining('links.set: unknown key "nmae" (did you mean name?)') });
  });

  it("neighbours.add with mac (a neighbour's is lladdr)", async () => {
    const error = await refusal((nl) => nl.neighbours.add(anyKeys({ link: 'v0', address: '10.1.0.9', mac: '02:00:00:00:00:09' })));
    expect(error).toMatchObject({ code: ErrorCodes.NETLINK_INVALID, message: expect.stringContaining('neighbours.add: unknown key "mac" (did you mean lladdr?)') });
  });

  it('a key of millions of characters (parsed from anywhere) is refused at once, cut in the message', async () => {
    const key = 't'.repeat(4_000_000);
    const error = await refusal((nl) => nl.routes.add(anyKeys({ destination: '10.2.0.0/16', [key]: 1 })));
    expect(error.code).toBe(ErrorCodes.NETLINK_INVALID);
    expect(error.message).toContain(`unknown key "${'t'.repeat(64)}…"; known: destination`);
    expect(error.message.length).toBeLessThan(400);
  });

  it('nsids refuse theirs with the code every nsids check uses', async () => {
    const error = await refusal((nl) => nl.nsids.list(anyKeys({ targetNsid: 0, nsId: 1 })));
    expect(error).toMatchObject({ code: ErrorCodes.INVALID_ARG, message: expect.stringContaining('nsids.list: unknown key "nsId" (did you mean nsid?)') });
  });

  const cases: [string, (nl: Nl) => Promise<unknown>][] = [
    ['links.add: a key of another kind (mode on a vlan)', (nl) => nl.links.add(anyKeys({ kind: 'vlan', name: 'v5', parent: 'eth0', id: 5, mode: 'bridge' }))],
    ['links.add: a veth key on a bridge', (nl) => nl.links.add(anyKeys({ kind: 'bridge', name: 'br0', peer: { name: 'x' } }))],
    ['links.add: the veth peer', (nl) => nl.links.add(anyKeys({ kind: 'veth', name: 'v0', peer: { name: 'v1', up: true } }))],
    ['links.move options', (nl) => nl.links.move('eth0', new FakeNs(4), anyKeys({ newName: 'eth1' }))],
    ['routes.replace', (nl) => nl.routes.replace(anyKeys({ destination: 'default', via: '10.0.0.1' }))],
    ['routes.delete', (nl) => nl.routes.delete(anyKeys({ destination: '10.0.0.0/8', dev: 'eth0' }))],
    ['routes.add: a next hop', (nl) => nl.routes.add(anyKeys({ destination: '10.0.0.0/8', multipath: [{ gateway: '10.1.0.1' }, { gateway: '10.1.0.2', wieght: 2 }] }))],
    ['routes.list filter', (nl) => nl.routes.list(anyKeys({ tables: 'all' }))],
    ['addresses.add', (nl) => nl.addresses.add(anyKeys({ link: 'eth0', address: '10.0.0.1/24', device: 'eth0' }))],
    ['addresses.replace', (nl) => nl.addresses.replace(anyKeys({ link: 'eth0', address: '10.0.0.1/24', lifetime: 5 }))],
    ['addresses.delete', (nl) => nl.addresses.delete(anyKeys({ link: 'eth0', address: '10.0.0.1/24', scope: 'link' }))],
    ['addresses.list filter', (nl) => nl.addresses.list(anyKeys({ device: 'eth0' }))],
    ['neighbours.replace', (nl) => nl.neighbours.replace(anyKeys({ link: 'eth0', address: '10.0.0.2', lladdr: '02:00:00:00:00:02', nud: 'stale' }))],
    ['neighbours.delete', (nl) => nl.neighbours.delete(anyKeys({ link: 'eth0', address: '10.0.0.2', lladdr: '02:00:00:00:00:02' }))],
    ['neighbours.list filter', (nl) => nl.neighbours.list(anyKeys({ link: 'eth0', proxies: true }))],
    ['an unknown key whose value is undefined', (nl) => nl.routes.add(anyKeys({ destination: '10.0.0.0/8', tabel: undefined }))],
  ];
  for (const [what, call] of cases) it(what, () => expectRefusedUnsent(call));

  it('nsids.get and set: a { pid } target', async () => {
    await expectRefusedUnsent((nl) => nl.nsids.get(anyKeys({ pid: 1, nsid: 3 })), ErrorCodes.INVALID_ARG);
    await expectRefusedUnsent((nl) => nl.nsids.set(anyKeys({ Pid: 1 }), 3), ErrorCodes.INVALID_ARG);
  });
});

describe('known keys still pass', () => {
  it('a route with every key, a link with every common and vlan key, and the filters are sent', async () => {
    const { sent, transport } = fake(ack);
    const nl = await openNetlink(undefined, { transport });
    await nl.routes.add({
      destination: '10.0.0.0/8', family: 4, gateway: '10.1.0.1', device: 3, source: '10.1.0.2', scope: 'global', metric: 5,
      table: 100, protocol: 'static', type: 'unicast', onlink: true, mtu: 1400, advmss: 1360,
    });
    await nl.routes.add({ destination: '10.0.0.0/8', multipath: [{ gateway: '10.1.0.1', device: 3, weight: 2, onlink: false }] });
    await nl.links.set(3, { up: true, mtu: 1400, mac: '02:00:00:00:00:01', name: 'eth1', master: null });
    await nl.addresses.delete({ link: 3, address: '10.0.0.1/24', peer: '10.0.0.2' });
    await nl.neighbours.delete({ link: 3, address: '10.0.0.2', proxy: true });
    await nl.neighbours.add({ link: 3, address: '10.0.0.2', flags: ['router'], proxy: true, family: 4 });
    expect(sent).toHaveLength(6);
    nl.close();
  });
});
