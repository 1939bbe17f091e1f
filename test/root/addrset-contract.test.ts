// One address-set contract, run against every backend: MemoryBackend (the
// model tests' kernel), the nft exec backend and the netlink backend (the
// default), each through AddressSets as a user opens it. Time is a
// ManualClock, so deadlines and retries are stepped, never waited for. A
// "rule" referencing a set is MemoryBackend.reference() in memory, and a real
// nf_tables rule (made over netlink) on the kernel.
import { afterEach, describe, expect, it } from 'vitest';
import { NetNS } from '../../dist/index.js';
import { AddressSets, type AddressSetsOptions } from '../../dist/addrset/index.js';
import { flushChain, referenceSet } from '../../dist/demo/set-rule.js';
import { ManualClock, MemoryBackend } from '../../dist/testing.js';
import { privileged } from '../helpers/privileges.js';
import { scratchNamespaces } from '../helpers/scratch-namespaces.js';

const namespaces = scratchNamespaces('ascon');
const TABLE = 'policy';
const DELAY = 20_000;
const RETRY = 1_000;
// Quotes, spaces, a semicolon and braces: an owner that would break nft syntax if it reached it.
const OWNER = 'ns/"quoted" {front}; end';

interface Kernel {
  /** What AddressSets.open gets beside table, clock and delays: where, and which backend. */
  target: Pick<AddressSetsOptions, 'netns' | 'backend'>;
  reference(set: string): Promise<void>;
  unreference(set: string): Promise<void>;
}

const KERNELS: [string, () => Promise<Kernel>][] = [
  [
    'memory',
    async () => {
      const backend = new MemoryBackend();
      return {
        target: { netns: NetNS.current(), backend },
        reference: async (set) => backend.reference(set),
        unreference: async (set) => backend.unreference(set),
      };
    },
  ],
  ...(['nft', 'netlink'] as const).map((kind): [string, () => Promise<Kernel>] => [
    kind,
    async () => {
      const ns = await namespaces.create();
      return {
        // netlink is the default: it is opened without naming a backend.
        target: kind === 'nft' ? { netns: ns, backend: 'nft' } : { netns: ns },
        reference: (set) => referenceSet(ns, { table: TABLE, chain: 'uses', set }),
        unreference: () => flushChain(ns, { table: TABLE, chain: 'uses' }),
      };
    },
  ]),
];

afterEach(() => namespaces.removeAll());

describe.skipIf(!privileged)('the address-set contract', () => {
  for (const [kind, makeKernel] of KERNELS) {
    describe(`${kind} backend`, () => {
      async function open(kernel: Kernel, clock: ManualClock) {
        const sets = await AddressSets.open({ ...kernel.target, table: TABLE, clock, deleteDelayMs: DELAY, retryIntervalMs: RETRY, maxRetryIntervalMs: 4 * RETRY });
        return { sets, advance: (ms: number) => clock.advance(ms, () => sets.settled()) };
      }

      it('keeps content in canonical text, refuses overlap and bad addresses by code, replaces atomically', async () => {
        const kernel = await makeKernel();
        const { sets } = await open(kernel, new ManualClock());
        try {
          const refs = await sets.ensure(OWNER, ['10.1.0.7', 'FD00:0::7', '10.2.0.0/16', '10.3.0.0/24']);
          expect(await sets.inspect(OWNER)).toMatchObject({
            state: 'live',
            v4: { name: refs.v4, elements: ['10.1.0.7', '10.2.0.0/16', '10.3.0.0/24'] },
            v6: { name: refs.v6, elements: ['fd00::7'] },
          });
          await expect(sets.add(OWNER, ['10.2.3.0/24'])).rejects.toMatchObject({ code: 'ERR_NETNS_ADDRSET_OVERLAP' });
          await expect(sets.add(OWNER, ['10.9.9.9', 'not-an-address'])).rejects.toMatchObject({ code: 'ERR_NETNS_ADDRSET_INVALID_ADDRESS' });
          await sets.add(OWNER, ['10.4.0.1']);
          await sets.remove(OWNER, ['10.1.0.7']);
          expect((await sets.inspect(OWNER)).v4.elements).toEqual(['10.2.0.0/16', '10.3.0.0/24', '10.4.0.1']);
          await sets.replace(OWNER, ['10.1.0.9', 'fd00::9']);
          expect(await sets.inspect(OWNER)).toMatchObject({ v4: { elements: ['10.1.0.9'] }, v6: { elements: ['fd00::9'] } });
          expect((await sets.list()).map((row) => [row.name, row.owner, row.state, row.elements])).toEqual([
            [refs.v4, OWNER, 'live', 1],
            [refs.v6, OWNER, 'live', 1],
          ]);
        } finally {
          await sets.close();
        }
      });

      it('empties at delete, cancels on re-ensure inside the delay, destroys at the deadline only', async () => {
        const kernel = await makeKernel();
        const clock = new ManualClock();
        const { sets, advance } = await open(kernel, clock);
        try {
          const refs = await sets.ensure('ns/a', ['10.1.0.1']);
          await sets.delete('ns/a');
          expect(await sets.inspect('ns/a')).toMatchObject({ state: 'pending', deadline: clock.now() + DELAY, v4: { elements: [] } });
          await advance(DELAY / 2);
          const cancelled = new Promise((resolve) => sets.once('deleteCancelled', resolve));
          expect(await sets.ensure('ns/a', ['10.1.0.2'])).toEqual(refs);
          await cancelled;
          await advance(DELAY); // past the old deadline: the old timer must do nothing
          expect(await sets.inspect('ns/a')).toMatchObject({ state: 'live', v4: { elements: ['10.1.0.2'] } });
          await sets.delete('ns/a');
          await advance(DELAY - 1);
          expect((await sets.list()).map((row) => row.state)).toEqual(['pending', 'pending']);
          const destroyed = new Promise((resolve) => sets.once('destroyed', resolve));
          await advance(1);
          await destroyed;
          expect(await sets.list()).toEqual([]);
        } finally {
          await sets.close();
        }
      });

      // Requests made at once share one transaction, in the order made. The kernel takes a batch that deletes
      // an element and later flushes its set; nft 1.0.6 refuses it as text, which cost the nft backend a
      // failed transaction and one more per request, and counted a failure the user never saw.
      it('a replace and a delete of one owner made at once land as one transaction', async () => {
        const kernel = await makeKernel();
        const { sets } = await open(kernel, new ManualClock());
        try {
          await sets.ensure('ns/c', ['10.1.0.1', 'fd00::1']);
          const before = sets.stats();
          await Promise.all([sets.replace('ns/c', ['10.1.0.2']), sets.delete('ns/c')]);
          expect(sets.stats()).toMatchObject({ transactions: before.transactions + 1, failedTransactions: 0 });
          expect(await sets.inspect('ns/c')).toMatchObject({ state: 'pending', v4: { elements: [] }, v6: { elements: [] } });
        } finally {
          await sets.close();
        }
      });

      it('keeps a set a rule references (EBUSY), retries with backoff, destroys it once the rule is gone', async () => {
        const kernel = await makeKernel();
        const { sets, advance } = await open(kernel, new ManualClock());
        try {
          const refs = await sets.ensure('ns/b', ['10.1.0.1']);
          await kernel.reference(refs.v4);
          const failures: { error: Error & { code?: string }; retryInMs: number }[] = [];
          sets.on('destroyFailed', (event) => failures.push(event));
          await sets.delete('ns/b');
          await advance(DELAY + RETRY);
          expect(failures.map((failure) => [failure.error.code, failure.retryInMs])).toEqual([['EBUSY', RETRY], ['EBUSY', 2 * RETRY]]);
          expect((await sets.inspect('ns/b')).state).toBe('pending');
          await kernel.unreference(refs.v4);
          await advance(2 * RETRY);
          expect(await sets.list()).toEqual([]);
          expect(sets.stats()).toMatchObject({ destroyed: 1, destroyFailures: 2 });
        } finally {
          await sets.close();
        }
      });

      it('a second instance adopts the table: pending deadlines resume, gc removes the unowned and keeps the live', async () => {
        const kernel = await makeKernel();
        const clock = new ManualClock();
        const first = await open(kernel, clock);
        await first.sets.ensure('ns/pending', ['10.1.0.1']);
        await first.sets.delete('ns/pending');
        await first.sets.ensure('ns/leaked', ['10.1.0.2']);
        await first.sets.close();
        const second = await open(kernel, clock);
        try {
          expect(second.sets.stats()).toMatchObject({ pending: 1, orphan: 1 });
          await second.sets.ensure('ns/live', ['10.1.0.3']);
          const report = await second.sets.gc({ live: [] });
          expect(report.removed.map((entry) => entry.owner)).toEqual(['ns/leaked', 'ns/leaked']);
          expect(report.kept.map((entry) => entry.owner).sort()).toEqual(['ns/live', 'ns/live', 'ns/pending', 'ns/pending']);
          await second.advance(DELAY);
          expect([...new Set((await second.sets.list()).map((row) => row.owner))]).toEqual(['ns/live']);
        } finally {
          await second.sets.close();
        }
      });
    });
  }
});
