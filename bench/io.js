// NetNS I/O: socket creation and spawn-to-exit, beside C, ip netns exec and nsenter.
import { execFileSync } from 'node:child_process';
import { closeSync } from 'node:fs';
import { NetNS } from '../dist/index.js';
import { commandMedianUs, compileC, goNsDo, median, nowUs, record } from './lib.js';

const SOCKETS = 5_000;
const SPAWNS = 30;

async function spawnMedianUs(ns) {
  const times = [];
  for (let i = 0; i < SPAWNS; i++) {
    const start = nowUs();
    await new Promise((resolve, reject) => {
      const child = ns.spawn('true', [], { stdio: 'ignore' });
      child.on('error', reject);
      child.on('exit', resolve);
    });
    times.push(nowUs() - start);
  }
  return median(times);
}

export async function benchIo([name]) {
  const ns = NetNS.open(name);
  closeSync(await ns.socket('inet', 'dgram')); // start the I/O threads

  const latencies = [];
  for (let i = 0; i < SOCKETS; i++) {
    const start = nowUs();
    const fd = await ns.socket('inet', 'dgram');
    latencies.push(nowUs() - start);
    closeSync(fd);
  }
  const baseline = compileC('setns-baseline');
  const cUs = median(Array.from({ length: 5 }, () => Number(execFileSync(baseline, ['socket', ns.path, '100000'], { encoding: 'utf8' }))));
  const socketUs = median(latencies);
  record('NetNS I/O', 'ns.socket() latency (median)', socketUs, 'us', 'C setns+socket+setns', cUs);
  const go = goNsDo(ns.path);
  record('NetNS I/O', 'ns.socket() latency (median)', socketUs, 'us', go ? 'Go ns.Do + socket (containernetworking)' : 'Go ns.Do + socket (quoted)', go ? go.socketUs : 42);

  const spawnUs = await spawnMedianUs(ns);
  const ipExec = await commandMedianUs(['ip', 'netns', 'exec', name, 'true'], SPAWNS);
  const nsenter = await commandMedianUs(['nsenter', `--net=${ns.path}`, 'true'], SPAWNS);
  const plain = await commandMedianUs(['true'], SPAWNS);
  record('NetNS I/O', "ns.spawn('true') to exit (median)", spawnUs / 1000, 'ms', 'nsenter --net=PATH true', nsenter / 1000);
  record('NetNS I/O', "ns.spawn('true') to exit (median)", spawnUs / 1000, 'ms', 'ip netns exec NAME true', ipExec / 1000);
  record('NetNS I/O', "ns.spawn('true') to exit (median)", spawnUs / 1000, 'ms', "child_process.spawn('true'), no namespace", plain / 1000);
  ns.close();
}
