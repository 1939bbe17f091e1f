// Model-based test: thousands of random steps over many owners, checking the
// lifecycle invariants against a reference model after every step.
import { describe, expect, it } from 'vitest';
import { NetNS } from '../../dist/index.js';
import { AddressSets, type SetRefs } from '../../dist/addrset/index.js';
import { ManualClock, MemoryBackend } from '../../dist/testing.js';

const DELAY = 10_000;
const RETRY = 500;
const MAX_RETRY = 4_000;
const OWNERS = Array.from({ length: 12 }, (_, i) => (i % 3 === 0 ? `ns/"quoted" ${i}\n` : `owner-${i}`));
const POOL = [
  ...Array.from({ length: 12 }, (_, i) => `10.0.0.${i + 1}`),
  ...Array.from({ length: 4 }, (_, i) => `10.1.${i}.0/28`),
  ...Array.from({ length: 6 }, (_, i) => `fd00::${i + 1}`),
  'fd00:1::/64',
];

/** A small deterministic PRNG, so a failure can be replayed from its seed. */
function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

interface RefOwner {
  live: boolean;
  deletedAt?: number;
  content: Set<string>;
  refs?: SetRefs;
  /** Time the v4 set stopped being referenced by a rule (or undefined while referenced). */
  freeSince?: number;
  referenced: boolean;
  exists: boolean;
  /** The v4 set's incarnation while live: a live owner keeps the same sets. */
  setId?: number;
}

describe('address sets against a reference model', () => {
  for (const seed of [1, 2, 3]) {
    it(`keeps invariants (a)-(d) over 1,500 random steps with gc, a second writer and crashes mid-transaction (seed ${seed})`, async () => {
      const random = prng(seed);
      const pick = <T>(list: T[]): T => list[Math.floor(random() * list.length)]!;
      const subset = () => POOL.filter(() => random() < 0.25);
      const backend = new MemoryBackend();
      const clock = new ManualClock();
      const openWriter = () =>
        AddressSets.open({
          netns: NetNS.current(),
          table: 'model',
          deleteDelayMs: DELAY,
          retryIntervalMs: RETRY,
          maxRetryIntervalMs: MAX_RETRY,
          lockTimeoutMs: 0,
          backend,
          clock,
        });
      let sets = await openWriter();
      const model = new Map<string, RefOwner>(OWNERS.map((o) => [o, { live: false, content: new Set(), referenced: false, exists: false }]));

      const check = (step: string) => {
        for (const [owner, ref] of model) {
          if (!ref.refs) continue;
          const v4 = backend.elements(ref.refs.v4);
          const v6 = backend.elements(ref.refs.v6);
          const where = `${step}: ${JSON.stringify(owner)}`;
          if (ref.live) {
            // (a) never destroyed while live, not even re-made; content is what the owner asked for
            expect(v4, where).toBeDefined();
            expect([...v4!, ...v6!].sort(), where).toEqual([...ref.content].sort());
            ref.setId ??= backend.setId(ref.refs.v4);
            expect(backend.setId(ref.refs.v4), `${where} kept its set`).toBe(ref.setId);
          } else if (ref.deletedAt !== undefined) {
            const now = clock.now();
            if (now < ref.deletedAt + DELAY) {
              // (b) emptied at once, kept until the delay has passed
              expect(v4, where).toEqual([]);
              expect(v6, where).toEqual([]);
            } else if (!ref.referenced && ref.freeSince !== undefined && now >= Math.max(ref.deletedAt + DELAY, ref.freeSince) + MAX_RETRY) {
              // (b)/(d) destroyed once due and free, within one (maximal) retry interval
              expect(v4, where).toBeUndefined();
              expect(v6, where).toBeUndefined();
            }
            if (ref.referenced) expect(v4, `${where} is still referenced`).toEqual([]); // (d) EBUSY keeps it
          }
        }
      };

      for (let step = 0; step < 1500; step++) {
        const owner = pick(OWNERS);
        const ref = model.get(owner)!;
        const roll = random();
        let label: string;
        const special = random();
        if (special < 0.02) {
          label = 'a second writer is refused';
          await expect(openWriter()).rejects.toMatchObject({ code: 'ERR_NETNS_ADDRSET_LOCKED' });
          continue;
        } else if (special < 0.05) {
          label = 'crash with a replace in flight, restart';
          const ips = subset();
          const lands = random() < 0.5;
          const sent = backend.nextSend();
          const replacing = ref.live ? sets.replace(owner, ips) : sets.ensure(owner, ips);
          void replacing.catch(() => {});
          await sent;
          backend.crashWriter({ lands });
          if (lands) {
            ref.content = new Set(ips);
            if (!ref.live) ref.setId = undefined;
            ref.live = true;
            ref.deletedAt = undefined;
          }
          sets = await openWriter();
          // an agent restarting: nothing live was lost, then it claims its owners again
          for (const [name, held] of model) {
            if (held.live) held.refs = await sets.ensure(name);
          }
          check(`step ${step} (${label}, lands ${lands})`);
          continue;
        }
        if (roll < 0.2) {
          label = 'ensure';
          const ips = random() < 0.5 ? subset() : undefined;
          ref.refs = await sets.ensure(owner, ips);
          if (ips) ref.content = new Set(ips);
          ref.live = true;
          ref.deletedAt = undefined;
          ref.exists = true;
        } else if (roll < 0.27) {
          label = 'ensure racing the clock';
          const racing = sets.ensure(owner);
          await clock.advance(Math.floor(random() * 3_000));
          ref.refs = await racing;
          ref.live = true;
          ref.deletedAt = undefined;
        } else if (roll < 0.45) {
          label = 'add';
          const ips = subset();
          const result = await sets.add(owner, ips).then(() => 'ok', (e: { code: string }) => e.code);
          if (ref.live) {
            expect(result).toBe('ok');
            ips.forEach((ip) => ref.content.add(ip));
          } else expect(result).toBe('ERR_NETNS_ADDRSET_UNKNOWN_OWNER');
        } else if (roll < 0.6) {
          label = 'remove';
          const ips = subset();
          const result = await sets.remove(owner, ips).then(() => 'ok', (e: { code: string }) => e.code);
          if (ref.live) ips.forEach((ip) => ref.content.delete(ip));
          expect(result).toBe(ref.live ? 'ok' : 'ERR_NETNS_ADDRSET_UNKNOWN_OWNER');
        } else if (roll < 0.68) {
          label = 'replace';
          const ips = subset();
          const result = await sets.replace(owner, ips).then(() => 'ok', (e: { code: string }) => e.code);
          if (ref.live) ref.content = new Set(ips);
          expect(result).toBe(ref.live ? 'ok' : 'ERR_NETNS_ADDRSET_UNKNOWN_OWNER');
        } else if (roll < 0.8) {
          label = 'delete';
          await sets.delete(owner);
          if (ref.live) {
            ref.live = false;
            ref.deletedAt = clock.now();
            ref.setId = undefined;
            ref.content = new Set();
          }
        } else if (roll < 0.84) {
          label = 'gc';
          const live = OWNERS.filter((o) => model.get(o)!.live && random() < 0.5);
          await sets.gc({ live, dryRun: random() < 0.3 });
        } else if (roll < 0.9) {
          label = 'toggle reference';
          if (ref.refs && backend.elements(ref.refs.v4) !== undefined) {
            ref.referenced = !ref.referenced;
            if (ref.referenced) {
              backend.reference(ref.refs.v4);
              ref.freeSince = undefined;
            } else {
              backend.unreference(ref.refs.v4);
              ref.freeSince = clock.now();
            }
          }
        } else {
          label = 'clock';
          await clock.advance(Math.floor(random() * 6_000), () => sets.settled());
        }
        await sets.settled();
        check(`step ${step} (${label})`);
        if (ref.refs && ref.freeSince === undefined && !ref.referenced) ref.freeSince = clock.now();
      }
      await sets.close();
    });
  }
});
