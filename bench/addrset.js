// Address sets beside raw `nft -f` with the same content, each in a fresh
// namespace; the netlink backend also beside the nft backend, `nft -j list`
// and Go's google/nftables (bench/go-nftables), all measured in the same run.
// Where two are compared over rounds, the rounds alternate which goes first
// (the VM is noisy: a slow minute must not land on one side only).
import { execFileSync } from 'node:child_process';
import { AddressSets } from '../dist/addrset/index.js';
import { NetlinkBackend } from '../dist/addrset/netlink-backend.js';
import { NftBackend } from '../dist/addrset/nft-backend.js';
import { NetNS } from '../dist/index.js';
import { buildGoProgram, median, nowUs, record, scratchFile, scratchNamespaces, timeNftFile } from './lib.js';

const ROUNDS = 3;
// gc rounds are short (~0.1 s each with the baseline): more of them steady the median on a noisy VM.
const GC_ROUNDS = 7;

const BACKENDS = {
  nft: (ns) => NftBackend.create(ns, { family: 'inet', table: 'bench' }),
  netlink: (ns) => NetlinkBackend.create(ns, { family: 'inet', table: 'bench' }),
};

/** Runs the steps of one round, starting at a different one each round. */
async function alternate(round, steps) {
  for (let i = 0; i < steps.length; i++) await steps[(i + round) % steps.length]();
}

function addresses(count, base = 10) {
  return Array.from({ length: count }, (_, i) => `${base}.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`);
}

/** `use` on AddressSets over the given backend (kind: 'nft' or 'netlink') in namespace `name`. */
async function withSets(name, use, kind = 'netlink') {
  const ns = NetNS.open(name);
  const backend = await BACKENDS[kind](ns);
  const sets = await AddressSets.open({ netns: ns, table: 'bench', backend });
  try {
    return await use(sets);
  } finally {
    await sets.close();
    if (kind === 'netlink') backend.close();
    ns.close();
  }
}

const GO_NFTABLES = ['go-nftables', 'google/nftables', 'golang-go golang-github-google-nftables-dev'];

/** google/nftables filling one set with `count` addresses in namespace `name`: microseconds, or { reason }. */
function goFill(name, count) {
  const { binary, reason } = buildGoProgram(...GO_NFTABLES);
  if (!binary) return { reason };
  try {
    return JSON.parse(execFileSync(binary, ['-ns', `/run/netns/${name}`, '-n', `${count}`], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })).fillUs;
  } catch (error) {
    return { reason: `go-nftables failed: ${String(error.stderr ?? '').trim() || error.message}` };
  }
}

function rawFill(name, ips) {
  const file = scratchFile(`fill-${ips.length}.nft`, `add table inet raw\nadd set inet raw s { type ipv4_addr; flags interval; }\nadd element inet raw s { ${ips.join(', ')} }\n`);
  return timeNftFile(name, file);
}

async function benchFill(count) {
  const ips = addresses(count);
  const times = { netlink: [], nft: [], raw: [], go: [] };
  let goReason;
  for (let round = 0; round < ROUNDS; round++) {
    const [a, b, c, d] = scratchNamespaces(4);
    const fill = (kind, name) => async () =>
      withSets(name, async (sets) => {
        const start = nowUs();
        await sets.ensure('bench/fill', ips);
        times[kind].push(nowUs() - start);
      }, kind);
    const steps = [fill('netlink', a), fill('nft', b), async () => times.raw.push(rawFill(c, ips))];
    if (count === 100_000) {
      steps.push(async () => {
        const go = goFill(d, count);
        if (typeof go === 'number') times.go.push(go);
        else goReason = go.reason;
      });
    }
    await alternate(round, steps);
  }
  const metric = `fill one set with ${count.toLocaleString('en')} addresses`;
  const netlink = median(times.netlink) / 1000;
  record('addrset', `${metric} (netlink backend)`, netlink, 'ms', 'nft -f, same set and content', median(times.raw) / 1000);
  if (count === 100_000) {
    if (goReason) record('addrset', `${metric} (netlink backend)`, netlink, 'ms', `Go google/nftables: not measured, ${goReason}`);
    else record('addrset', `${metric} (netlink backend)`, netlink, 'ms', 'Go google/nftables 0.1.0, one batch', median(times.go) / 1000);
  }
  record('addrset', `${metric} (nft backend)`, median(times.nft) / 1000, 'ms', 'nft -f, same set and content', median(times.raw) / 1000);
}

async function benchSingleAdd() {
  const [a, b, c] = scratchNamespaces(3);
  const addTimes = (kind, name, samples) =>
    withSets(name, async (sets) => {
      await sets.ensure('bench/one', ['10.0.0.1']);
      const times = [];
      for (let i = 0; i < samples; i++) {
        const start = nowUs();
        await sets.add('bench/one', [`10.1.${i >> 8}.${i & 255}`]);
        times.push(nowUs() - start);
      }
      return times;
    }, kind);
  // The first adds of a process warm up its code paths: not counted.
  const netlink = median((await addTimes('netlink', a, 1030)).slice(30)) / 1000;
  const nft = median(await addTimes('nft', b, 30)) / 1000;
  rawFill(c, ['10.0.0.1']);
  const raw = median(Array.from({ length: 30 }, (_, i) => timeNftFile(c, scratchFile(`one-${i}.nft`, `add element inet raw s { 10.1.0.${i} }\n`)))) / 1000;
  record('addrset', 'one add of one address, median (netlink backend)', netlink, 'ms', 'ip netns exec NS nft -f (one element)', raw);
  record('addrset', 'one add of one address, median (netlink backend)', netlink, 'ms', 'the nft backend, same add', nft);
  record('addrset', 'one add of one address, median (nft backend)', nft, 'ms', 'ip netns exec NS nft -f (one element)', raw);
}

async function benchRead(count) {
  const [a] = scratchNamespaces(1);
  const ips = addresses(count);
  const times = { netlink: [], nft: [], list: [] };
  const { v4 } = await withSets(a, (sets) => sets.ensure('bench/read', ips), 'netlink');
  for (let round = 0; round < ROUNDS; round++) {
    const inspect = (kind) => async () =>
      withSets(a, async (sets) => {
        const start = nowUs();
        const { v4: read } = await sets.inspect('bench/read');
        times[kind].push(nowUs() - start);
        if (read.elements.length !== count) throw new Error(`bench: read ${read.elements.length} elements, not ${count}`);
      }, kind);
    const list = async () => {
      const start = nowUs();
      execFileSync('ip', ['netns', 'exec', a, 'nft', '-j', 'list', 'set', 'inet', 'bench', v4], { maxBuffer: 1 << 30, stdio: ['ignore', 'pipe', 'inherit'] });
      times.list.push(nowUs() - start);
    };
    await alternate(round, [inspect('netlink'), list, inspect('nft')]);
  }
  const metric = `read a set of ${count.toLocaleString('en')} addresses (inspect)`;
  record('addrset', `${metric} (netlink backend)`, median(times.netlink) / 1000, 'ms', 'ip netns exec NS nft -j list set', median(times.list) / 1000);
  record('addrset', `${metric} (netlink backend)`, median(times.netlink) / 1000, 'ms', 'the nft backend, same inspect', median(times.nft) / 1000);
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
  record('addrset', `1,000 concurrent adds on 100 owners (${transactions} transaction${transactions === 1 ? '' : 's'}, netlink backend)`, elapsed / 1000, 'ms', 'nft -f, the 1,000 adds in one file', raw / 1000);
}

async function benchGc() {
  const owners = Array.from({ length: 500 }, (_, i) => `bench/gc-${i}`); // 500 owners = 1,000 sets
  const gc = async (kind) => {
    const [name] = scratchNamespaces(1);
    await withSets(name, (sets) => Promise.all(owners.map((owner, i) => sets.ensure(owner, [`10.${i >> 8}.${i & 255}.1`]))), kind);
    return withSets(name, async (sets) => {
      const start = nowUs();
      const report = await sets.gc({ live: [] });
      return { elapsed: nowUs() - start, removed: report.removed.length };
    }, kind);
  };
  const raw = () => {
    const [name] = scratchNamespaces(1);
    const make = ['add table inet raw', 'add set inet raw owners { type ifname; }'];
    const drop = [];
    for (let i = 0; i < 1000; i++) {
      make.push(`add set inet raw s${i} { type ipv4_addr; flags interval; }`, `add element inet raw owners { "s${i}" comment "x" }`);
      drop.push(`delete set inet raw s${i}`, `delete element inet raw owners { "s${i}" }`);
    }
    timeNftFile(name, scratchFile('gc-make.nft', `${make.join('\n')}\n`));
    return timeNftFile(name, scratchFile('gc-drop.nft', `${drop.join('\n')}\n`));
  };
  const times = { netlink: [], nft: [], raw: [] };
  let removed = 0;
  for (let round = 0; round < GC_ROUNDS; round++) {
    await alternate(round, [
      async () => {
        const result = await gc('netlink');
        times.netlink.push(result.elapsed);
        removed = result.removed;
      },
      async () => times.nft.push((await gc('nft')).elapsed),
      async () => times.raw.push(raw()),
    ]);
  }
  const metric = `gc over ${removed.toLocaleString('en')} owned sets`;
  record('addrset', `${metric} (netlink backend)`, median(times.netlink) / 1000, 'ms', 'nft -f deleting them in one file', median(times.raw) / 1000);
  record('addrset', `${metric} (nft backend)`, median(times.nft) / 1000, 'ms', 'nft -f deleting them in one file', median(times.raw) / 1000);
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
  const metric = `replace ${BIG.toLocaleString('en')} addresses by ${BIG.toLocaleString('en')} (${half.toLocaleString('en')} new; netlink backend)`;
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
  record('addrset', `remove ${count} addresses from ${BIG.toLocaleString('en')} (netlink backend)`, median(ours) / 1000, 'ms', `nft -f, delete element of the ${count}`, median(raw) / 1000);
}

export async function benchAddrset() {
  // warm up the code paths once, so the figures are steady state
  for (const kind of ['nft', 'netlink']) {
    const [warm] = scratchNamespaces(1);
    await withSets(warm, async (sets) => {
      await sets.ensure('bench/warm-up', addresses(20_000, 11));
      await Promise.all(Array.from({ length: 50 }, (_, i) => sets.ensure(`bench/warm-up-${i}`, [`10.${i}.0.1`])));
      await sets.inspect('bench/warm-up');
    }, kind);
    await withSets(warm, (sets) => sets.gc({ live: [] }), kind);
  }
  await benchFill(10_000);
  await benchFill(100_000);
  await benchSingleAdd();
  await benchRead(100_000);
  await benchConcurrentAdds();
  await benchGc();
  await benchReplace();
  await benchRemove(100);
  await benchRemove(8);
  NetNS.current().close();
}
