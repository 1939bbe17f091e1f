// Masquerade beside the official plugins' nftables backend (plugins >= 1.5,
// pkg/ip/ipmasq_nftables_linux.go). Debian ships only plugins 1.1.1, whose ptp
// masquerades with iptables, and no knftables: so upstream's side is played
// here as upstream plays it, the transaction knftables would write fed to
// `nft -f`, and its teardown and GC selecting rules as upstream selects them
// (by comment prefix; GC keeps only comments equal to the ones it computes),
// deleting by handle. Its containers are made by Debian's Go ptp (ipMasq off,
// the masquerade being upstream's nftables rule). Our side is the cni-ptp
// example run as a runtime runs it. With either table there first, the other
// ADD applies; each one's DEL and GC keep the other's live rules; and both
// containers' traffic to a namespace beyond the host leaves as the host.
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ipaddr from 'ipaddr.js';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { NetNS } from '../../dist/index.js';
import { addMasquerade } from '../../dist/cni/masquerade.js';
import { createTestNetwork, type TestNetwork } from '../../dist/testing.js';
import { attach, haveGoPlugins, run, type PluginRun } from '../helpers/cni-ptp.js';
import { masqueradeListing } from '../helpers/masquerade-listing.js';
import { privileged } from '../helpers/privileges.js';

const TABLE = 'cni_plugins_masquerade';
/** Long enough that the comment (with a 64-hex container id) passes 128 bytes and is cut, on both sides alike. */
const NETWORK = 'mixnet-upstream-side-by-side';
type Hosts = 'host' | 'out' | 'c1' | 'c2' | 'g1';

interface Attachment {
  id: string;
  ifname: string;
}
const containerId = (name: string): string => createHash('sha256').update(name).digest('hex');

// Upstream's identity of an attachment, written out here from its source (not from ours, which it checks).
const sha16 = (text: string): string => createHash('sha512').update(text).digest('hex').slice(0, 16);
const upstreamPrefix = (network: string, a?: Attachment): string => sha16(network) + (a ? `-${sha16(`${a.ifname}:${a.id}`)}` : '');
const upstreamComment = (network: string, a: Attachment): string =>
  Buffer.from(`${upstreamPrefix(network, a)}, net: ${network.replaceAll('"', '')}, if: ${a.ifname.replaceAll('"', '')}, id: ${a.id.replaceAll('"', '')}`)
    .subarray(0, 128)
    .toString();

const nft = (ns: NetNS, input: string) => ns.execFile('nft', ['-f', '-'], { input });

async function masqRules(ns: NetNS): Promise<{ handle: number; comment?: string }[]> {
  const { stdout } = await ns.execFile('nft', ['--json', 'list', 'chain', 'inet', TABLE, 'masq_checks']);
  return (JSON.parse(stdout).nftables as { rule?: { handle: number; comment?: string } }[]).flatMap((o) => (o.rule ? [o.rule] : []));
}

const deletions = (handles: number[]): string => handles.map((h) => `delete rule inet ${TABLE} masq_checks handle ${h}\n`).join('');

/** `ip daddr != SUBNET`'s subnet: the address's network with its length. */
const subnetOf = (cidr: string): string => `${ipaddr.IPv4.networkAddressFromCIDR(cidr).toString()}/${cidr.split('/')[1]}`;
const addressPart = (cidr: string): string => cidr.split('/')[0]!;

/** Upstream's setupIPMasqNFTables (IPv4 here): its stale rules found by prefix, then one transaction as knftables writes it. */
async function upstreamAdd(ns: NetNS, network: string, a: Attachment, cidrs: string[]): Promise<void> {
  const stale = (await masqRules(ns).catch(() => [])).filter((r) => r.comment?.startsWith(upstreamPrefix(network, a))).map((r) => r.handle);
  const rules = cidrs.map((cidr) => `add rule inet ${TABLE} masq_checks ip saddr == ${addressPart(cidr)} ip daddr != ${subnetOf(cidr)} masquerade comment "${upstreamComment(network, a)}"\n`);
  await nft(
    ns,
    `add table inet ${TABLE} { comment "Masquerading for plugins from github.com/containernetworking/plugins" ; }\n` +
      `add chain inet ${TABLE} masq_checks { comment "Masquerade traffic from certain IPs to any (non-multicast) IP outside their subnet" ; }\n` +
      `add chain inet ${TABLE} postrouting { type nat hook postrouting priority 100 ; }\n` +
      `flush chain inet ${TABLE} postrouting\n` +
      `add rule inet ${TABLE} postrouting ip daddr == 224.0.0.0/4  return\n` +
      `add rule inet ${TABLE} postrouting ip6 daddr == ff00::/8  return\n` +
      `add rule inet ${TABLE} postrouting goto masq_checks\n` +
      deletions(stale) +
      rules.join(''),
  );
}

/** Upstream's teardownIPMasqNFTables: the attachment's rules by prefix. */
async function upstreamTeardown(ns: NetNS, network: string, a: Attachment): Promise<void> {
  const mine = (await masqRules(ns)).filter((r) => r.comment?.startsWith(upstreamPrefix(network, a)));
  if (mine.length > 0) await nft(ns, deletions(mine.map((r) => r.handle)));
}

/** Upstream's gcIPMasqNFTables: of the network's rules, deletes every one whose whole comment is not a valid attachment's. */
async function upstreamGc(ns: NetNS, network: string, valid: Attachment[]): Promise<void> {
  const keep = new Set(valid.map((a) => upstreamComment(network, a)));
  const stale = (await masqRules(ns)).filter((r) => r.comment?.startsWith(upstreamPrefix(network)) && !keep.has(r.comment));
  if (stale.length > 0) await nft(ns, deletions(stale.map((r) => r.handle)));
}

/** The layout both write, with the masq_checks rules in order (upstream's `nft list` text). */
const expectedTable = (rules: [string, Attachment][]): string =>
  masqueradeListing(rules.map(([cidr, a]) => `ip saddr ${addressPart(cidr)} ip daddr != ${subnetOf(cidr)} masquerade comment "${upstreamComment(NETWORK, a)}"`));

describe.skipIf(!privileged || !haveGoPlugins)('masquerade beside the official plugins’ nftables backend', () => {
  let network: TestNetwork<Hosts>;
  let host: NetNS;
  const tag = randomBytes(3).toString('hex');
  const dataDirs: string[] = [];
  const conf = (subnet: string, ipMasq: boolean) => {
    const dataDir = mkdtempSync(join(tmpdir(), `netns-masq-up-${tag}-`));
    dataDirs.push(dataDir);
    // cni-ptp's attachment records in this test's folder too (Go's ptp ignores the key): the default, /var/lib/cni, is not writable in a rootless sandbox.
    return { cniVersion: '1.0.0', name: NETWORK, type: 'ptp', ipMasq, dataDir: join(dataDir, 'ptp'), ipam: { type: 'host-local', subnet, dataDir, routes: [{ dst: '0.0.0.0/0' }] } };
  };
  let ours: ReturnType<typeof conf>;
  let go: ReturnType<typeof conf>;

  /** A plugin run in `host` as a runtime runs it. */
  const plugin = (which: 'ours' | 'go', command: string, config: object, attachment?: { ns: NetNS; a: Attachment }): Promise<PluginRun> =>
    run(host, which, attachment ? attach(command, attachment.ns, attachment.a.id, attachment.a.ifname) : { CNI_COMMAND: command }, config);
  const addressOf = (run: PluginRun): string => ((run.json?.ips as { address: string }[])[0]!).address;
  const gc = (valid: Attachment[]) => plugin('ours', 'GC', { ...ours, cniVersion: '1.1.0', 'cni.dev/valid-attachments': valid.map((a) => ({ containerID: a.id, ifname: a.ifname })) });

  /** The source address a server in `out` sees for a connection from `container`. */
  async function seenFrom(container: NetNS): Promise<string> {
    const server = await network.hosts.out.listen(net.createServer((socket) => socket.end(String(socket.remoteAddress))), { host: '10.77.0.2', port: 0 });
    try {
      const socket = await container.connect({ host: '10.77.0.2', port: (server.address() as net.AddressInfo).port });
      const chunks: Buffer[] = [];
      for await (const chunk of socket) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks).toString();
    } finally {
      server.close();
    }
  }

  const listTable = async (): Promise<string> => (await host.execFile('nft', ['list', 'table', 'inet', TABLE])).stdout;

  beforeAll(async () => {
    network = await createTestNetwork<Hosts>({
      prefix: `masqup-${tag}-`,
      hosts: { host: {}, out: {}, c1: {}, c2: {}, g1: {} },
      links: [['host', 'out', { host: '10.77.0.1/24', out: '10.77.0.2/24' }]],
    });
    host = network.hosts.host;
    // Beyond the host, the containers' subnets route back through it: so an unmasqueraded connection is answered too, and shows its container address.
    await network.hosts.out.execFile('ip', ['route', 'add', 'default', 'via', '10.77.0.1']);
    ours = conf('10.50.0.0/24', true);
    go = conf('10.51.0.0/24', false);
  });

  afterAll(async () => {
    await network?.delete();
    for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
  });

  const o1: Attachment = { id: containerId('ours-1'), ifname: 'eth0' };
  const o2: Attachment = { id: containerId('ours-2'), ifname: 'eth0' };
  const g1: Attachment = { id: containerId('go-1'), ifname: 'eth0' };
  const u2: Attachment = { id: containerId('go-2'), ifname: 'net1' };
  const U2_CIDR = '10.51.0.200/24';

  // Each test starts without the table, and leaves no attachment behind, passed or failed.
  beforeEach(async () => {
    await nft(host, `add table inet ${TABLE}\ndelete table inet ${TABLE}\n`);
  });
  afterEach(async () => {
    const { c1, c2, g1: goC } = network.hosts;
    await plugin('ours', 'DEL', ours, { ns: c1, a: o1 });
    await plugin('ours', 'DEL', ours, { ns: c2, a: o2 });
    await plugin('go', 'DEL', go, { ns: goC, a: g1 });
  });

  it("with upstream's table first, our ADD applies in its chain, upstream's next ADD applies, and each one's DEL and GC keep the other's live rules", async () => {
    const { c1, g1: goC } = network.hosts;
    expect(Buffer.byteLength(upstreamComment(NETWORK, o1))).toBe(128); // cut: the tables below show ours cut as upstream cuts
    const goRun = await plugin('go', 'ADD', go, { ns: goC, a: g1 });
    expect(goRun.code).toBe(0);
    const goCidr = addressOf(goRun);
    await upstreamAdd(host, NETWORK, g1, [goCidr]);

    const oursRun = await plugin('ours', 'ADD', ours, { ns: c1, a: o1 });
    expect(oursRun).toMatchObject({ code: 0 });
    const oursCidr = addressOf(oursRun);
    expect(await listTable()).toBe(expectedTable([[goCidr, g1], [oursCidr, o1]]));
    expect(await seenFrom(c1)).toBe('10.77.0.1');
    expect(await seenFrom(goC)).toBe('10.77.0.1');

    await upstreamAdd(host, NETWORK, u2, [U2_CIDR]); // after ours: applies, postrouting not doubled
    expect(await listTable()).toBe(expectedTable([[goCidr, g1], [oursCidr, o1], [U2_CIDR, u2]]));

    await upstreamGc(host, NETWORK, [g1, o1]); // u2 is stale for upstream; ours is live
    expect(await listTable()).toBe(expectedTable([[goCidr, g1], [oursCidr, o1]]));
    expect(await gc([o1, g1])).toMatchObject({ code: 0 }); // our GC: nothing of upstream's live rule goes
    expect(await listTable()).toBe(expectedTable([[goCidr, g1], [oursCidr, o1]]));

    expect(await plugin('ours', 'DEL', ours, { ns: c1, a: o1 })).toMatchObject({ code: 0 });
    expect(await listTable()).toBe(expectedTable([[goCidr, g1]]));
    expect(await seenFrom(goC)).toBe('10.77.0.1');

    await upstreamTeardown(host, NETWORK, g1);
    expect(await plugin('go', 'DEL', go, { ns: goC, a: g1 })).toMatchObject({ code: 0 });
    expect(await listTable()).toBe(expectedTable([]));
  });

  it("with ours first (two ADDs at once), upstream's ADD applies, and each one's teardown and GC keep the other's live rules", async () => {
    const { c1, c2, g1: goC } = network.hosts;
    const [run1, run2] = await Promise.all([plugin('ours', 'ADD', ours, { ns: c1, a: o1 }), plugin('ours', 'ADD', ours, { ns: c2, a: o2 })]);
    expect([run1.code, run2.code]).toEqual([0, 0]);
    const goRun = await plugin('go', 'ADD', go, { ns: goC, a: g1 });
    expect(goRun.code).toBe(0);
    const goCidr = addressOf(goRun);
    await upstreamAdd(host, NETWORK, g1, [goCidr]);
    const ordered = (await masqRules(host)).map((r) => r.comment);
    expect(ordered.slice(0, 2).sort()).toEqual([upstreamComment(NETWORK, o1), upstreamComment(NETWORK, o2)].sort());
    const byComment = new Map([[upstreamComment(NETWORK, o1), [addressOf(run1), o1] as [string, Attachment]], [upstreamComment(NETWORK, o2), [addressOf(run2), o2] as [string, Attachment]]]);
    const oursRules = ordered.slice(0, 2).map((c) => byComment.get(c!)!);
    expect(await listTable()).toBe(expectedTable([...oursRules, [goCidr, g1]]));
    expect(await seenFrom(c1)).toBe('10.77.0.1');
    expect(await seenFrom(goC)).toBe('10.77.0.1');

    // Each one's GC of another network touches none of these; of this network, keeps every live attachment's rule.
    await upstreamGc(host, 'another-network', []);
    expect(await plugin('ours', 'GC', { ...ours, name: 'another-network', cniVersion: '1.1.0', 'cni.dev/valid-attachments': [] })).toMatchObject({ code: 0 });
    expect(await listTable()).toBe(expectedTable([...oursRules, [goCidr, g1]]));
    expect(await gc([o1, g1])).toMatchObject({ code: 0 }); // o2 is stale: it goes, upstream's live g1 stays
    expect(await listTable()).toBe(expectedTable([[addressOf(run1), o1], [goCidr, g1]]));
    await upstreamGc(host, NETWORK, [g1, o1]);
    await upstreamTeardown(host, NETWORK, g1);
    expect(await listTable()).toBe(expectedTable([[addressOf(run1), o1]]));
    expect(await seenFrom(c1)).toBe('10.77.0.1');

    await upstreamAdd(host, NETWORK, g1, [goCidr]); // and back, then our DEL keeps it
    expect(await plugin('ours', 'DEL', ours, { ns: c1, a: o1 })).toMatchObject({ code: 0 });
    expect(await listTable()).toBe(expectedTable([[goCidr, g1]]));
    expect(await seenFrom(goC)).toBe('10.77.0.1');
  });

  it('an ADD over the layout this package made before (masq_checks a base chain) fails saying so, and changes nothing', async () => {
    await nft(host, `add table inet ${TABLE}\nadd chain inet ${TABLE} masq_checks { type nat hook postrouting priority srcnat; }\n`);
    const before = await listTable();
    await expect(addMasquerade(host, { network: NETWORK, containerID: o1.id, ifname: o1.ifname }, ['10.50.0.9/24'])).rejects.toMatchObject({ code: 'ENOTSUP', message: expect.stringContaining('masq_checks is a base chain (an earlier layout); delete table inet cni_plugins_masquerade once') });
    expect(await listTable()).toBe(before);
  });
});
