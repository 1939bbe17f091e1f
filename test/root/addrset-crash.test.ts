// Randomized kill-and-restart: a writer running a mixed workload is killed
// with SIGKILL at random moments, 22 times, and a new process opens the table
// at once each time. After every restart nothing an owner was promised may be
// lost; at the end a gc leaves no orphan, and nothing outside our sets changed.
import { spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AddressSets } from '../../dist/addrset/index.js';
import { createTestNetwork, type TestNetwork } from '../../dist/testing.js';
import { expectTableOnlyIn, hostRuleset } from '../helpers/placement.js';
import { privileged } from '../helpers/privileges.js';

const KILLS = 22;
const DELAY = 1_500; // the workload's deleteDelayMs
const TABLE = 'crash';
const workload = fileURLToPath(new URL('../helpers/addrset-workload.mjs', import.meta.url));
const dist = fileURLToPath(new URL('../../dist', import.meta.url));
const OWNERS = Array.from({ length: 8 }, (_, i) => `owner-${i}`);

interface Promise_ {
  op: 'ensure' | 'replace' | 'delete';
  addresses?: string[];
  at: number;
}

interface Expected {
  live: boolean;
  content: string[];
  /** When the acknowledged delete started: its deadline is no sooner than this + DELAY. */
  deletedAt?: number;
  inFlight?: Promise_;
}

const sorted = (list: string[]) => [...list].sort();

/** Runs one workload writer until SIGKILL, a random time after it opened; applies what it acknowledged. */
async function runAndKill(ns: string, seed: number, expected: Map<string, Expected>): Promise<void> {
  const child = spawn(process.execPath, [workload, dist, ns, TABLE, String(seed)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const started = new Map<string, { owner: string } & Promise_>();
  let opened!: () => void;
  const open = new Promise<void>((resolve) => (opened = resolve));
  let buffer = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    buffer += chunk;
    const lines = buffer.split('\n');
    buffer = lines.pop()!;
    for (const line of lines) {
      const event = JSON.parse(line) as { open?: true; start?: string; done?: string; owner: string } & Promise_;
      if (event.open) opened();
      else if (event.start) {
        started.set(event.start, event);
        expected.get(event.owner)!.inFlight = event;
      } else if (event.done) {
        const request = started.get(event.done)!;
        const owner = expected.get(request.owner)!;
        owner.inFlight = undefined;
        owner.live = request.op !== 'delete';
        owner.content = request.op === 'delete' ? [] : sorted(request.addresses!);
        owner.deletedAt = request.op === 'delete' ? request.at : undefined;
      }
    }
  });
  // 'close', not 'exit': every line the writer printed before it died must be read first.
  const exited = new Promise((resolve) => child.once('close', resolve));
  await Promise.race([open, exited]);
  // Every other round this reader falls behind (as under a loaded machine): the pipe fills, and the
  // writer's lines wait in its own memory, where a SIGKILL loses them unless it waits for each to be written.
  const slowReader = seed % 2 === 0;
  if (slowReader) child.stdout.pause();
  await sleep(30 + Math.floor(Math.random() * 400)); // the kill lands anywhere in the workload
  child.kill('SIGKILL');
  child.stdout.resume();
  await exited;
}

/** What a restarted process finds must match every promise; uncertain owners are then made certain. */
async function checkAfterRestart(ns: string, expected: Map<string, Expected>, round: number): Promise<void> {
  const sets = await AddressSets.open({ netns: ns, table: TABLE, lockTimeoutMs: 60_000 });
  try {
    for (const [owner, want] of expected) {
      const found = await sets.inspect(owner);
      const where = `round ${round}, ${owner}`;
      const elements = sorted([...found.v4.elements, ...found.v6.elements]);
      if (want.inFlight) {
        const after = want.inFlight.op === 'delete' ? [] : sorted(want.inFlight.addresses!);
        if (want.live) {
          expect(found.state, where).not.toBe('absent'); // whatever landed, a live owner keeps its sets
          expect([JSON.stringify(want.content), JSON.stringify(after)], where).toContain(JSON.stringify(elements));
        }
        const certain = await sets.ensure(owner, want.live ? want.content : []);
        expect(certain.v4, where).toBe(found.v4.name);
        Object.assign(want, { live: true, content: want.live ? want.content : [], deletedAt: undefined, inFlight: undefined });
      } else if (want.live) {
        expect(found.state, where).not.toBe('absent');
        expect(elements, where).toEqual(want.content);
      } else if (want.deletedAt !== undefined && Date.now() < want.deletedAt + DELAY) {
        expect(found.state, `${where} destroyed before its deadline`).toBe('pending');
        expect(elements, where).toEqual([]);
      }
    }
  } finally {
    await sets.close();
  }
}

describe.skipIf(!privileged)('address sets survive a writer killed at random moments', () => {
  let network: TestNetwork<'a'>;
  let hostBefore: string;

  beforeAll(async () => {
    network = await createTestNetwork({ hosts: { a: {} } });
    hostBefore = await hostRuleset();
    const setup = 'add table inet bystander\nadd set inet bystander keep { type ipv4_addr; }\nadd element inet bystander keep { 192.0.2.9 }\n' +
      `add table inet ${TABLE}\nadd set inet ${TABLE} allowlist { type ipv4_addr; }\nadd element inet ${TABLE} allowlist { 192.0.2.10 }\n`;
    await network.hosts.a.execFile('nft', ['-f', '-'], { input: setup });
  });

  afterAll(async () => {
    await network?.delete();
    expect(await hostRuleset(), "the tests' host ruleset").toBe(hostBefore);
  });

  it(`keeps every promise across ${KILLS} SIGKILLs, then gc leaves no orphan`, { timeout: 180_000 }, async () => {
    const ns = network.hosts.a.path;
    const bystanders = async () =>
      Promise.all([
        network.hosts.a.execFile('nft', ['list', 'table', 'inet', 'bystander']).then((r) => r.stdout),
        network.hosts.a.execFile('nft', ['list', 'set', 'inet', TABLE, 'allowlist']).then((r) => r.stdout),
      ]);
    const before = await bystanders();
    const expected = new Map<string, Expected>(OWNERS.map((owner) => [owner, { live: false, content: [] }]));
    for (let round = 0; round < KILLS; round++) {
      await runAndKill(ns, round + 1, expected);
      await checkAfterRestart(ns, expected, round);
    }
    const sets = await AddressSets.open({ netns: ns, table: TABLE, lockTimeoutMs: 60_000 });
    try {
      const live = OWNERS.filter((owner) => expected.get(owner)!.live);
      for (const owner of live) await sets.ensure(owner); // the agent claims what it holds
      await sets.gc({ live });
      const rows = await sets.list();
      expect(rows.filter((row) => row.state === 'orphan')).toEqual([]);
      await expectTableOnlyIn(network.hosts.a, TABLE);
      await expectTableOnlyIn(network.hosts.a, 'bystander');
      for (const owner of live) {
        const found = await sets.inspect(owner);
        expect(sorted([...found.v4.elements, ...found.v6.elements]), owner).toEqual(expected.get(owner)!.content);
      }
    } finally {
      await sets.close();
    }
    expect(await bystanders()).toEqual(before);
  });
});
