// capturePackets writes what passes an interface, both ways, to a pcap file
// that tcpdump and tshark read back: addresses, ports, payloads, order and
// count as sent; drops counted; nothing left open after stop().
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { accessSync, constants, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, realpathSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type dgram from 'node:dgram';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NetNS, type NetnsError } from '../../dist/index.js';
import { capturePackets, createTestNetwork, type TestNetwork } from '../../dist/testing.js';
import { inUserNamespace, privileged } from '../helpers/privileges.js';
import { fdCountOf, openFdCount } from '../helpers/process-state.js';
import { tcpdumpLines } from '../helpers/tcpdump-read.js';
import { tcpHello } from '../helpers/tcp-hello.js';

const A = '10.77.0.1';
const B = '10.77.0.2';
const testing = fileURLToPath(new URL('../../dist/testing.js', import.meta.url));

/** tshark's fields of each packet `filter` matches, one array per packet, in file order. */
function tshark(file: string, filter: string, ...fields: string[]): string[][] {
  const args = ['-r', file, '-Y', filter, '-T', 'fields', '-E', 'separator=|', ...fields.flatMap((field) => ['-e', field])];
  const out = execFileSync('tshark', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  return out.split('\n').filter(Boolean).map((line) => line.split('|'));
}

/** Whether this process may open `path` for reading and writing. */
function readableAndWritable(path: string): boolean {
  try {
    accessSync(path, constants.R_OK | constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

const hex = (text: string) => Buffer.from(text).toString('hex');
// tshark prints a flag as 1/0 or True/False, by version.
const flag = (value: string | undefined) => value === '1' || value === 'True';

/** Packet sockets open in the namespace (its /proc/net/packet, one line each after the heading). */
async function packetSockets(ns: NetNS): Promise<number> {
  const table = (await ns.readFile('/proc/thread-self/net/packet')).toString();
  return table.split('\n').filter(Boolean).length - 1;
}

/** A UDP socket in `ns` that answers each datagram with "re:" and the datagram. */
async function udpEcho(ns: NetNS, port: number): Promise<dgram.Socket> {
  const socket = await ns.createSocket('udp4', { address: B, port });
  socket.on('message', (message, from) => socket.send(Buffer.concat([Buffer.from('re:'), message]), from.port, from.address));
  return socket;
}

function sendAll(socket: dgram.Socket, payloads: Buffer[], port: number, host: string): Promise<void> {
  return Promise.all(payloads.map((payload) => new Promise<void>((resolve, reject) => socket.send(payload, port, host, (error) => (error ? reject(error) : resolve()))))).then(() => {});
}

/** An IPv4 UDP datagram (header checksum set, UDP checksum 0: none). */
function ipv4Udp(source: string, destination: string, port: number, text: string): Buffer {
  const payload = Buffer.from(text);
  const packet = Buffer.alloc(28 + payload.length);
  packet.writeUInt8(0x45, 0);
  packet.writeUInt16BE(packet.length, 2);
  packet.writeUInt8(64, 8);
  packet.writeUInt8(17, 9);
  Buffer.from(source.split('.').map(Number)).copy(packet, 12);
  Buffer.from(destination.split('.').map(Number)).copy(packet, 16);
  let sum = 0;
  for (let i = 0; i < 20; i += 2) sum += packet.readUInt16BE(i);
  while (sum > 0xffff) sum = (sum & 0xffff) + (sum >>> 16);
  packet.writeUInt16BE(~sum & 0xffff, 10);
  packet.writeUInt16BE(40000, 20);
  packet.writeUInt16BE(port, 22);
  packet.writeUInt16BE(8 + payload.length, 24);
  payload.copy(packet, 28);
  return packet;
}

describe.skipIf(!privileged)('capturePackets', () => {
  let network: TestNetwork<'a' | 'b'>;
  let dir: string;
  const fileFor = (name: string) => join(dir, `${name}.pcap`);

  beforeAll(async () => {
    network = await createTestNetwork({ hosts: { a: { addr: `${A}/24` }, b: { addr: `${B}/24` } }, links: [['a', 'b']] });
    dir = mkdtempSync(join(tmpdir(), 'netns-capture-'));
  });

  afterAll(async () => {
    await network?.delete();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('writes a UDP exchange both ways: addresses, ports and payloads as tcpdump and tshark read them', async () => {
    const echo = await udpEcho(network.hosts.b, 40053);
    const client = await network.hosts.a.createSocket('udp4');
    const capture = await capturePackets(network.hosts.a, 'eth0', { file: fileFor('udp') });
    const reply = new Promise<Buffer>((resolve) => client.once('message', resolve));
    await sendAll(client, [Buffer.from('ping-1')], 40053, B);
    expect((await reply).toString()).toBe('re:ping-1');
    const summary = await capture.stop();
    const clientPort = String(client.address().port);
    echo.close();
    client.close();

    expect(summary).toEqual({ file: fileFor('udp'), packets: expect.any(Number), dropped: 0 });
    expect(tshark(fileFor('udp'), 'frame', 'frame.number')).toHaveLength(summary.packets);
    expect(tshark(fileFor('udp'), 'udp', 'ip.src', 'ip.dst', 'udp.srcport', 'udp.dstport', 'udp.payload')).toEqual([
      [A, B, clientPort, '40053', hex('ping-1')],
      [B, A, '40053', clientPort, hex('re:ping-1')],
    ]);
    const lines = tcpdumpLines(fileFor('udp')).filter((line) => line.includes('UDP'));
    expect(lines).toEqual([
      expect.stringContaining(`IP ${A}.${clientPort} > ${B}.40053: UDP, length 6`),
      expect.stringContaining(`IP ${B}.40053 > ${A}.${clientPort}: UDP, length 9`),
    ]);
  });

  it('writes a TCP connection both ways: handshake, data and close', async () => {
    const capture = await capturePackets(network.hosts.a, 'eth0', { file: fileFor('tcp') });
    expect(await tcpHello(network.hosts.b, B, network.hosts.a)).toBe('hello');
    await capture.stop();

    const packets = tshark(fileFor('tcp'), 'tcp', 'ip.src', 'tcp.flags.syn', 'tcp.flags.ack', 'tcp.flags.fin', 'tcp.payload').map(([src, syn, ack, fin, payload]) => ({
      src,
      syn: flag(syn),
      ack: flag(ack),
      fin: flag(fin),
      payload,
    }));
    expect(packets.slice(0, 3)).toMatchObject([
      { src: A, syn: true, ack: false },
      { src: B, syn: true, ack: true },
      { src: A, syn: false, ack: true },
    ]);
    expect(packets.filter(({ payload }) => payload)).toMatchObject([{ src: B, payload: hex('hello') }]);
    expect(packets.filter(({ fin }) => fin).map(({ src }) => src).sort()).toEqual([A, B]);
  });

  it('writes a valid file with no packets, with the nanosecond header', async () => {
    const capture = await capturePackets(network.hosts.b, 'lo', { file: fileFor('empty') });
    expect(await capture.stop()).toEqual({ file: fileFor('empty'), packets: 0, dropped: 0 });

    const header = readFileSync(fileFor('empty'));
    expect(header).toHaveLength(24);
    expect(header.readUInt32LE(0)).toBe(0xa1b23c4d);
    expect(header.readUInt32LE(16)).toBe(262144);
    expect(header.readUInt32LE(20)).toBe(1);
    expect(tcpdumpLines(fileFor('empty'))).toEqual([]);
    expect(tshark(fileFor('empty'), 'frame', 'frame.number')).toEqual([]);
  });

  it('keeps every one of 5000 datagrams, in the order sent, with nothing dropped', async () => {
    const sink = await network.hosts.b.createSocket('udp4', { address: B, port: 6000 });
    const sender = await network.hosts.a.createSocket('udp4');
    const capture = await capturePackets(network.hosts.a, 'eth0', { file: fileFor('many') });
    const sequence = Array.from({ length: 5000 }, (_, i) => Buffer.from(String(i).padStart(4, '0')));
    for (let start = 0; start < sequence.length; start += 250) await sendAll(sender, sequence.slice(start, start + 250), 6000, B);
    const summary = await capture.stop();
    sender.close();
    sink.close();

    expect(summary.dropped).toBe(0);
    expect(tshark(fileFor('many'), 'frame', 'frame.number')).toHaveLength(summary.packets);
    const payloads = tshark(fileFor('many'), 'udp && !icmp', 'udp.payload').map(([data]) => Buffer.from(data!, 'hex').toString());
    expect(payloads).toEqual(sequence.map(String));
  });

  it('counts the packets the kernel dropped while the file could not be written', async () => {
    // The file is a pipe whose reader waits for a word before reading on: the
    // capture's writer blocks meanwhile, so its ring (64 MiB) fills and
    // overflows under a flood of 60,000 full-size datagrams (85 MiB).
    const pipe = join(dir, 'drops.fifo');
    execFileSync('mkfifo', [pipe]);
    const reader = spawn('sh', ['-c', 'exec 3<"$0"; read go; exec cat <&3 >"$1"', pipe, fileFor('drops')], { stdio: ['pipe', 'inherit', 'inherit'] });
    const readerDone = new Promise((resolve) => reader.once('exit', resolve));
    const capture = await capturePackets(network.hosts.a, 'eth0', { file: pipe });
    const count = 60_000;
    const flood = `
      const socket = require('node:dgram').createSocket('udp4');
      const payload = Buffer.alloc(1472);
      let done = 0;
      for (let i = 0; i < ${count}; i++) socket.send(payload, 9, '${B}', () => { if (++done === ${count}) socket.close(); });`;
    const run = spawnSync('ip', ['netns', 'exec', network.names.a, process.execPath, '-e', flood], { stdio: 'inherit' });
    expect(run.status).toBe(0);
    const stopped = capture.stop();
    reader.stdin!.end('go\n');
    const summary = await stopped;
    expect(await readerDone).toBe(0);

    expect(summary.dropped).toBeGreaterThan(0);
    expect(summary.packets + summary.dropped).toBeGreaterThanOrEqual(count);
    expect(tshark(fileFor('drops'), 'frame', 'frame.number')).toHaveLength(summary.packets);
  });

  it('on lo writes each packet once, though it passes the interface twice', async () => {
    const receiver = await network.hosts.a.createSocket('udp4', { address: '127.0.0.1', port: 7000 });
    const sender = await network.hosts.a.createSocket('udp4');
    const capture = await capturePackets(network.hosts.a, 'lo', { file: fileFor('lo') });
    const received = new Promise((resolve) => receiver.once('message', resolve));
    await sendAll(sender, [Buffer.from('loop')], 7000, '127.0.0.1');
    await received;
    await capture.stop();
    receiver.close();
    sender.close();

    expect(tshark(fileFor('lo'), 'frame', 'ip.src', 'ip.dst', 'udp.dstport', 'udp.payload')).toEqual([['127.0.0.1', '127.0.0.1', '7000', hex('loop')]]);
  });

  it('keeps snaplen bytes of each packet and its length on the wire; timestamps in nanoseconds of the real clock', async () => {
    const sink = await network.hosts.b.createSocket('udp4', { address: B, port: 6001 });
    const sender = await network.hosts.a.createSocket('udp4');
    const capture = await capturePackets(network.hosts.a, 'eth0', { file: fileFor('snap'), snaplen: 64 });
    const before = Date.now();
    await sendAll(sender, [Buffer.alloc(500, 'x')], 6001, B);
    const after = Date.now();
    await capture.stop();
    sender.close();
    sink.close();

    expect(readFileSync(fileFor('snap')).readUInt32LE(16)).toBe(64);
    const [[captured, wire, time]] = tshark(fileFor('snap'), 'udp', 'frame.cap_len', 'frame.len', 'frame.time_epoch') as [[string, string, string]];
    expect([captured, wire]).toEqual(['64', String(14 + 20 + 8 + 500)]);
    expect(time).toMatch(/^\d+\.\d{9}$/);
    expect(Number(time) * 1000).toBeGreaterThanOrEqual(before - 1);
    expect(Number(time) * 1000).toBeLessThanOrEqual(after + 1);
  });

  it('stop() is idempotent, and leaves no descriptor and no socket behind', async () => {
    const file = fileFor('twice');
    const descriptors = openFdCount();
    const capture = await capturePackets(network.hosts.a, 'eth0', { file });
    expect(fdCountOf(realpathSync(file))).toBe(1);
    expect(await packetSockets(network.hosts.a)).toBe(1);
    const [first, second] = await Promise.all([capture.stop(), capture.stop()]);
    expect(second).toEqual(first);
    expect(await capture.stop()).toEqual(first);
    await capture[Symbol.asyncDispose]();
    expect(fdCountOf(realpathSync(file))).toBe(0);
    expect(await packetSockets(network.hosts.a)).toBe(0);
    expect(openFdCount()).toBeLessThanOrEqual(descriptors);
    expect({ file: capture.file, interface: capture.interface, packets: capture.packets }).toEqual({ file, interface: 'eth0', packets: first.packets });
  });

  it('lets the process exit once stopped: nothing is left on the loop', async () => {
    const script = `
      const { capturePackets, createTestNetwork } = await import(${JSON.stringify(testing)});
      const network = await createTestNetwork({ hosts: { a: {} } });
      const capture = await capturePackets(network.hosts.a, 'lo', { file: ${JSON.stringify(fileFor('child'))} });
      await capture.stop();
      await network.delete();`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: 'inherit' });
    const code = await new Promise((resolve) => child.once('exit', resolve));
    expect(code).toBe(0);
  });

  // In a user namespace /dev/net/tun is the real root's: where it is 0600 (as on this machine), it cannot be opened.
  it.skipIf(inUserNamespace && !readableAndWritable('/dev/net/tun'))('captures a tun device as raw IP (link type 101)', async () => {
    await network.ip('a', 'tuntap', 'add', 'mode', 'tun', 'dev', 'tun0');
    await network.ip('a', 'link', 'set', 'tun0', 'up');
    const capture = await capturePackets(network.hosts.a, 'tun0', { file: fileFor('tun') });
    // A process attaches to tun0 and writes one datagram in: the kernel receives it on tun0.
    const attachAndWrite = `
import fcntl, os, struct, sys
fd = os.open('/dev/net/tun', os.O_RDWR)
fcntl.ioctl(fd, 0x400454ca, struct.pack('16sH', b'tun0', 0x0001 | 0x1000))  # TUNSETIFF, IFF_TUN | IFF_NO_PI
os.write(fd, bytes.fromhex(sys.argv[1]))`;
    await network.hosts.a.execFile('python3', ['-c', attachAndWrite, ipv4Udp('10.78.0.2', '10.78.0.1', 40056, 'via tun').toString('hex')]);
    await capture.stop();
    await network.ip('a', 'link', 'del', 'tun0');

    expect(readFileSync(fileFor('tun')).readUInt32LE(20)).toBe(101);
    expect(tshark(fileFor('tun'), 'udp', 'ip.src', 'ip.dst', 'udp.dstport', 'udp.payload')).toEqual([['10.78.0.2', '10.78.0.1', '40056', hex('via tun')]]);
  });

  it('goes on after the interface goes down and up, and stops cleanly once its namespace is gone', async () => {
    const own = await createTestNetwork({ hosts: { c: { addr: `${A}/24` }, d: { addr: `${B}/24` } }, links: [['c', 'd']] });
    try {
      const echo = await udpEcho(own.hosts.d, 40054);
      const client = await own.hosts.c.createSocket('udp4');
      const capture = await capturePackets(own.hosts.c, 'eth0', { file: fileFor('away') });
      const exchange = async (text: string) => {
        const reply = new Promise<Buffer>((resolve) => client.once('message', resolve));
        await sendAll(client, [Buffer.from(text)], 40054, B);
        expect((await reply).toString()).toBe(`re:${text}`);
      };
      await exchange('before');
      await own.ip('c', 'link', 'set', 'eth0', 'down');
      await own.ip('c', 'link', 'set', 'eth0', 'up');
      await exchange('after');
      echo.close();
      client.close();
      await own.delete();
      const summary = await capture.stop();

      expect(tshark(fileFor('away'), 'udp', 'udp.payload').map(([payload]) => Buffer.from(payload!, 'hex').toString())).toEqual(['before', 're:before', 'after', 're:after']);
      expect(tshark(fileFor('away'), 'frame', 'frame.number')).toHaveLength(summary.packets);
    } finally {
      await own.delete();
    }
  });

  describe('refuses bad input with a coded error, leaving nothing behind', () => {
    const openSocketCount = () =>
      readdirSync('/proc/self/fd').filter((fd) => {
        try {
          return readlinkSync(`/proc/self/fd/${fd}`).startsWith('socket:');
        } catch {
          return false;
        }
      }).length;

    async function refusal(start: () => Promise<unknown>, file?: string): Promise<NetnsError> {
      const sockets = openSocketCount();
      const error = (await start().then(() => null, (e: unknown) => e)) as NetnsError;
      expect(error).toMatchObject({ name: 'NetnsError' });
      // Sockets only (Node 26 may open a descriptor of its own meanwhile); at most as many: the capture's socket is
      // counted exactly below, and other work of the process may close one meanwhile.
      expect(openSocketCount()).toBeLessThanOrEqual(sockets);
      expect(await packetSockets(network.hosts.a)).toBe(0);
      if (file) expect(() => statSync(file)).toThrow(expect.objectContaining({ code: 'ENOENT' }));
      return error;
    }

    it('an interface not in the namespace is ENODEV', async () => {
      const file = fileFor('nodev');
      const error = await refusal(() => capturePackets(network.hosts.a, 'eth9', { file }), file);
      expect(error).toMatchObject({ code: 'ENODEV', message: expect.stringContaining(`capturing eth9 in ${network.hosts.a.path}`) });
    });

    it.each([
      ['a file in a missing folder', () => join(dir, 'missing', 'x.pcap'), 'ENOENT'],
      ['a folder', () => (mkdirSync(join(dir, 'folder'), { recursive: true }), join(dir, 'folder')), 'EISDIR'],
    ])('%s is the file system error', async (_what, target, code) => {
      const error = await refusal(() => capturePackets(network.hosts.a, 'eth0', { file: target() }));
      expect(error).toMatchObject({ code, syscall: 'open' });
    });

    it.each([
      ['no options', undefined],
      ['no file', {}],
      ['an empty file name', { file: '' }],
      ['a snaplen of 0', { file: 'x', snaplen: 0 }],
      ['a snaplen over 262144', { file: 'x', snaplen: 262145 }],
      ['a fractional snaplen', { file: 'x', snaplen: 1.5 }],
      ['an unknown option', { file: 'x', snapLen: 64 }],
    ])('%s is ERR_NETNS_INVALID_ARG', async (_what, options) => {
      const error = await refusal(() => capturePackets(network.hosts.a, 'eth0', options as never));
      expect(error.code).toBe('ERR_NETNS_INVALID_ARG');
    });

    it('an unknown option names the one likely meant', async () => {
      const error = await refusal(() => capturePackets(network.hosts.a, 'eth0', { file: 'x', snapLen: 64 } as never));
      expect(error.message).toContain('did you mean snaplen?');
    });

    it('something not a NetNS is ERR_NETNS_INVALID_ARG; a malformed interface name ERR_NETNS_NETLINK_INVALID', async () => {
      expect((await refusal(() => capturePackets({} as never, 'eth0', { file: 'x' }))).code).toBe('ERR_NETNS_INVALID_ARG');
      expect((await refusal(() => capturePackets(network.hosts.a, 'a/b', { file: 'x' }))).code).toBe('ERR_NETNS_NETLINK_INVALID');
    });

    it('a closed NetNS is ERR_NETNS_CLOSED', async () => {
      const ns = NetNS.open(network.names.a);
      ns.close();
      const file = fileFor('closed');
      expect((await refusal(() => capturePackets(ns, 'eth0', { file }), file)).code).toBe('ERR_NETNS_CLOSED');
    });
  });
});
