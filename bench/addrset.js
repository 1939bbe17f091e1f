// Address sets beside raw `nft -f` with the same content, each in a fresh namespace.
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

export async function benchAddrset() {
  // warm up the code paths once, so the figures are steady state
  const [warm] = scratchNamespaces(1);
  await withSets(warm, (sets) => sets.ensure('bench/warm-up', addresses(20_000, 11)));
  await benchFill(10_000);
  await benchFill(100_000);
  await benchSingleAdd();
  await benchConcurrentAdds();
  await benchGc();
  NetNS.current().close();
}
