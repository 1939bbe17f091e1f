// withNetNS round trip and throughput, beside a C setns pair and `ip netns exec`.
import { execFileSync } from 'node:child_process';
import { NetNS, closePool, poolStats, withNetNS } from '../dist/index.js';
import { commandMedianUs, compileC, goNsDo, median, nowUs, record } from './lib.js';

const SEQUENTIAL_CALLS = 10_000;
const CONCURRENT_CALLS = 10_000;
const ROUNDS = 5;

export async function benchWithNetNS([name]) {
  const ns = NetNS.open(name);
  await Promise.all(Array.from({ length: 1000 }, () => withNetNS(ns, () => 0))); // start the pool

  const latencies = [];
  for (let i = 0; i < SEQUENTIAL_CALLS; i++) {
    const start = nowUs();
    await withNetNS(ns, () => 0);
    latencies.push(nowUs() - start);
  }

  const rates = [];
  for (let round = 0; round < ROUNDS; round++) {
    const start = nowUs();
    await Promise.all(Array.from({ length: CONCURRENT_CALLS }, () => withNetNS(ns, () => 0)));
    rates.push(CONCURRENT_CALLS / ((nowUs() - start) / 1e6));
  }

  const baseline = compileC('setns-baseline');
  const pairUs = median(
    Array.from({ length: ROUNDS }, () => Number(execFileSync(baseline, ['pair', ns.path, '100000'], { encoding: 'utf8' }))),
  );
  const ipExecUs = await commandMedianUs(['ip', 'netns', 'exec', name, 'true'], 30);

  const seq = median(latencies);
  const mean = latencies.reduce((a, b) => a + b, 0) / latencies.length;
  record('withNetNS', 'sequential round trip (mean)', mean, 'us', 'C setns pair', pairUs);
  record('withNetNS', 'sequential round trip (median)', seq, 'us', 'C setns pair', pairUs);
  record('withNetNS', 'sequential round trip (median)', seq, 'us', 'ip netns exec NAME true', ipExecUs);
  const go = goNsDo(ns.path);
  if (go) record('withNetNS', 'sequential round trip (median)', seq, 'us', 'Go ns.Do (containernetworking)', go.sequentialUs);
  else record('withNetNS', 'sequential round trip (median)', seq, 'us', 'Go ns.Do (quoted in the issue)', 35);
  const rate = median(rates);
  record('withNetNS', `${CONCURRENT_CALLS} concurrent calls (median)`, rate, 'calls/s', 'C setns pairs/s, one thread', 1e6 / pairUs);
  if (go) record('withNetNS', `${CONCURRENT_CALLS} concurrent calls (median)`, rate, 'calls/s', 'Go ns.Do, 8 goroutines', go.callsPerSec);
  else record('withNetNS', `${CONCURRENT_CALLS} concurrent calls (median)`, rate, 'calls/s', 'Go ns.Do, 8 goroutines (quoted)', 89_000);
  const stats = poolStats();
  ns.close();
  await closePool();
  return `pool: ${stats.workers} workers, ${stats.tasksRun} tasks, ${stats.threadsDiscarded} discarded`;
}
