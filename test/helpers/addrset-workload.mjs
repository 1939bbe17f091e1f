// A writer of address sets for the kill-and-restart test: runs a mixed
// workload on a table until it is killed, printing one JSON line when each
// request starts and when it is acknowledged, so the test knows exactly what
// was promised before the kill. usage: node addrset-workload.mjs DIST NETNS TABLE SEED
const [dist, netns, table, seedText] = process.argv.slice(2);
const { AddressSets } = await import(`${dist}/addrset/index.js`);

const OWNERS = Array.from({ length: 8 }, (_, i) => `owner-${i}`);
const DELETE_DELAY_MS = 1_500; // the test assumes the same
let seed = Number(seedText) >>> 0;
const random = () => ((seed = (seed * 1664525 + 1013904223) >>> 0) / 2 ** 32);
const content = () => Array.from({ length: 1 + Math.floor(random() * 40) }, () => `10.${Math.floor(random() * 4)}.${Math.floor(random() * 256)}.1`);
// Resolves once the line is in the pipe: a stdout pipe is non-blocking on Linux, and when the reader
// falls behind, a line waits in this process's memory, where a SIGKILL loses it. A request whose
// "start" was lost would change sets the test believes untouched.
const say = (line) => new Promise((resolve, reject) => process.stdout.write(`${JSON.stringify(line)}\n`, (error) => (error ? reject(error) : resolve())));

const sets = await AddressSets.open({ netns, table, deleteDelayMs: DELETE_DELAY_MS, retryIntervalMs: 50, lockTimeoutMs: 60_000 });
const ensured = new Set();
await say({ open: true });

async function request(owner, op, addresses) {
  const id = `${process.pid}-${random()}`;
  await say({ start: id, owner, op, addresses: addresses ? [...new Set(addresses)] : undefined, at: Date.now() });
  if (op === 'ensure') await sets.ensure(owner, addresses);
  else if (op === 'replace') await sets.replace(owner, addresses);
  else await sets.delete(owner);
  await say({ done: id, at: Date.now() });
}

// Each loop works on its own owners, one request at a time, several loops at once.
async function loop(owners) {
  for (;;) {
    const owner = owners[Math.floor(random() * owners.length)];
    const roll = random();
    if (!ensured.has(owner) || roll < 0.3) {
      await request(owner, 'ensure', content());
      ensured.add(owner);
    } else if (roll < 0.75) await request(owner, 'replace', content());
    else {
      await request(owner, 'delete');
      ensured.delete(owner);
    }
  }
}

await Promise.all([loop(OWNERS.slice(0, 3)), loop(OWNERS.slice(3, 6)), loop(OWNERS.slice(6))]);
