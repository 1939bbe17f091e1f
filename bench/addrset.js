// Address sets beside raw `nft -f` with the same content, each in a fresh namespace.
import { execFileSync } from 'node:child_process';
import { AddressSets } from '../dist/addrset/index.js';
import { NetNS } from '../dist/index.js';
import { median, nowUs, record, scratchFile, scratchNamespaces, timeNftFile } from './lib.js';

const ROUNDS = 3;

function addresses(count, base = 10) {
  return Array.from({ length: count }, (_, i) => `${base}.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`);
}

async function withSets(name, use) {
  const sets = await AddressSets.open({ netns: name, table: 'bench' });
  try {
    return await use(sets);
  } finally {
    await sets.close();
  }
}

function rawFill(name, ips) {
  const file = scratchFile(`fill-${ips.length}.nft`, `add table inet raw\nadd set inet raw s { type ipv4_addr; flags interval; }\nadd element inet raw s { ${ips.join(', ')} }\n`);
  return timeNftFile(name, file);
}

async function benchFill(count) {
  const ips = addresses(count);
  const ours = [];
  const raw = [];
  for (let round = 0; round < ROUNDS; round++) {
    const [a, b] = scratchNamespaces(2);
    await withSets(a, async (sets) => {
      const start = nowUs();
      await sets.ensure('bench/fill', ips);
      ours.push(nowUs() - start);
    });
    raw.push(rawFill(b, ips));
  }
  record('addrset', `fill one set with ${count.toLocaleString('en')} addresses`, median(ours) / 1000, 'ms', 'nft -f, same set and content', median(raw) / 1000);
}

async function benchSingleAdd() {
  const [a, b] = scratchNamespaces(2);
  const times = [];
  await withSets(a, async (sets) => {
    await sets.ensure('bench/one', ['10.0.0.1']);
    for (let i = 0; i < 30; i++) {
      const start = nowUs();
      await sets.add('bench/one', [`10.1.${i >> 8}.${i & 255}`]);
      times.push(nowUs() - start);
    }
  });
  rawFill(b, ['10.0.0.1']);
  const raw = Array.from({ length: 30 }, (_, i) => timeNftFile(b, scratchFile(`one-${i}.nft`, `add element inet raw s { 10.1.0.${i} }\n`)));
  record('addrset', 'one add of one address (median)', median(times) / 1000, 'ms', 'ip netns exec NS nft -f (one element)', median(raw) / 1000);
}

async function benchConcurrentAdds() {
  const [a, b] = scratchNamespaces(2);
  const owners = Array.from({ length: 100 }, (_, i) => `bench/owner-${i}`);
  const { elapsed, transactions } = await withSets(a, async (sets) => {
    await Promise.all(owners.map((owner) => sets.ensure(owner)));
    const before = sets.stats().transactions;
    const start = nowUs();
    await Promise.all(owners.flatMap((owner, i) => Array.from({ length: 10 }, (_, j) => sets.add(owner, [`10.${i}.${j}.1`]))));
    return { elapsed: nowUs() - start, transactions: sets.stats().transactions - before };
  });
  const lines = ['add table inet raw'];
  owners.forEach((_, i) => lines.push(`add set inet raw s${i} { type ipv4_addr; flags interval; }`));
  timeNftFile(b, scratchFile('sets.nft', `${lines.join('\n')}\n`));
  const adds = owners.flatMap((_, i) => Array.from({ length: 10 }, (_, j) => `add element inet raw s${i} { 10.${i}.${j}.1 }`));
  const raw = timeNftFile(b, scratchFile('adds.nft', `${adds.join('\n')}\n`));
  record('addrset', `1,000 concurrent adds on 100 owners (${transactions} nft transaction${transactions === 1 ? '' : 's'})`, elapsed / 1000, 'ms', 'nft -f, the 1,000 adds in one file', raw / 1000);
}

async function benchGc() {
  const [a, b] = scratchNamespaces(2);
  const owners = Array.from({ length: 500 }, (_, i) => `bench/gc-${i}`); // 500 owners = 1,000 sets
  await withSets(a, (sets) => Promise.all(owners.map((owner, i) => sets.ensure(owner, [`10.${i >> 8}.${i & 255}.1`]))));
  const { elapsed, removed } = await withSets(a, async (sets) => {
    const start = nowUs();
    const report = await sets.gc({ live: [] });
    return { elapsed: nowUs() - start, removed: report.removed.length };
  });
  const make = ['add table inet raw', 'add set inet raw owners { type ifname; }'];
  const drop = [];
  for (let i = 0; i < 1000; i++) {
    make.push(`add set inet raw s${i} { type ipv4_addr; flags interval; }`, `add element inet raw owners { "s${i}" comment "x" }`);
    drop.push(`delete set inet raw s${i}`, `delete element inet raw owners { "s${i}" }`);
  }
  timeNftFile(b, scratchFile('gc-make.nft', `${make.join('\n')}\n`));
  const raw = timeNftFile(b, scratchFile('gc-drop.nft', `${drop.join('\n')}\n`));
  record('addrset', `gc over ${removed.toLocaleString('en')} owned sets`, elapsed / 1000, 'ms', 'nft -f deleting them in one file', raw / 1000);
}

// Shrinking a big interval set: nft 1.0.x deletes each element at a cost of the
// set's size, so the library flushes and re-adds past a few deletions.
const BIG = 16_000;
const NAIVE_CAP_MS = 20_000;

/** Like timeNftFile, but gives up after capMs; undefined when it did. */
function timeNftFileCapped(name, path, capMs) {
  const start = nowUs();
  try {
    execFileSync('ip', ['netns', 'exec', name, 'nft', '-f', path], { timeout: capMs, killSignal: 'SIGKILL', stdio: 'ignore' });
  } catch (error) {
    if (error.signal === 'SIGKILL' || error.code === 'ETIMEDOUT') return undefined;
    throw error;
  }
  return nowUs() - start;
}

/** A set of BIG addresses owned by the library in namespace `name`, then `use` on it. */
function withBigSet(name, ips, use) {
  return withSets(name, async (sets) => {
    await sets.ensure('bench/big', ips);
    return use(sets);
  });
}

async function benchReplace() {
  const before = addresses(BIG);
  const half = BIG / 2;
  const stale = before.slice(0, half);
  const fresh = addresses(half, 12);
  const after = [...before.slice(half), ...fresh];
  const ours = [];
  const flushAdd = [];
  const naive = [];
  let timedOut = 0;
  const flushFile = scratchFile('replace-flush.nft', `flush set inet raw s\nadd element inet raw s { ${after.join(', ')} }\n`);
  const naiveFile = scratchFile('replace-naive.nft', `delete element inet raw s { ${stale.join(', ')} }\nadd element inet raw s { ${fresh.join(', ')} }\n`);
  for (let round = 0; round < ROUNDS; round++) {
    const [a, b, c] = scratchNamespaces(3);
    await withBigSet(a, before, async (sets) => {
      const start = nowUs();
      await sets.replace('bench/big', after);
      ours.push(nowUs() - start);
    });
    rawFill(b, before);
    flushAdd.push(timeNftFile(b, flushFile));
    // the median is known to be past the cap once most rounds have hit it
    if (timedOut * 2 <= ROUNDS) {
      rawFill(c, before);
      const time = timeNftFileCapped(c, naiveFile, NAIVE_CAP_MS);
      if (time === undefined) timedOut++;
      else naive.push(time);
    }
  }
  const metric = `replace ${BIG.toLocaleString('en')} addresses by ${BIG.toLocaleString('en')} (${half.toLocaleString('en')} new)`;
  const oursMs = median(ours) / 1000;
  record('addrset', metric, oursMs, 'ms', `nft -f, flush set + add the ${BIG.toLocaleString('en')}`, median(flushAdd) / 1000);
  const naiveName = `nft -f, delete ${half.toLocaleString('en')} stale + add ${half.toLocaleString('en')} new`;
  if (timedOut * 2 > ROUNDS) {
    const bound = oursMs / NAIVE_CAP_MS;
    record('addrset', metric, oursMs, 'ms', `${naiveName}: >${NAIVE_CAP_MS / 1000} s (timed out ${timedOut}/${timedOut + naive.length}; ratio < ${bound >= 0.01 ? bound.toFixed(2) : `1/${(1 / bound).toFixed(0)}`}x)`);
  } else {
    // a minority of timeouts sit above the median: count them as the cap
    const times = [...naive, ...Array(timedOut).fill(NAIVE_CAP_MS * 1000)];
    record('addrset', metric, oursMs, 'ms', naiveName, median(times) / 1000);
  }
}

async function benchRemove(count) {
  const ips = addresses(BIG);
  const step = Math.floor(BIG / count);
  const gone = Array.from({ length: count }, (_, i) => ips[i * step + (step >> 1)]);
  const file = scratchFile(`remove-${count}.nft`, `delete element inet raw s { ${gone.join(', ')} }\n`);
  const ours = [];
  const raw = [];
  for (let round = 0; round < ROUNDS; round++) {
    const [a, b] = scratchNamespaces(2);
    await withBigSet(a, ips, async (sets) => {
      const start = nowUs();
      await sets.remove('bench/big', gone);
      ours.push(nowUs() - start);
    });
    rawFill(b, ips);
    raw.push(timeNftFile(b, file));
  }
  record('addrset', `remove ${count} addresses from ${BIG.toLocaleString('en')}`, median(ours) / 1000, 'ms', `nft -f, delete element of the ${count}`, median(raw) / 1000);
}

export async function benchAddrset() {
  // warm up the code paths once, so the figures are steady state
  const [warm] = scratchNamespaces(1);
  await withSets(warm, (sets) => sets.ensure('bench/warm-up', addresses(20_000, 11)));
  await benchFill(10_000);
  await benchFill(100_000);
  await benchSingleAdd();
  await benchConcurrentAdds();
  await benchGc();
  await benchReplace();
  await benchRemove(100);
  await benchRemove(8);
  NetNS.current().close();
}
