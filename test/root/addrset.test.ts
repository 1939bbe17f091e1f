import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NetNS } from '../../dist/index.js';
import { AddressSets } from '../../dist/addrset/index.js';
import { createTestNetwork, type TestNetwork } from '../../dist/testing.js';
import { expectTableOnlyIn, hostRuleset } from '../helpers/placement.js';
import { privileged } from '../helpers/privileges.js';

const addrset = fileURLToPath(new URL('../../dist/addrset/index.js', import.meta.url));

async function nft(ns: NetNS, input: string): Promise<string> {
  return (await ns.execFile('nft', ['-f', '-'], { input })).stdout;
}

function once<T>(sets: AddressSets, event: 'destroyed' | 'destroyFailed' | 'deleteDeferred'): Promise<T> {
  return new Promise((resolve) => sets.once(event, resolve as (arg: unknown) => void));
}

describe.skipIf(!privileged)('address sets on real nftables', () => {
  let network: TestNetwork<'a' | 'b' | 'c'>;
  let before: string;

  beforeAll(async () => {
    network = await createTestNetwork({ hosts: { a: {}, b: {}, c: {} } });
    before = await hostRuleset();
  });

  afterAll(async () => {
    await network?.delete();
    expect(await hostRuleset(), "the tests' host ruleset").toBe(before);
  });

  it('keeps sets in the target namespace only, in a table named like an nft keyword', async () => {
    const sets = await AddressSets.open({ netns: network.hosts.a, table: 'policy' });
    try {
      const refs = await sets.ensure('ns/frontend', ['10.1.0.7', 'fd00::7', '10.2.0.0/16']);
      const listing = (await network.hosts.a.execFile('nft', ['list', 'ruleset'])).stdout;
      expect(listing).toContain(`set ${refs.v4}`);
      expect(listing).toMatch(/10\.1\.0\.7/);
      expect((await network.hosts.b.execFile('nft', ['list', 'ruleset'])).stdout).toBe('');
      expect(await hostRuleset()).toBe(before);
      await expectTableOnlyIn(network.hosts.a, 'policy');
      expect(await sets.list()).toEqual([
        expect.objectContaining({ owner: 'ns/frontend', family: 4, name: refs.v4, elements: 2, state: 'live' }),
        expect.objectContaining({ owner: 'ns/frontend', family: 6, name: refs.v6, elements: 1, state: 'live' }),
      ]);
      await sets.replace('ns/frontend', ['10.1.0.9']);
      expect((await sets.inspect('ns/frontend')).v4.elements).toEqual(['10.1.0.9']);
    } finally {
      await sets.close();
    }
  });

  it('waits for a rule to stop referencing a deleted set, then destroys it', async () => {
    const sets = await AddressSets.open({ netns: network.hosts.a, table: 'filter', deleteDelayMs: 200, retryIntervalMs: 50, maxRetryIntervalMs: 100 });
    try {
      const refs = await sets.ensure('ns/referenced', ['10.5.0.1']);
      await nft(network.hosts.a, `add chain inet filter input { type filter hook input priority 0; }\nadd rule inet filter input ip saddr @${refs.v4} counter drop comment "user rule"\n`);
      const failed = once<{ error: { code: string } }>(sets, 'destroyFailed');
      await sets.delete('ns/referenced');
      await expectTableOnlyIn(network.hosts.a, 'filter');
      expect((await failed).error.code).toBe('EBUSY');
      expect((await sets.inspect('ns/referenced')).state).toBe('pending');
      const destroyed = once(sets, 'destroyed');
      await nft(network.hosts.a, 'flush chain inet filter input\n');
      await destroyed;
      const listing = (await network.hosts.a.execFile('nft', ['list', 'table', 'inet', 'filter'])).stdout;
      expect(listing).not.toContain(refs.v4);
      expect(listing).toContain('chain input'); // the user's chain is left alone
    } finally {
      await sets.close();
    }
  });

  it('collects a planted orphan with gc and leaves foreign sets alone', async () => {
    const planter = await AddressSets.open({ netns: network.hosts.a, table: 'gc_t' });
    await planter.ensure('ghost', ['10.6.0.1']);
    await planter.ensure('alive', ['10.6.0.2']);
    await planter.close(); // as if its process had gone
    await nft(network.hosts.a, 'add set inet gc_t allowlist { type ipv4_addr; }\nadd element inet gc_t allowlist { 192.0.2.1 }\n');
    const sets = await AddressSets.open({ netns: network.hosts.a, table: 'gc_t' });
    try {
      await expectTableOnlyIn(network.hosts.a, 'gc_t');
      const dry = await sets.gc({ live: ['alive'], dryRun: true });
      expect(dry.removed.map((e) => e.owner)).toEqual(['ghost', 'ghost']);
      expect((await sets.list()).filter((row) => row.owner === 'ghost')).toHaveLength(2);
      const report = await sets.gc({ live: ['alive'] });
      expect(report.removed.map((e) => e.owner)).toEqual(['ghost', 'ghost']);
      expect(report.kept.map((e) => [e.owner, e.reason])).toEqual([['alive', 'live'], ['alive', 'live']]);
      expect((await sets.list()).map((row) => row.owner)).toEqual(['alive', 'alive']);
      const listing = (await network.hosts.a.execFile('nft', ['list', 'set', 'inet', 'gc_t', 'allowlist'])).stdout;
      expect(listing).toContain('192.0.2.1');
    } finally {
      await sets.close();
    }
  });

  it('a process killed during the delay leaves sets a new process destroys no sooner than the deadline', async () => {
    const script = `
      const { AddressSets } = await import(${JSON.stringify(addrset)});
      const sets = await AddressSets.open({ netns: ${JSON.stringify(network.names.a)}, table: 'crash_t', deleteDelayMs: 1500 });
      const refs = await sets.ensure('crashy', ['10.7.0.1']);
      sets.once('deleteDeferred', ({ deadline }) => console.log(JSON.stringify({ deadline, refs })));
      await sets.delete('crashy');
      setInterval(() => {}, 1000);
    `;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    const { deadline, refs } = await new Promise<{ deadline: number; refs: { v4: string } }>((resolve) =>
      child.stdout.once('data', (line: Buffer) => resolve(JSON.parse(line.toString()))),
    );
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));
    const sets = await AddressSets.open({ netns: network.hosts.a, table: 'crash_t' });
    try {
      const pending = (await sets.list()).find((row) => row.name === refs.v4);
      expect(pending).toMatchObject({ owner: 'crashy', state: 'pending', elements: 0, deadline });
      await expectTableOnlyIn(network.hosts.a, 'crash_t');
      await once(sets, 'destroyed');
      expect(Date.now()).toBeGreaterThanOrEqual(deadline);
      expect(await sets.list()).toEqual([]);
    } finally {
      await sets.close();
    }
  });

  // nft reads a big interval set back on every change: roomy, for slow runs (e.g. under ASan)
  it('holds 100,000 addresses in one set', { timeout: 180_000 }, async () => {
    // its own namespace: every later nft call there would read the 100,000 elements back
    const sets = await AddressSets.open({ netns: network.hosts.c, table: 'big' });
    try {
      const addresses = Array.from({ length: 100_000 }, (_, i) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`);
      await sets.ensure('big', addresses);
      expect((await sets.list())[0]).toMatchObject({ owner: 'big', family: 4, elements: 100_000 });
      await expectTableOnlyIn(network.hosts.c, 'big');
      await sets.remove('big', addresses.slice(0, 10));
      await sets.add('big', ['172.16.0.1']);
      expect((await sets.list())[0]).toMatchObject({ elements: 99_991 });
    } finally {
      await sets.close();
    }
  });

  it('takes hostile owner names and addresses without letting them reach nft syntax', async () => {
    const owners = ['quote " }; flush ruleset; {', 'new\nline', 'unicode 名前 🚀', '$(id)', 'x'.repeat(300)];
    const sets = await AddressSets.open({ netns: network.hosts.b, table: 'hostile' });
    try {
      for (const [i, owner] of owners.entries()) await sets.ensure(owner, [`10.8.0.${i + 1}`]);
      const listed = await sets.list();
      // the long owner is recorded only as a hash; this process knows the name
      expect(new Set(listed.map((row) => row.owner))).toEqual(new Set(owners));
      await expect(sets.add(owners[0]!, ['10.8.0.9 }; flush ruleset'])).rejects.toMatchObject({ code: 'ERR_NETNS_ADDRSET_INVALID_ADDRESS' });
      const ruleset = (await network.hosts.b.execFile('nft', ['list', 'ruleset'])).stdout;
      expect(ruleset).not.toContain('flush');
      expect(ruleset).toContain('10.8.0.1');
      await expectTableOnlyIn(network.hosts.b, 'hostile');
      await sets.delete(owners[4]!);
      expect((await sets.list()).filter((row) => row.state === 'pending')).toHaveLength(2);
    } finally {
      await sets.close();
    }
  });
});
