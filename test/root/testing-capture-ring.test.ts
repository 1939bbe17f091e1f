// capturePackets under load, where its ring and its own writer thread
// matter: a burst sent while this thread is busy is kept whole, times in the
// file never go backwards, a quiet link's packets reach the file without a
// stop(), stop() writes what the ring still holds, and nothing is left running.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, watch } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capturePackets, createTestNetwork, type TestNetwork } from '../../dist/testing.js';
import { privileged } from '../helpers/privileges.js';
import { openFdCount } from '../helpers/process-state.js';

const A = '10.77.1.1';
const B = '10.77.1.2';
const WRITER_THREAD = 'netns-capture'; // native/packet_ring.cc names it so

/** tshark's fields of each packet `filter` matches, one array per packet, in file order. */
function tshark(file: string, filter: string, ...fields: string[]): string[][] {
  const args = ['-r', file, '-Y', filter, '-T', 'fields', '-E', 'separator=|', ...fields.flatMap((field) => ['-e', field])];
  const out = execFileSync('tshark', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], maxBuffer: 256 << 20 });
  return out.split('\n').filter(Boolean).map((line) => line.split('|'));
}

/** Whole records in a pcap file so far (a writer may be midway through one). */
function recordsIn(file: string): number {
  const data = readFileSync(file);
  let count = 0;
  for (let at = 24; at + 16 <= data.length && at + 16 + data.readUInt32LE(at + 8) <= data.length; at += 16 + data.readUInt32LE(at + 8)) count++;
  return count;
}

/** Resolves once `file` holds `count` records, woken by each change to it. */
function untilRecords(file: string, count: number): Promise<void> {
  return new Promise((resolve) => {
    const watcher = watch(file, () => check());
    const check = () => {
      if (recordsIn(file) < count) return;
      watcher.close();
      resolve();
    };
    check();
  });
}

function writerThreads(): number {
  return readdirSync('/proc/self/task').filter((tid) => {
    try {
      return readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim() === WRITER_THREAD;
    } catch {
      return false; // gone while we looked
    }
  }).length;
}

/**
 * Resolves with the count of writer threads once it is `count`, or is still
 * not after a bound. A thread names itself once running, and exits after it
 * settles stop(); nothing announces either: polled, a turn of the loop at a time.
 */
async function untilWriterThreads(count: number): Promise<number> {
  for (let turn = 0; turn < 10_000 && writerThreads() !== count; turn++) await nextTurn();
  return writerThreads();
}

/** Runs `script` with node inside `network`'s host namespace, holding this thread until it ends. */
function nodeIn(network: TestNetwork<'a' | 'b'>, host: 'a' | 'b', script: string): void {
  const run = spawnSync('ip', ['netns', 'exec', network.names[host], process.execPath, '-e', script], { stdio: 'inherit' });
  expect(run.status).toBe(0);
}

describe.skipIf(!privileged)('capturePackets under load', () => {
  let network: TestNetwork<'a' | 'b'>;
  let dir: string;
  const fileFor = (name: string) => join(dir, `${name}.pcap`);

  beforeAll(async () => {
    network = await createTestNetwork({ hosts: { a: { addr: `${A}/24` }, b: { addr: `${B}/24` } }, links: [['a', 'b']] });
    dir = mkdtempSync(join(tmpdir(), 'netns-capture-ring-'));
  });

  afterAll(async () => {
    await network?.delete();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('keeps every datagram of a 2,000-datagram burst (32 MB) sent while this thread is busy', async () => {
    const capture = await capturePackets(network.hosts.a, 'lo', { file: fileFor('burst') });
    // 16 KiB each: the burst is more than a socket's receive queue holds, and less than the ring.
    nodeIn(
      network,
      'a',
      `const socket = require('node:dgram').createSocket('udp4');
      let done = 0;
      for (let i = 0; i < 2000; i++) {
        const payload = Buffer.alloc(16384);
        payload.writeUInt32BE(i);
        socket.send(payload, 9999, '127.0.0.1', () => { if (++done === 2000) socket.close(); });
      }`,
    );
    const summary = await capture.stop();

    expect(summary.dropped).toBe(0);
    const sequence = tshark(fileFor('burst'), 'udp.dstport == 9999 && !icmp', 'udp.payload').map(([data]) => Buffer.from(data!.slice(0, 8), 'hex').readUInt32BE());
    expect(sequence).toEqual(Array.from({ length: 2000 }, (_, i) => i));
  });

  it('writes times that never go backwards over a TCP flood both ways', async () => {
    const capture = await capturePackets(network.hosts.a, 'eth0', { file: fileFor('flood') });
    const server = network.hosts.b.spawn(process.execPath, [
      '-e',
      `const server = require('node:net').createServer((socket) => socket.on('data', (chunk) => socket.write(chunk.subarray(0, 64))).on('end', () => { socket.end(); server.close(); }));
      server.listen(7100, '${B}', () => console.log('ready'));`,
    ]);
    await new Promise((resolve) => server.stdout!.once('data', resolve));
    const exited = new Promise((resolve) => server.once('exit', resolve));
    await network.hosts.a.execFile(process.execPath, [
      '-e',
      `const socket = require('node:net').connect(7100, '${B}', () => {
        const chunk = Buffer.alloc(1 << 16);
        let sent = 0;
        const more = () => { while (sent < 2048) { sent++; if (!socket.write(chunk)) return socket.once('drain', more); } socket.end(); };
        more();
      });
      socket.resume();`,
    ]);
    await exited;
    await capture.stop();

    const times = tshark(fileFor('flood'), 'frame', 'frame.time_epoch').map(([time]) => BigInt(time!.replace('.', '')));
    expect(times.length).toBeGreaterThan(1000);
    const backwards = times.filter((time, i) => i > 0 && time < times[i - 1]!).length;
    expect(backwards).toBe(0);
  });

  it('writes what passes a quiet link while the capture runs, without waiting for stop()', async () => {
    const sink = await network.hosts.b.createSocket('udp4', { address: B, port: 7200 });
    const sender = await network.hosts.a.createSocket('udp4');
    const capture = await capturePackets(network.hosts.a, 'eth0', { file: fileFor('quiet') });
    const received = new Promise((resolve) => sink.once('message', resolve));
    sender.send(Buffer.from('quiet'), 7200, B);
    await received;
    await untilRecords(fileFor('quiet'), 1);

    expect(tshark(fileFor('quiet'), 'udp', 'udp.payload')).toEqual([[Buffer.from('quiet').toString('hex')]]);
    expect(capture.packets).toBe(recordsIn(fileFor('quiet')));
    await capture.stop();
    sink.close();
    sender.close();
  });

  it('stop() writes the packets of a block the kernel has not handed over yet', async () => {
    const sink = await network.hosts.b.createSocket('udp4', { address: B, port: 7300 });
    const sender = await network.hosts.a.createSocket('udp4');
    const capture = await capturePackets(network.hosts.a, 'eth0', { file: fileFor('partial') });
    const received = new Promise((resolve) => sink.once('message', resolve));
    sender.send(Buffer.from('last'), 7300, B);
    await received;
    const summary = await capture.stop(); // at once: the block is not due for 10 ms
    sink.close();
    sender.close();

    expect(summary.packets).toBe(1);
    expect(tshark(fileFor('partial'), 'udp', 'udp.payload')).toEqual([[Buffer.from('last').toString('hex')]]);
  });

  it('leaves no descriptor and no thread behind once stopped', async () => {
    expect(await untilWriterThreads(0)).toBe(0); // those of the tests before
    const descriptors = openFdCount();
    const capture = await capturePackets(network.hosts.a, 'eth0', { file: fileFor('leaks') });
    expect(await untilWriterThreads(1)).toBe(1);
    await capture.stop();

    expect(openFdCount()).toBeLessThanOrEqual(descriptors);
    expect(await untilWriterThreads(0)).toBe(0);
  });
});
