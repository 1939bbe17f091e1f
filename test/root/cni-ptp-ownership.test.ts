// What the cni-ptp example removes is only ever what it made: a DEL takes
// its own attachment's pair (found by the host end's alias), never another's
// interface of the same name; the last attachment of a network takes the
// network's address-set table with it; GC releases the IPAM allocation of
// each stale attachment it collects, also one with no veth left (by the
// plugin's attachment records). The plugin runs as a process, with
// Debian's host-local as its IPAM, in namespaces this file creates.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { NetNS } from '../../dist/index.js';
import { AddressSets } from '../../dist/addrset/index.js';
import { attachmentKey, networkTagPrefix } from '../../dist/cni/identity.js';
import { createTestNetwork, ManualClock, type TestNetwork } from '../../dist/testing.js';
import { writeRecord } from '../../examples/cni-ptp/src/records.js';
import { attach, GO_PLUGINS, haveGoPlugins, run } from '../helpers/cni-ptp.js';
import { execOutcome } from '../helpers/exec-outcome.js';
import { privileged } from '../helpers/privileges.js';
import { tcpHello } from '../helpers/tcp-hello.js';

type Hosts = 'host' | 'c1' | 'c2' | 'c3';
/** Networks in the parallel case: each runs 5 plugin processes, all at once. */
const NETWORKS = 6;

/** The network's own address-set table (the plugin's default name). */
const tableOf = (network: string): string => `cni_ptp_${networkTagPrefix(network).slice(0, -1)}`;

describe.skipIf(!privileged || !haveGoPlugins)('cni-ptp removes only what it made', () => {
  let network: TestNetwork<Hosts>;
  let hosts: TestNetwork<Hosts>['hosts'];
  const dataDirs: string[] = [];
  const tag = randomBytes(3).toString('hex');

  const conf = (name: string, subnet: string, extra: Record<string, unknown> = {}) => {
    const dataDir = mkdtempSync(join(tmpdir(), `netns-cni-own-${tag}-`));
    dataDirs.push(dataDir);
    // The plugin's attachment records beside host-local's files, in this test's own folder.
    return { cniVersion: '1.0.0', name, type: 'ptp', ipMasq: true, dataDir: join(dataDir, 'ptp'), ipam: { type: 'host-local', subnet, dataDir }, ...extra };
  };
  type Conf = ReturnType<typeof conf>;

  /** host-local's allocations: address -> the container id holding it. */
  const allocations = (config: Conf): Map<string, string> => {
    const dir = join(config.ipam.dataDir, config.name);
    const files = readdirSync(dir).filter((file) => file !== 'lock' && !file.startsWith('last_reserved_ip'));
    return new Map(files.map((file) => [file, readFileSync(join(dir, file), 'utf8').split(/\r?\n/)[0]!]));
  };
  /** The plugin's attachment records (file names: attachment keys). */
  const records = (config: Conf): string[] => (existsSync(config.dataDir) ? readdirSync(config.dataDir).sort() : []);

  // Whatever a test added is deleted after it, passed or failed.
  const added: [NetNS, string, string, object][] = [];
  afterEach(async () => {
    for (const [container, id, ifname, config] of added.splice(0)) await run(hosts.host, 'ours', attach('DEL', container, id, ifname), config);
  });
  const add = (container: NetNS, id: string, config: object, ifname = 'eth0') => {
    added.push([container, id, ifname, config]);
    return run(hosts.host, 'ours', attach('ADD', container, id, ifname), config);
  };
  const del = (container: NetNS, id: string, config: object, ifname = 'eth0') => run(hosts.host, 'ours', attach('DEL', container, id, ifname), config);

  /** The host namespace's whole ruleset, as `nft -j list ruleset` prints it. */
  const ruleset = async (): Promise<Record<string, Record<string, unknown>>[]> => JSON.parse((await hosts.host.execFile('nft', ['-j', 'list', 'ruleset'])).stdout).nftables;

  /** Anything of `name` left in the host's nftables: its table, its sets, a rule naming its hash or name. */
  const leftOf = async (name: string): Promise<Record<string, Record<string, unknown>>[]> => {
    const hash = networkTagPrefix(name).slice(0, -1);
    return (await ruleset()).filter((item) => {
      if (item.table?.name === tableOf(name)) return true;
      const text = JSON.stringify(item.rule ?? item.set ?? item.chain ?? {});
      return item.table === undefined && (text.includes(hash) || text.includes(name));
    });
  };

  const veths = async (ns: NetNS): Promise<string[]> => {
    const { stdout } = await ns.execFile('ip', ['-j', 'link', 'show', 'type', 'veth']);
    return (JSON.parse(stdout || '[]') as { ifname: string }[]).map((link) => link.ifname).sort();
  };

  beforeAll(async () => {
    network = await createTestNetwork({ prefix: `cniown-${tag}-`, hosts: { host: {}, c1: {}, c2: {}, c3: {} } });
    hosts = network.hosts;
    await hosts.host.execFile('ip', ['link', 'set', 'lo', 'up']);
  });

  afterAll(async () => {
    await network?.delete();
    for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
  });

  it('DEL of an ADD that failed on a taken name leaves the live attachment of that name whole', async () => {
    const config = conf(`own-${tag}`, '10.40.0.0/24');
    expect(await add(hosts.c1, 'live', config)).toMatchObject({ code: 0 });
    const failed = await add(hosts.c1, 'failed', config);
    expect(failed.code).not.toBe(0);
    expect(failed.json).toMatchObject({ msg: expect.stringContaining('already has an interface named eth0') });
    // The failed ADD undid only its own steps: live's pair and address are there.
    expect(await veths(hosts.c1)).toEqual(['eth0']);
    expect([...allocations(config).values()]).toEqual(['live']);

    expect(await del(hosts.c1, 'failed', config)).toMatchObject({ code: 0, stdout: '' });
    expect(await veths(hosts.c1)).toEqual(['eth0']);
    expect(await veths(hosts.host)).toHaveLength(1);
    expect(allocations(config)).toEqual(new Map([['10.40.0.2', 'live']]));
    expect(await tcpHello(hosts.c1, '10.40.0.2', hosts.host)).toBe('hello');

    expect(await del(hosts.c1, 'live', config)).toMatchObject({ code: 0 });
    expect(await veths(hosts.c1)).toEqual([]);
    expect(await veths(hosts.host)).toEqual([]);
  });

  it('the last DEL of each network leaves nothing of it in nftables, with ADDs and DELs of several networks racing', async () => {
    const configs = Array.from({ length: NETWORKS }, (_, i) => conf(`mix${i}-${tag}`, `10.${60 + i}.0.0/24`, { addressSets: { deleteDelayMs: 0 } }));
    const ifname = (i: number) => `n${i}`;
    const { c1, c2, c3 } = hosts;
    const codes = async (runs: Promise<{ code: number }>[]) => (await Promise.all(runs)).map((r) => r.code);

    expect(await codes(configs.flatMap((config, i) => [add(c1, `a${i}`, config, ifname(i)), add(c2, `b${i}`, config, ifname(i))]))).toEqual(Array(2 * NETWORKS).fill(0));
    // The network's first two attachments go while a third comes, in parallel: whichever DEL
    // finds the table empty must not take the set the ADD makes.
    const results = await Promise.all(configs.map(async (config, i) => {
      const [third] = await Promise.all([add(c3, `c${i}`, config, ifname(i)), del(c1, `a${i}`, config, ifname(i)), del(c2, `b${i}`, config, ifname(i))]);
      return third;
    }));
    expect(results.map((r) => r.code)).toEqual(Array(NETWORKS).fill(0));
    for (const [i, config] of configs.entries()) {
      const sets = await AddressSets.open({ netns: hosts.host, table: tableOf(config.name), readOnly: true });
      try {
        const owner = attachmentKey(config.name, { containerID: `c${i}`, ifname: ifname(i) });
        const address = (results[i]!.json!.ips as { address: string }[])[0]!.address.split('/')[0];
        expect(await sets.inspect(owner)).toMatchObject({ state: 'orphan', v4: { elements: [address] } });
      } finally {
        await sets.close();
      }
    }

    expect(await codes(configs.map((config, i) => del(c3, `c${i}`, config, ifname(i))))).toEqual(Array(NETWORKS).fill(0));
    for (const config of configs) expect(await leftOf(config.name)).toEqual([]);
  }, 180_000);

  it('a set kept for its delay goes with its table at the first DEL or GC after the delay', async () => {
    const config = conf(`delay-${tag}`, '10.42.0.0/24');
    const owner = (id: string) => attachmentKey(config.name, { containerID: id, ifname: 'eth0' });
    /** Records the deletes of `ids` an hour ago (as a process whose clock said so): their delay is over. */
    const deletedLongAgo = async (ids: string[]) => {
      const past = await AddressSets.open({ netns: hosts.host, table: tableOf(config.name), clock: new ManualClock(Date.now() - 3_600_000) });
      try {
        for (const id of ids) {
          await past.ensure(owner(id));
          await past.delete(owner(id));
        }
      } finally {
        await past.close();
      }
    };

    expect(await add(hosts.c1, 'x1', config)).toMatchObject({ code: 0 });
    expect(await del(hosts.c1, 'x1', config)).toMatchObject({ code: 0 });
    expect((await leftOf(config.name)).map((item) => item.table?.name)).toContain(tableOf(config.name)); // its set waits 20 s
    await deletedLongAgo(['x1']);
    // A DEL (of an attachment never added) after the delay.
    expect(await del(hosts.c2, 'never', config)).toMatchObject({ code: 0 });
    expect(await leftOf(config.name)).toEqual([]);

    expect(await add(hosts.c1, 'x2', config)).toMatchObject({ code: 0 });
    expect(await del(hosts.c1, 'x2', config)).toMatchObject({ code: 0 });
    await deletedLongAgo(['x2']);
    expect(await run(hosts.host, 'ours', { CNI_COMMAND: 'GC' }, { ...config, cniVersion: '1.1.0', 'cni.dev/valid-attachments': [] })).toMatchObject({ code: 0 });
    expect(await leftOf(config.name)).toEqual([]);
  });

  it('GC releases the IPAM allocation of each stale attachment it collects, and keeps the live ones\'', async () => {
    // Runtimes use 64-character container ids: the whole id must survive in the host end's alias.
    const [stale, live] = [randomBytes(32).toString('hex'), randomBytes(32).toString('hex')];
    const config = conf(`gc-ipam-${tag}`, '10.43.0.0/24');
    expect(await add(hosts.c1, stale, config)).toMatchObject({ code: 0 });
    expect(await add(hosts.c2, live, config)).toMatchObject({ code: 0 });
    expect(allocations(config)).toEqual(new Map([['10.43.0.2', stale], ['10.43.0.3', live]]));

    const gc = await run(hosts.host, 'ours', { CNI_COMMAND: 'GC' }, { ...config, cniVersion: '1.1.0', 'cni.dev/valid-attachments': [{ containerID: live, ifname: 'eth0' }] });
    expect(gc).toMatchObject({ code: 0, stdout: '' });
    expect(await veths(hosts.c1)).toEqual([]);
    expect(await veths(hosts.c2)).toEqual(['eth0']);
    expect(allocations(config)).toEqual(new Map([['10.43.0.3', live]]));
  });

  it('an ADD that IPAM refuses leaves no record, so later GCs succeed; a repeated ADD refused keeps the first one\'s record', async () => {
    const config = conf(`gc-refused-${tag}`, '10.45.0.0/24');
    const misspelt = { ...config, ipam: { ...config.ipam, type: 'host-locall' } };
    expect(await add(hosts.c1, 'ctr-refused', misspelt)).toMatchObject({ code: 1, json: { code: 4, msg: expect.stringContaining('failed to find plugin "host-locall"') } });
    expect(records(config)).toEqual([]);
    const gc = () => run(hosts.host, 'ours', { CNI_COMMAND: 'GC' }, { ...config, cniVersion: '1.1.0', 'cni.dev/valid-attachments': [] });
    expect(await gc()).toMatchObject({ code: 0, stdout: '' });
    // host-local refuses a second ADD of an attachment it holds: the first's record stands for that allocation.
    expect(await add(hosts.c2, 'ctr-twice', config)).toMatchObject({ code: 0 });
    expect((await add(hosts.c2, 'ctr-twice', config)).code).not.toBe(0);
    expect(records(config)).toEqual([`${attachmentKey(config.name, { containerID: 'ctr-twice', ifname: 'eth0' })}.json`]);
    expect(allocations(config)).toEqual(new Map([['10.45.0.2', 'ctr-twice']]));
    expect(await gc()).toMatchObject({ code: 0, stdout: '' });
    expect(records(config)).toEqual([]);
    expect(allocations(config)).toEqual(new Map());
  });

  it('DEL and GC succeed when dataDir is a file, where no record can be', async () => {
    const config = conf(`rec-file-${tag}`, '10.46.0.0/24');
    writeFileSync(config.dataDir, 'not a directory');
    expect(await del(hosts.c1, 'ctr-file', config)).toMatchObject({ code: 0, stdout: '' });
    const gc = await run(hosts.host, 'ours', { CNI_COMMAND: 'GC' }, { ...config, cniVersion: '1.1.0', 'cni.dev/valid-attachments': [] });
    expect(gc).toMatchObject({ code: 0, stdout: '' });
  });

  it('GC releases by its records the allocation of a stale attachment with no veth (its namespace deleted before any DEL, or its ADD killed between IPAM and the veth), and keeps the valid one\'s', async () => {
    const config = conf(`gc-rec-${tag}`, '10.44.0.0/24');
    const key = (containerID: string) => attachmentKey(config.name, { containerID, ifname: 'eth0' });
    const gone = await NetNS.create(`cniown-${tag}-gone`);
    try {
      expect(await add(gone, 'ctr-gone', config)).toMatchObject({ code: 0 });
    } finally {
      await gone.delete();
    }
    expect(await add(hosts.c1, 'ctr-live', config)).toMatchObject({ code: 0 });
    // The pair goes with the namespace, once the kernel has cleaned it up: no event of ours says when.
    const bound = Date.now() + 30_000;
    while ((await veths(hosts.host)).length > 1 && Date.now() < bound) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await veths(hosts.host)).toHaveLength(1);
    // An ADD killed after IPAM, before the pair: its record (as the plugin writes it first) and host-local's allocation, nothing else.
    const killed = { network: config.name, containerID: 'ctr-killed', ifname: 'eth0', config: JSON.stringify(config) };
    writeRecord(config.dataDir, killed);
    const ipamAdd = await execOutcome(hosts.host, `${GO_PLUGINS}/host-local`, [], { env: { CNI_PATH: GO_PLUGINS, ...attach('ADD', hosts.c2, 'ctr-killed') }, input: killed.config });
    expect(ipamAdd).toMatchObject({ code: 0 });
    expect(allocations(config)).toEqual(new Map([['10.44.0.2', 'ctr-gone'], ['10.44.0.3', 'ctr-live'], ['10.44.0.4', 'ctr-killed']]));
    expect(records(config)).toEqual([key('ctr-gone'), key('ctr-live'), key('ctr-killed')].map((k) => `${k}.json`).sort());

    const gc = await run(hosts.host, 'ours', { CNI_COMMAND: 'GC' }, { ...config, cniVersion: '1.1.0', 'cni.dev/valid-attachments': [{ containerID: 'ctr-live', ifname: 'eth0' }] });
    expect(gc).toMatchObject({ code: 0, stdout: '' });
    expect(allocations(config)).toEqual(new Map([['10.44.0.3', 'ctr-live']]));
    expect(records(config)).toEqual([`${key('ctr-live')}.json`]);
    expect(await veths(hosts.host)).toHaveLength(1);
    // And the valid one's DEL takes its record with its allocation.
    expect(await del(hosts.c1, 'ctr-live', config)).toMatchObject({ code: 0 });
    expect(records(config)).toEqual([]);
    expect(allocations(config)).toEqual(new Map());
  });
});
