// createLab on the real kernel: a routed three-subnet lab that every node
// crosses, impairments (rate by tbf, loss without netem), partitions, link
// down/up, a capture, a picture; and nothing left behind, even when building fails.
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import { text } from 'node:stream/consumers';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type dgram from 'node:dgram';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { createLab, Lab } from '../../dist/testing.js';
import { NetNS } from '../../dist/index.js';
import { privileged } from '../helpers/privileges.js';
import { fdCountOf, socketCount } from '../helpers/process-state.js';
import { tcpdumpLines } from '../helpers/tcpdump-read.js';
import { routedLab } from '../helpers/lab-specs.js';

const prefix = `nslabt${randomBytes(2).toString('hex')}-`;
// Pairs cut by a partition or a link down fail at once (EPERM, no route); a long timeout only keeps a busy
// machine's slow connection from counting as unreached.
const SLOW = 10_000;
const mine = (dir: string): string[] => (existsSync(dir) ? readdirSync(dir).filter((name) => name.startsWith(prefix)) : []);
const leftovers = (): string[] => mine('/run/netns');
const hostsLeftovers = (): string[] => mine('/etc/netns');
const inNs = (lab: Lab, node: string, ...command: string[]): string => execFileSync('ip', ['netns', 'exec', lab.names[node]!, ...command], { encoding: 'utf8' });

const routed = routedLab(prefix);

/**
 * Sends `count` datagrams a→b under `impairment` of `direction` (a→b unless
 * given), then clears it and sends one more: returns how many of the first
 * arrived before that one. A first datagram goes unimpaired, so that a's
 * neighbour entry for b is resolved before any loss.
 */
async function deliveredOf(lab: Lab, count: number, impairment: { loss: number }, [from, to] = ['a', 'b'] as [string, string]): Promise<number> {
  const receiver: dgram.Socket = await lab.nodes.b!.createSocket('udp4', { address: lab.address('b'), port: 7000 });
  const sender: dgram.Socket = await lab.nodes.a!.createSocket('udp4');
  try {
    let received = 0;
    let ready!: () => void;
    let ended!: () => void;
    const warm = new Promise<void>((resolve) => (ready = resolve));
    const end = new Promise<void>((resolve) => (ended = resolve));
    receiver.on('message', (message) => {
      const text = message.toString();
      if (text === 'warm') ready();
      else if (text === 'end') ended();
      else received++;
    });
    const send = (text: string) => new Promise<void>((resolve, reject) => sender.send(text, 7000, lab.address('b'), (error) => (error ? reject(error) : resolve())));
    await send('warm');
    await warm;
    await lab.impair(from, to, impairment);
    for (let i = 0; i < count; i++) await send(`datagram ${i}`);
    await lab.clearImpairment(from, to);
    await send('end');
    await end;
    return received;
  } finally {
    receiver.close();
    sender.close();
  }
}

/** The node's UDP SndbufErrors: datagrams its sockets were refused on the way out (a local drop shows there as ENOBUFS). */
function udpSendErrors(lab: Lab, node: string): number {
  const [names, values] = inNs(lab, node, 'cat', '/proc/net/snmp').split('\n').filter((line) => line.startsWith('Udp:')).map((line) => line.split(/\s+/));
  return Number(values![names!.indexOf('SndbufErrors')]);
}

/** `ping -c 200 -i 0.01` from one node to another's address: the share lost in percent, and what ping said on stderr. */
function pingLoss(lab: Lab, from: string, to: string): { lost: number; stderr: string } {
  const ping = spawnSync('ip', ['netns', 'exec', lab.names[from]!, 'ping', '-n', '-q', '-c', '200', '-i', '0.01', '-W', '1', lab.address(to)], { encoding: 'utf8' });
  const counts = /(\d+) packets transmitted, (\d+) received/.exec(ping.stdout);
  if (!counts) throw new Error(`ping printed no summary: ${ping.stdout}${ping.stderr}`);
  return { lost: (100 * (Number(counts[1]) - Number(counts[2]))) / Number(counts[1]), stderr: ping.stderr };
}

/** One datagram from `from` to `to`'s address: rejects with the send's error (EPERM when a rule drops it on the way out). */
async function udpSend(lab: Lab, from: string, to: string): Promise<void> {
  const sender: dgram.Socket = await lab.nodes[from]!.createSocket('udp4');
  try {
    await new Promise<void>((resolve, reject) => sender.send('hello', 7001, lab.address(to), (error) => (error ? reject(error) : resolve())));
  } finally {
    sender.close();
  }
}

describe.skipIf(!privileged)('createLab', () => {
  afterAll(() => {
    for (const name of leftovers()) execFileSync('ip', ['netns', 'del', name]);
  });

  it('builds a routed three-subnet lab in which every node reaches every other, IPv4 and IPv6, and deletes it all', async () => {
    const lab = await createLab(routed);
    try {
      expect(Object.keys(lab.names).sort()).toEqual(['a', 'b', 'c', 'r1', 'r2', 's1', 's2']);
      expect(leftovers().sort()).toEqual(Object.values(lab.names).sort());
      for (const family of [4, 6] as const) {
        const matrix = await lab.connectivity({ family, timeout: SLOW });
        expect(matrix.dropped).toEqual({ pairs: 0, of: 20 });
        expect(String(matrix)).toContain('dropped: 0 of 20 (0%)');
      }
      // What `ip` sees: a bridge with its ports, forwarding on routers, routes through them.
      const ports = JSON.parse(execFileSync('ip', ['-n', lab.names.s1!, '-j', 'link', 'show', 'master', 'br0'], { encoding: 'utf8' }));
      expect(ports.map((p: { ifname: string }) => p.ifname).sort()).toEqual(['eth0', 'eth1', 'eth2']);
      expect(inNs(lab, 'r1', 'sysctl', '-n', 'net.ipv4.ip_forward').trim()).toBe('1');
      expect(inNs(lab, 'a', 'sysctl', '-n', 'net.ipv4.ip_forward').trim()).toBe('0');
      expect(execFileSync('ip', ['-n', lab.names.a!, 'route', 'get', lab.address('c')], { encoding: 'utf8' })).toContain(`via ${lab.address('r1')} dev eth0`);
      // A real conversation across both routers.
      const { stdout } = await lab.nodes.a!.execFile('ping', ['-c', '1', '-W', '5', lab.address('c', 6)]);
      expect(stdout).toContain('1 received');
    } finally {
      await lab.delete();
    }
    expect(leftovers()).toEqual([]);
  });

  it('partitions one side from the other both ways, keeps the rest, and heals one partition at a time', async () => {
    await using lab = await createLab(routed);
    const first = await lab.partition(['a'], ['c']);
    const second = await lab.partition(['b'], ['r2']);
    expect(lab.partitions().map((p) => p.sides)).toEqual([[['a'], ['c']], [['b'], ['r2']]]);
    const cut = await lab.connectivity({ timeout: SLOW });
    const unreached = (m: typeof cut) => m.nodes.flatMap((from, i) => m.nodes.filter((_, j) => m.reachable[i]![j] === false).map((to) => `${from}>${to}`));
    expect(unreached(cut).sort()).toEqual(['a>c', 'b>r2', 'c>a', 'r2>b']);
    await lab.heal(first);
    expect(unreached(await lab.connectivity({ timeout: SLOW })).sort()).toEqual(['b>r2', 'r2>b']);
    await lab.heal();
    expect((await lab.connectivity({ timeout: SLOW })).dropped.pairs).toBe(0);
    await expect(lab.heal(second)).rejects.toMatchObject({ code: 'ERR_NETNS_INVALID_ARG' });
    // A heal of all queued behind a heal of one heals what is left when it runs.
    const third = await lab.partition(['a'], ['b']);
    await lab.partition(['a'], ['c']);
    await Promise.all([lab.heal(third), lab.heal()]);
    expect(lab.partitions()).toEqual([]);
    await expect(lab.partition(['a'], ['a'])).rejects.toThrow(/on both sides/);
    await expect(lab.partition(['s1'], ['c'])).rejects.toThrow(/switch/);
  });

  it('fails a send across a partition at once, on either side, not only the receive', async () => {
    await using lab = await createLab(routed);
    await lab.partition(['a'], ['c']);
    await expect(udpSend(lab, 'a', 'c')).rejects.toMatchObject({ code: 'EPERM' });
    await expect(udpSend(lab, 'c', 'a')).rejects.toMatchObject({ code: 'EPERM' });
    await expect(udpSend(lab, 'a', 'b')).resolves.toBeUndefined();
  });

  it('leaves no partition table on any node when a partition fails half-way', async () => {
    await using lab = await createLab(routed);
    // c already has the first partition's table, with a plain chain where the cut needs its input hook: a's side is
    // cut, then c's transaction fails.
    inNs(lab, 'c', 'nft', 'add table inet netns_lab_partition_1; add chain inet netns_lab_partition_1 input');
    await expect(lab.partition(['a'], ['c'])).rejects.toThrow();
    expect(lab.partitions()).toEqual([]);
    for (const node of Object.keys(lab.names)) expect(inNs(lab, node, 'nft', 'list', 'tables'), node).not.toContain('netns_lab_partition');
    expect((await lab.connectivity({ timeout: SLOW })).dropped.pairs).toBe(0);
  });

  it('takes a link down and brings it back with its addresses and routes, IPv6 too', async () => {
    await using lab = await createLab(routed);
    await lab.linkDown('r1', 'r2');
    expect(lab.linksDown()).toEqual([['r1', 'r2']]);
    expect(execFileSync('ip', ['-n', lab.names.r1!, '-j', 'link', 'show', 'eth1'], { encoding: 'utf8' })).not.toContain('"UP"');
    expect((await lab.connectivity({ timeout: SLOW })).dropped.pairs).toBe(12); // {a, b, r1} and {c, r2} cut off: 3 × 2 × 2
    await lab.linkUp('r1', 'r2');
    expect(lab.linksDown()).toEqual([]);
    for (const family of [4, 6] as const) expect((await lab.connectivity({ family, timeout: SLOW })).dropped.pairs).toBe(0);
  });

  it('limits a direction by rate (tbf) and drops a share of it without netem (nftables), until cleared', async () => {
    await using lab = await createLab({ prefix, hosts: { a: {}, b: {} }, links: [['a', 'b', { impair: { a: { rate: '1mbit' } } }]] });
    const qdiscs = () => JSON.parse(inNs(lab, 'a', 'tc', '-j', 'qdisc', 'show', 'dev', 'eth0'));
    expect(qdiscs()).toEqual([expect.objectContaining({ kind: 'tbf', root: true, options: expect.objectContaining({ rate: 125000 }) })]);
    expect(lab.impairments()).toEqual([{ from: 'a', to: 'b', interface: 'eth0', impairment: { rate: '1mbit' }, text: 'rate 1mbit' }]);
    // The other direction is untouched.
    expect(JSON.parse(inNs(lab, 'b', 'tc', '-j', 'qdisc', 'show', 'dev', 'eth0'))[0].kind).not.toBe('tbf');

    await lab.impair('a', 'b', { loss: 100 });
    expect(qdiscs()[0].kind).not.toBe('tbf'); // replaced, not added to
    await lab.clearImpairment('a', 'b');
    expect(await deliveredOf(lab, 50, { loss: 100 })).toBe(0);
    const half = await deliveredOf(lab, 400, { loss: 50 });
    expect(half).toBeGreaterThan(0);
    expect(half).toBeLessThan(400);
    expect(await deliveredOf(lab, 50, { loss: 0 })).toBe(50);
    expect(lab.impairments()).toEqual([]);
    for (const node of ['a', 'b']) expect(inNs(lab, node, 'nft', 'list', 'ruleset')).toBe('');
  });

  it("loses packets on the wire with loss set on a host's end or on the switch's: ping counts them lost, and no sender is told (ENOBUFS)", async () => {
    await using lab = await createLab({ prefix, hosts: { a: {}, b: {} }, switches: { s1: {} }, links: [['a', 's1'], ['b', 's1']], ipv6: false });
    for (const [from, to] of [['a', 's1'], ['s1', 'b']] as [string, string][]) {
      await lab.impair(from, to, { loss: 20 });
      const { lost, stderr } = pingLoss(lab, 'a', 'b');
      // 20% of the requests: 40 of 200 expected, a spread of about 6; the bounds are five spreads and more away.
      expect({ from, to, lost, stderr }).toEqual({ from, to, lost: expect.toSatisfy((share: number) => share > 5 && share < 40), stderr: '' });
      await lab.clearImpairment(from, to);
      const delivered = await deliveredOf(lab, 200, { loss: 20 }, [from, to]);
      expect({ from, to, delivered }).toEqual({ from, to, delivered: expect.toSatisfy((n: number) => n > 100 && n < 195) });
      expect(udpSendErrors(lab, 'a')).toBe(0);
    }
    for (const node of ['a', 'b', 's1']) expect(inNs(lab, node, 'nft', 'list', 'ruleset')).toBe('');
  });

  it("runs a command in a node as ip netns exec does: /sys shows the node's own interfaces and MAC, /etc/netns/NAME is bound over /etc", async () => {
    // hosts: false: the folder is the test's own, as a user makes it for ip netns exec.
    await using lab = await createLab({ prefix, hosts: { a: {}, b: {} }, routers: { r1: {} }, links: [['a', 'r1'], ['r1', 'b']], ipv6: false }, { hosts: false });
    const etcDir = `/etc/netns/${lab.names.r1}`;
    mkdirSync(etcDir, { recursive: true });
    writeFileSync(join(etcDir, 'hosts'), `${lab.address('b')} b\n`);
    try {
      expect((await lab.execFile('r1', 'ls', ['/sys/class/net'])).stdout).toBe('eth0\neth1\nlo\n');
      const [link] = JSON.parse(inNs(lab, 'r1', 'ip', '-j', 'link', 'show', 'eth1'));
      const child = lab.spawn('r1', 'cat', ['/sys/class/net/eth1/address', '/etc/hosts'], { stdio: ['ignore', 'pipe', 'inherit'] });
      const [output] = await Promise.all([text(child.stdout!), once(child, 'close')]);
      expect(output).toBe(`${link.address}\n${lab.address('b')} b\n`);
      // etc: false is the network namespace alone, as nodes[node].spawn
      expect((await lab.execFile('r1', 'cat', ['/etc/hosts'], { etc: false })).stdout).toBe(readFileSync('/etc/hosts', 'utf8'));
    } finally {
      rmSync(etcDir, { recursive: true, force: true });
    }
    await expect(lab.execFile('nope', 'true')).rejects.toMatchObject({ code: 'ERR_NETNS_INVALID_ARG' });
  });

  it('asks netem for delay, and where the kernel lacks it says so with ERR_NETNS_UNSUPPORTED and leaves the link unimpaired', async () => {
    await using lab = await createLab({ prefix, hosts: { a: {}, b: {} }, links: [['a', 'b']] });
    try {
      await lab.impair('a', 'b', { delay: '20ms', jitter: '5ms', loss: 1 });
      expect(JSON.parse(inNs(lab, 'a', 'tc', '-j', 'qdisc', 'show', 'dev', 'eth0'))[0]).toMatchObject({ kind: 'netem' });
    } catch (error) {
      expect(error).toMatchObject({ code: 'ERR_NETNS_UNSUPPORTED', message: expect.stringContaining('sch_netem') });
      expect(JSON.parse(inNs(lab, 'a', 'tc', '-j', 'qdisc', 'show', 'dev', 'eth0'))[0].kind).not.toBe('netem');
      expect(lab.impairments()).toEqual([]);
    }
  });

  it("captures one node's side of a link to a pcap file that tcpdump reads", async () => {
    await using lab = await createLab({ ...routed, ipv6: false });
    const file = join(mkdtempSync(join(tmpdir(), 'netns-lab-')), 'c.pcap');
    const capture = await lab.capture('c', 's2', { file });
    await lab.nodes.a!.execFile('ping', ['-c', '1', '-W', '5', lab.address('c')]);
    const { packets } = await capture.stop();
    const lines = tcpdumpLines(file);
    expect(lines).toContainEqual(expect.stringContaining(`${lab.address('a')} > ${lab.address('c')}: ICMP echo request`));
    expect(lines).toContainEqual(expect.stringContaining(`${lab.address('c')} > ${lab.address('a')}: ICMP echo reply`));
    expect(packets).toBe(lines.length);
    rmSync(dirname(file), { recursive: true });
  });

  it('draws itself as Mermaid and DOT, with impairments and links down marked', async () => {
    await using lab = await createLab({ ...routed, ipv6: false });
    await lab.impair('r1', 'r2', { rate: '10mbit', loss: 5 });
    await lab.linkDown('b', 's1');
    const mermaid = lab.picture();
    expect(mermaid).toMatch(/^graph LR\n/);
    expect(mermaid).toContain('r1{{"r1"}}');
    expect(mermaid).toContain('r1→r2: rate 10mbit, loss 5%');
    expect(mermaid).toContain('b -.-|');
    const dot = lab.picture('dot');
    expect(dot).toContain('"r1" -- "r2" [label=');
    expect(dot).toContain('style=dashed');
    expect(() => lab.picture('png' as never)).toThrow(/mermaid/);
  });

  it("takes nodes named as Object.prototype's members as themselves: built, impaired, taken down and up", async () => {
    await using lab = await createLab({
      prefix,
      hosts: { constructor: {}, toString: {} },
      switches: { valueOf: {} },
      links: [['constructor', 'valueOf', { impair: { constructor: { rate: '10mbit' } } }], ['toString', 'valueOf']],
    });
    expect(lab.impairments().map((i) => [i.from, i.to, i.text])).toEqual([['constructor', 'valueOf', 'rate 10mbit']]);
    await lab.linkDown('toString', 'valueOf');
    await lab.linkUp('toString', 'valueOf');
    expect((await lab.connectivity({ timeout: SLOW })).dropped).toEqual({ pairs: 0, of: 2 });
  });

  it('a failure half-way removes what it made and never what it did not make', async () => {
    const taken = await NetNS.create(`${prefix}clash.b`);
    try {
      await expect(createLab({ prefix, hosts: { a: {}, b: {}, c: {} }, links: [['a', 'b'], ['b', 'c']] }, { name: 'clash' })).rejects.toMatchObject({ code: 'EEXIST' });
      expect(leftovers()).toEqual([`${prefix}clash.b`]);
      expect(NetNS.open(`${prefix}clash.b`).inode).toBe(taken.inode);
      // The hosts files are written while the namespaces are made: the taken name's is removed too, or
      // `ip netns exec` in that namespace would bind the lab's hosts file for good.
      expect(hostsLeftovers().filter((name) => name.startsWith(`${prefix}clash.`))).toEqual([]);
    } finally {
      await taken.delete();
    }
  });

  it("a step the kernel refuses is ERR_NETNS_FIXTURE naming the step in ip's terms and its node, and the lab is gone", async () => {
    // A node's steps go in one netlink batch: the error must still name the one refused, not the first or the last.
    const failed = createLab({ prefix, hosts: { a: {}, b: {} }, links: [['a', 'b', { addresses: { a: ['10.77.0.1/24', 'ff02::5/64'] } }]] }, { name: 'refused' });
    await expect(failed).rejects.toMatchObject({
      code: 'ERR_NETNS_FIXTURE',
      message: expect.stringMatching(new RegExp(`^addr add ff02::5/64 dev eth0 in ${prefix}refused\\.a failed: .*EADDRNOTAVAIL`)),
      cause: { code: 'EADDRNOTAVAIL' },
    });
    expect(leftovers()).toEqual([]);
  });

  it('deletes only the namespaces it made: a name deleted and made again by someone else is left alone, at delete() and at exit', async () => {
    const lab = await createLab({ prefix, hosts: { a: {}, b: {} }, links: [['a', 'b']] });
    execFileSync('ip', ['netns', 'del', lab.names.b!]);
    execFileSync('ip', ['netns', 'add', lab.names.b!]);
    try {
      await lab.delete();
      expect(leftovers()).toEqual([lab.names.b]);
    } finally {
      execFileSync('ip', ['netns', 'del', lab.names.b!]);
    }
    const script = `
      const { createLab } = await import(${JSON.stringify(new URL('../../dist/testing.js', import.meta.url).href)});
      const { execFileSync } = await import('node:child_process');
      const lab = await createLab({ prefix: ${JSON.stringify(prefix)}, hosts: { a: {}, b: {} }, links: [['a', 'b']] });
      execFileSync('ip', ['netns', 'del', lab.names.b]);
      execFileSync('ip', ['netns', 'add', lab.names.b]);
      console.log(lab.names.b);`;
    const replaced = execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }).trim();
    try {
      expect(leftovers()).toEqual([replaced]); // the exit hook removed a, and left the b it did not make
    } finally {
      execFileSync('ip', ['netns', 'del', replaced]);
    }
  });

  it('runs changes of one link one after another: racing impairments end as the last one, in the kernel and the listing', async () => {
    await using lab = await createLab({ prefix, hosts: { a: {}, b: {} }, links: [['a', 'b']], ipv6: false });
    const outcomes = await Promise.allSettled([lab.impair('a', 'b', { rate: '1mbit' }), lab.impair('a', 'b', { rate: '2mbit', loss: 5 }), lab.impair('a', 'b', { loss: 20 })]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled']);
    expect(lab.impairments().map((i) => i.text)).toEqual(['loss 20%']);
    expect(JSON.parse(inNs(lab, 'a', 'tc', '-j', 'qdisc', 'show', 'dev', 'eth0'))[0].kind).not.toBe('tbf');
    expect(inNs(lab, 'b', 'nft', 'list', 'ruleset').match(/drop/g)).toHaveLength(1); // dropped as b receives it
    expect(inNs(lab, 'a', 'nft', 'list', 'ruleset')).toBe('');
    await Promise.all([lab.linkDown('a', 'b'), lab.linkUp('a', 'b'), lab.linkDown('a', 'b')]);
    expect(lab.linksDown()).toEqual([['a', 'b']]);
  });

  it('changes of one node at once share its nftables socket, and a delete beside pending changes leaves no socket', async () => {
    const before = socketCount();
    const lab = await createLab({ prefix, hosts: { a: {}, b: {}, c: {} }, links: [['a', 'b'], ['a', 'c']], ipv6: false });
    // Two directions and a partition, all from a, at once: each opens a's nf_tables socket on first use.
    await Promise.all([lab.impair('a', 'b', { loss: 10 }), lab.impair('a', 'c', { loss: 10 }), lab.partition(['a'], ['b'])]);
    const pending = [lab.impair('b', 'a', { loss: 5 }), lab.partition(['c'], ['b']), lab.heal()].map((p) => p.catch((e: unknown) => e));
    await lab.delete();
    for (const outcome of await Promise.all(pending)) if (outcome !== undefined && !('id' in (outcome as object))) expect(outcome).toMatchObject({ name: 'NetnsError' });
    // nf_tables sockets are closed in the background (see NetlinkHandle.close): awaited, not assumed.
    await vi.waitFor(() => expect(socketCount()).toBeLessThanOrEqual(before), { timeout: 5000 });
    expect(leftovers()).toEqual([]);
  });

  it('stops its captures when deleted, and a matrix of a deleted lab rejects rather than report every pair unreached', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'netns-lab-'));
    const before = socketCount();
    const lab = await createLab({ prefix, hosts: { a: {}, b: {} }, links: [['a', 'b']], ipv6: false });
    const capture = await lab.capture('a', 'b', { file: join(dir, 'a.pcap') });
    await lab.delete();
    expect(socketCount()).toBeLessThanOrEqual(before); // the capture's socket closed with the lab's own
    expect(fdCountOf(join(dir, 'a.pcap'))).toBe(0); // and its file
    expect(await capture.stop()).toMatchObject({ file: join(dir, 'a.pcap') });
    await expect(lab.connectivity()).rejects.toMatchObject({ code: 'ERR_NETNS_CLOSED' });
    rmSync(dir, { recursive: true });
  });

  it('refuses bad matrix options, and cuts IPv6 link-local traffic in a partition too', async () => {
    await using lab = await createLab({ prefix, hosts: { a: {}, b: {} }, switches: { s: {} }, links: [['a', 's'], ['b', 's']] });
    for (const options of [{ family: 5 }, { timeout: -1 }, { timeout: 1.5 }, { nodes: ['s'] }, { nodes: ['zz'] }, { famly: 6 }]) {
      await expect(lab.connectivity(options as never)).rejects.toMatchObject({ code: 'ERR_NETNS_INVALID_ARG' });
    }
    const linkLocal = (JSON.parse(execFileSync('ip', ['-n', lab.names.b!, '-j', '-6', 'addr', 'show', 'dev', 'eth0', 'scope', 'link'], { encoding: 'utf8' }))[0].addr_info.find((a: { local?: string }) => a.local).local as string);
    const ping = () => lab.nodes.a!.execFile('ping', ['-6', '-c', '1', '-W', '1', `${linkLocal}%eth0`]);
    await ping();
    const cut = await lab.partition(['a'], ['b']);
    await expect(ping()).rejects.toMatchObject({ code: 'ERR_NETNS_COMMAND_FAILED' });
    await lab.heal(cut);
    await ping();
  });

  it('a kept, named lab is found again by Lab.attach from its state', async () => {
    const made = await createLab({ prefix, hosts: { a: {}, b: {} }, links: [['a', 'b']] }, { name: 'kept', keep: true });
    await made.partition(['a'], ['b']);
    const state = JSON.parse(JSON.stringify(made.state()));
    made.close();
    const again = await Lab.attach(state);
    try {
      expect(again.names).toEqual({ a: `${prefix}kept.a`, b: `${prefix}kept.b` });
      expect((await again.connectivity({ timeout: SLOW })).dropped.pairs).toBe(2);
      await again.heal();
      expect((await again.connectivity({ timeout: SLOW })).dropped.pairs).toBe(0);
    } finally {
      await again.delete();
    }
    expect(leftovers()).toEqual([]);
  });
});
