// Issue 35, item 3: capturePackets on a veth link at full TCP speed (iperf3,
// one stream, a -> b), beside tcpdump on the same interface in the same
// rounds, one after the other. Both write a pcap file; each one's share is the
// packets it wrote over the packets that passed the interface while it ran
// (its counters, both ways), so the two are judged by the same count. Goal:
// ours >= 95%. Each file's times are also checked for going backwards (ours
// must never; tcpdump's shows whether the kernel handed packets over out of
// order at all). The writer thread's time on and waiting for a CPU tells a
// slow writer from one starved by other work on the machine.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NetNS } from '../dist/index.js';
import { capturePackets } from '../dist/testing.js';
import { median, onPath, record } from './lib.js';

const ROUNDS = Number(process.env.CAPTURE_BENCH_ROUNDS ?? 5);
// Where both files go: by default the temporary folder, as a test writes them.
const DIR = process.env.CAPTURE_BENCH_DIR ?? tmpdir();
const SECONDS = Number(process.env.CAPTURE_BENCH_SECONDS ?? 3);
const A = '10.79.0.1';
const B = '10.79.0.2';

export async function benchCapture([a, b]) {
  if (!onPath('iperf3') || !onPath('tcpdump')) return 'skipped: needs iperf3 and tcpdump (apt-get install iperf3 tcpdump)';
  link(a, b);
  const dir = mkdtempSync(join(DIR, 'netns-bench-capture-'));
  const ns = NetNS.open(a);
  try {
    const rounds = [];
    for (let round = 0; round < ROUNDS; round++) rounds.push(await measureRound(ns, a, b, dir, round));
    report(rounds);
  } finally {
    ns.close();
    rmSync(dir, { recursive: true, force: true });
    execFileSync('ip', ['-n', a, 'link', 'del', 'eth0']);
  }
}

function link(a, b) {
  execFileSync('ip', ['link', 'add', 'eth0', 'netns', a, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', b]);
  for (const [name, addr] of [[a, A], [b, B]]) {
    execFileSync('ip', ['-n', name, 'addr', 'add', `${addr}/24`, 'dev', 'eth0']);
    execFileSync('ip', ['-n', name, 'link', 'set', 'eth0', 'up']);
  }
}

// One round: ours, then tcpdump, each alone on the link with its own iperf3
// run (two captures at once would share this machine's two CPUs with iperf3).
async function measureRound(ns, a, b, dir, round) {
  const ours = join(dir, `ours-${round}.pcap`);
  const theirs = join(dir, `tcpdump-${round}.pcap`);
  const capture = await capturePackets(ns, 'eth0', { file: ours });
  const writer = await writerThread();
  const before = schedStat(writer);
  const oursRun = await flood(a, b);
  const after = schedStat(writer);
  const summary = await capture.stop();
  const tcpdump = await startTcpdump(a, theirs);
  const tcpdumpRun = await flood(a, b);
  const tcpdumpWrote = await stopTcpdump(tcpdump);
  return {
    gbits: oursRun.gbits,
    tcpdumpGbits: tcpdumpRun.gbits,
    passed: oursRun.passed,
    ours: summary.packets / oursRun.passed,
    oursDropped: summary.dropped,
    writerOnCpu: (after.onCpu - before.onCpu) / oursRun.seconds,
    writerWaiting: (after.waiting - before.waiting) / oursRun.seconds,
    tcpdump: tcpdumpWrote / tcpdumpRun.passed,
    oursBackwards: backwardSteps(ours),
    tcpdumpBackwards: backwardSteps(theirs),
  };
}

/** iperf3 from a to b for SECONDS: its speed, and the packets that passed a's interface meanwhile. */
async function flood(a, b) {
  const server = spawn('ip', ['netns', 'exec', b, 'iperf3', '-s', '-1', '-B', B, '--forceflush'], { stdio: ['ignore', 'pipe', 'ignore'] });
  await new Promise((resolve) => server.stdout.once('data', resolve)); // "Server listening on 5201"
  const exited = new Promise((resolve) => server.once('exit', resolve));
  const before = linkPackets(a);
  const started = process.hrtime.bigint();
  const iperf = JSON.parse(execFileSync('ip', ['netns', 'exec', a, 'iperf3', '-c', B, '-t', String(SECONDS), '-J'], { encoding: 'utf8' }));
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const passed = linkPackets(a) - before;
  await exited;
  return { gbits: iperf.end.sum_received.bits_per_second / 1e9, passed, seconds };
}

/**
 * The capture's writer thread (native/packet_ring.cc names it), once it has
 * named itself: polled, a turn of the loop at a time, bounded.
 */
async function writerThread() {
  for (let turn = 0; turn < 10_000; turn++) {
    const tid = readdirSync('/proc/self/task').find((task) => readFileSync(`/proc/self/task/${task}/comm`, 'utf8').trim() === 'netns-capture');
    if (tid) return tid;
    await nextTurn();
  }
  throw new Error('no capture writer thread');
}

/** Seconds a thread ran, and waited to run while runnable (/proc schedstat): is the writer slow, or starved of CPU? */
function schedStat(tid) {
  const [onCpu, waiting] = readFileSync(`/proc/self/task/${tid}/schedstat`, 'utf8').split(' ').map((ns) => Number(ns) / 1e9);
  return { onCpu, waiting };
}

/** Packets the interface sent and received so far. */
function linkPackets(name) {
  const [{ stats64 }] = JSON.parse(execFileSync('ip', ['-n', name, '-j', '-s', 'link', 'show', 'eth0'], { encoding: 'utf8' }));
  return stats64.rx.packets + stats64.tx.packets;
}

/** tcpdump as a user runs it (whole packets, its default buffer), once it says it is listening. */
function startTcpdump(name, file) {
  const child = spawn('ip', ['netns', 'exec', name, 'tcpdump', '-i', 'eth0', '-w', file, '-Z', 'root'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8');
  return new Promise((resolve, reject) => {
    child.stderr.on('data', (text) => {
      stderr += text;
      if (stderr.includes('listening on')) resolve(Object.assign(child, { stderrSoFar: () => stderr }));
    });
    child.once('exit', (code) => reject(new Error(`tcpdump exited (${code}): ${stderr}`)));
  });
}

/** Stops tcpdump as Ctrl-C does; the packets it wrote ("N packets captured"). */
async function stopTcpdump(child) {
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGINT');
  await exited;
  const captured = /(\d+) packets? captured/.exec(child.stderrSoFar());
  if (!captured) throw new Error(`tcpdump gave no count: ${child.stderrSoFar()}`);
  return Number(captured[1]);
}

/** Records whose time is before the one before them, in a pcap file of either resolution. */
function backwardSteps(file) {
  const data = readFileSync(file);
  const perSecond = data.readUInt32LE(0) === 0xa1b23c4d ? 1e9 : 1e6;
  let steps = 0;
  let last = 0;
  for (let at = 24; at + 16 <= data.length; at += 16 + data.readUInt32LE(at + 8)) {
    const time = data.readUInt32LE(at) * perSecond + data.readUInt32LE(at + 4);
    if (time < last) steps++;
    last = time;
  }
  return steps;
}

function report(rounds) {
  const of = (key) => median(rounds.map((round) => round[key]));
  const section = 'capture';
  const speed = `${of('gbits').toFixed(1)} Gbit/s iperf3 (${of('tcpdumpGbits').toFixed(1)} under tcpdump), ${Math.round(of('passed'))} packets a round, median of ${rounds.length}`;
  record(section, `packets written at full veth TCP speed (${speed})`, 100 * of('ours'), '%', 'tcpdump, same link, same rounds', 100 * of('tcpdump'));
  record(section, 'packets dropped by the kernel (median a round)', of('oursDropped'), 'packets');
  // A writer that ran little and waited long was starved by other work on the machine, not slow.
  record(section, 'writer thread on a CPU, share of the flood (median)', 100 * of('writerOnCpu'), '%');
  record(section, 'writer thread runnable but waiting for a CPU (median)', 100 * of('writerWaiting'), '%');
  record(section, 'times written backwards (median a round)', of('oursBackwards'), 'records', 'tcpdump, same round', of('tcpdumpBackwards'));
  for (const [i, round] of rounds.entries()) {
    console.error(`capture round ${i + 1}: ${round.gbits.toFixed(1)} Gbit/s (${round.tcpdumpGbits.toFixed(1)} under tcpdump), ${round.passed} passed, ours ${(100 * round.ours).toFixed(1)}% (${round.oursDropped} dropped, ${round.oursBackwards} backwards, writer ran ${(100 * round.writerOnCpu).toFixed(0)}% and waited ${(100 * round.writerWaiting).toFixed(0)}%), tcpdump ${(100 * round.tcpdump).toFixed(1)}% (${round.tcpdumpBackwards} backwards)`);
  }
}
