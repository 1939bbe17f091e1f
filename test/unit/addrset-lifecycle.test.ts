import { describe, expect, it } from 'vitest';
import { NetNS } from '../../dist/index.js';
import { AddressSets } from '../../dist/addrset/index.js';
import { ManualClock, MemoryBackend } from '../../dist/testing.js';

const DELAY = 20_000;
const RETRY = 1_000;

async function openSets(backend = new MemoryBackend(), clock = new ManualClock()) {
  const sets = await AddressSets.open({
    netns: NetNS.current(),
    table: 'policy',
    deleteDelayMs: DELAY,
    retryIntervalMs: RETRY,
    maxRetryIntervalMs: 8 * RETRY,
    backend,
    clock,
  });
  const advance = (ms: number) => clock.advance(ms, () => sets.settled());
  return { sets, backend, clock, advance };
}

/** A process that ensured `owner` and then deleted it; a later process shares its kernel and clock. */
async function deletedInAFirstProcess(owner: string, address: string) {
  const backend = new MemoryBackend();
  const clock = new ManualClock();
  const first = await openSets(backend, clock);
  const refs = await first.sets.ensure(owner, [address]);
  await first.sets.delete(owner);
  return { backend, clock, first, refs };
}

describe('address-set lifecycle (deterministic, in-memory backend)', () => {
  it('OCPBUGS-33005: a re-ensure inside the delay survives the old timer', async () => {
    const { sets, backend, advance } = await openSets();
    const first = await sets.ensure('ns/frontend', ['10.1.0.7', 'fd00::7']);
    await sets.delete('ns/frontend');
    expect(backend.elements(first.v4)).toEqual([]); // emptied at once
    await advance(DELAY / 2);
    const again = await sets.ensure('ns/frontend', ['10.1.0.8']);
    expect(again).toEqual(first); // same sets, picked up by name
    await advance(DELAY); // the old timer's time comes and goes
    expect(backend.elements(first.v4)).toEqual(['10.1.0.8']);
    expect(backend.elements(first.v6)).toEqual([]);
    expect(sets.stats()).toMatchObject({ live: 1, pending: 0, destroyed: 0 });
  });

  it('OCPBUGS-33005: the old timer firing while the re-ensure is in flight destroys nothing', async () => {
    const { sets, backend, clock } = await openSets();
    const refs = await sets.ensure('ns/frontend', ['10.1.0.7']);
    await sets.delete('ns/frontend');
    await clock.advance(DELAY - 1, () => sets.settled());
    const ensuring = sets.ensure('ns/frontend', ['10.1.0.8']); // in flight...
    await clock.advance(1); // ...when the deferred delete's timer fires
    await ensuring;
    await sets.settled();
    expect(backend.elements(refs.v4)).toEqual(['10.1.0.8']);
    expect(sets.stats()).toMatchObject({ live: 1, pending: 0, destroyed: 0 });
  });

  it('destroys a deleted owner no sooner than the delay, and then at once', async () => {
    const { sets, backend, advance } = await openSets();
    const events: string[] = [];
    sets.on('deleteDeferred', () => events.push('deferred'));
    sets.on('destroyed', () => events.push('destroyed'));
    const refs = await sets.ensure('team/a', ['10.0.0.1']);
    await sets.delete('team/a');
    await advance(DELAY - 1);
    expect(backend.elements(refs.v4)).toEqual([]);
    await advance(1);
    expect(backend.elements(refs.v4)).toBeUndefined();
    expect(backend.elements(refs.v6)).toBeUndefined();
    expect(events).toEqual(['deferred', 'destroyed']);
  });

  it('cancels the destroy when ensured again, and says so', async () => {
    const { sets, advance, clock } = await openSets();
    const cancelled: string[] = [];
    sets.on('deleteCancelled', ({ owner }) => cancelled.push(owner));
    await sets.ensure('x');
    await sets.delete('x');
    expect(clock.pending).toBe(1);
    await sets.ensure('x');
    expect(clock.pending).toBe(0);
    expect(cancelled).toEqual(['x']);
    await advance(2 * DELAY);
    expect(sets.stats()).toMatchObject({ live: 1, destroyed: 0 });
  });

  it('keeps a set a rule still references (EBUSY), retries with backoff, and destroys it once free', async () => {
    const { sets, backend, advance } = await openSets();
    const failures: number[] = [];
    sets.on('destroyFailed', ({ retryInMs, error }) => {
      expect((error as Error & { code: string }).code).toBe('EBUSY');
      failures.push(retryInMs);
    });
    const refs = await sets.ensure('busy', ['10.9.0.1']);
    backend.reference(refs.v4);
    await sets.delete('busy');
    await advance(DELAY + 6 * RETRY); // attempts at +0, +1 s and +3 s
    expect(failures).toEqual([RETRY, 2 * RETRY, 4 * RETRY]);
    expect(backend.elements(refs.v4)).toEqual([]);
    expect(sets.stats()).toMatchObject({ pending: 1, destroyFailures: 3 });
    backend.unreference(refs.v4);
    await advance(8 * RETRY);
    expect(backend.elements(refs.v4)).toBeUndefined();
    expect(sets.stats()).toMatchObject({ pending: 0, destroyed: 1 });
  });

  it('a restarted process finishes a pending delete no sooner than the recorded deadline', async () => {
    const { backend, clock, first: before, refs } = await deletedInAFirstProcess('crashy', '10.3.0.1');
    await before.advance(DELAY / 4);
    backend.crashWriter(); // the process dies without close(): its timers are simply gone
    const after = await openSets(backend, clock);
    expect(after.sets.stats()).toMatchObject({ pending: 1 });
    await after.advance(DELAY / 2);
    expect(backend.elements(refs.v4)).toEqual([]);
    await after.advance(DELAY / 4);
    expect(backend.elements(refs.v4)).toBeUndefined();
  });

  it('adopts live sets after a restart and keeps them until gc says otherwise', async () => {
    const backend = new MemoryBackend();
    const first = await openSets(backend);
    await first.sets.ensure('keep', ['10.4.0.1']);
    await first.sets.ensure('drop', ['10.4.0.2']);
    backend.crashWriter();
    const second = await openSets(backend);
    expect((await second.sets.list()).map((row) => [row.owner, row.state])).toEqual(
      expect.arrayContaining([['keep', 'orphan'], ['drop', 'orphan']]),
    );
    const refs = await second.sets.ensure('keep');
    expect(backend.elements(refs.v4)).toEqual(['10.4.0.1']); // adopted with its content
    await second.sets.add('keep', ['10.4.0.3']);
    await second.sets.remove('keep', ['10.4.0.1']);
    expect(backend.elements(refs.v4)).toEqual(['10.4.0.3']);
    const report = await second.sets.gc({ live: [] });
    expect(report.removed.map((e) => e.owner)).toEqual(['drop', 'drop']);
    expect(report.kept.map((e) => [e.owner, e.reason])).toEqual([
      ['keep', 'live in this process'],
      ['keep', 'live in this process'],
    ]);
  });

  // An owner too long for its record (over 92 bytes) is recorded by its hash only: named, it is found by that hash.
  it('inspect() in a later process finds an owner recorded by hash only, with its state and addresses', async () => {
    const [kept, deleted] = ['kept', 'deleted'].map((name) => `ns/${name}-${'x'.repeat(100)}`) as [string, string];
    const { backend, clock, first } = await deletedInAFirstProcess(deleted, '10.4.0.2');
    await first.sets.ensure(kept, ['10.4.0.1', 'fd00::1']);
    backend.crashWriter();
    const writer = await openSets(backend, clock);
    const reader = await AddressSets.open({ netns: NetNS.current(), table: 'policy', backend, clock, readOnly: true });
    for (const sets of [writer.sets, reader]) {
      expect(await sets.inspect(kept)).toMatchObject({ owner: kept, state: 'orphan', v4: { elements: ['10.4.0.1'] }, v6: { elements: ['fd00::1'] } });
      expect(await sets.inspect(deleted)).toMatchObject({ owner: deleted, state: 'pending', deadline: clock.now() + DELAY, v4: { elements: [] } });
    }
    await reader.close();
  });

  it('batches many callers of one tick into one transaction, with results per caller', async () => {
    const { sets, backend } = await openSets();
    const owners = Array.from({ length: 100 }, (_, i) => `owner-${i}`);
    await Promise.all(owners.map((owner) => sets.ensure(owner)));
    const before = backend.transactions;
    const adds = owners.flatMap((owner, i) =>
      Array.from({ length: 10 }, (_, j) => sets.add(owner, [`10.${i}.${j}.1`])),
    );
    adds.push(sets.add('owner-0', ['not-an-ip']));
    const results = await Promise.allSettled(adds);
    expect(backend.transactions - before).toBe(1);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1000);
    expect(results.at(-1)).toMatchObject({ status: 'rejected', reason: { code: 'ERR_NETNS_ADDRSET_INVALID_ADDRESS' } });
    const refs = await sets.ensure('owner-7');
    expect(backend.elements(refs.v4)).toHaveLength(10);
  });

  it('isolates a failing part of a combined transaction', async () => {
    const { sets, backend } = await openSets();
    await Promise.all([sets.ensure('a'), sets.ensure('b')]);
    backend.failNext('EIO');
    const [a, b] = await Promise.allSettled([sets.add('a', ['10.0.0.1']), sets.add('b', ['10.0.0.2'])]);
    // the combined transaction failed once; each part was then retried on its own
    expect(a.status).toBe('fulfilled');
    expect(b.status).toBe('fulfilled');
    backend.failNext('EIO');
    await expect(sets.add('a', ['10.0.0.3'])).rejects.toMatchObject({ code: 'EIO' });
    const refs = await sets.ensure('a');
    expect(backend.elements(refs.v4)).toEqual(['10.0.0.1']); // the model was rolled back with the kernel
    await sets.add('a', ['10.0.0.3']);
    expect(backend.elements(refs.v4)).toEqual(['10.0.0.1', '10.0.0.3']);
  });

  it('replaces content atomically and rejects bad input before sending anything', async () => {
    const { sets, backend } = await openSets();
    const refs = await sets.ensure('r', ['10.0.0.1', '10.0.0.2', 'fd00::1']);
    const before = backend.log.length;
    await sets.replace('r', ['10.0.0.2', '10.0.0.3', '10.8.0.0/16']);
    expect(backend.log.length - before).toBe(1);
    expect(backend.elements(refs.v4)).toEqual(['10.0.0.2', '10.0.0.3', '10.8.0.0/16']);
    expect(backend.elements(refs.v6)).toEqual([]);
    const sent = backend.log.length;
    await expect(sets.add('r', ['10.0.0.9', '10.0.0.300', 'bogus'])).rejects.toThrow(/10\.0\.0\.300.*bogus/);
    await expect(sets.add('r', ['10.8.1.1'])).rejects.toMatchObject({ code: 'ERR_NETNS_ADDRSET_OVERLAP' });
    await expect(sets.add('r', ['10.0.0.5/24'])).rejects.toThrow(/host bits set \(did you mean 10\.0\.0\.0\/24\?\)/);
    await expect(sets.add('nobody', ['10.0.0.1'])).rejects.toMatchObject({ code: 'ERR_NETNS_ADDRSET_UNKNOWN_OWNER' });
    expect(backend.log.length).toBe(sent);
  });

  it('close() stops timers; the deadline stays in force for the next process', async () => {
    const { backend, clock, first, refs } = await deletedInAFirstProcess('c', '10.0.0.1');
    await first.sets.close();
    expect(clock.pending).toBe(0);
    await expect(first.sets.ensure('c')).rejects.toMatchObject({ code: 'ERR_NETNS_ADDRSET_CLOSED' });
    const second = await openSets(backend, clock);
    await second.advance(DELAY - 1);
    expect(backend.elements(refs.v4)).toEqual([]);
    await second.advance(1);
    expect(backend.elements(refs.v4)).toBeUndefined();
  });

  it('destroyDue() finishes deletes whose deadline passed, without waiting for a timer, and keeps one ensured again', async () => {
    const { backend, clock, first, refs } = await deletedInAFirstProcess('gone', '10.0.0.1');
    const kept = await first.sets.ensure('kept', ['10.0.0.2']);
    await first.sets.delete('kept');
    await first.sets.close(); // a plugin's process: it ends before its timers fire
    await clock.advance(DELAY);
    const second = await openSets(backend, clock);
    await second.sets.ensure('kept'); // the same owner added again
    const late = await second.sets.ensure('late', ['10.0.0.3']);
    await second.sets.delete('late'); // its deadline is still ahead
    expect(await second.sets.destroyDue()).toBe(1);
    expect(backend.elements(refs.v4)).toBeUndefined();
    expect(backend.elements(kept.v4)).toEqual([]);
    expect(backend.elements(late.v4)).toEqual([]);
    expect(second.sets.stats()).toMatchObject({ live: 1, pending: 1, destroyed: 1 });
    const reader = await AddressSets.open({ netns: NetNS.current(), table: 'policy', backend, clock, readOnly: true });
    await expect(reader.destroyDue()).rejects.toMatchObject({ code: 'ERR_NETNS_ADDRSET_READ_ONLY' });
    await reader.close();
  });

  it('openExisting() is null and creates nothing where the table is not, and opens it where it is', async () => {
    const backend = new MemoryBackend();
    const options = { netns: NetNS.current(), table: 'policy', backend };
    expect(await AddressSets.openExisting(options)).toBeNull();
    expect(backend.log).toEqual([]); // no table, no registry
    const first = await openSets(backend);
    await first.sets.ensure('kept', ['10.0.0.1']);
    await first.sets.close();
    const again = await AddressSets.openExisting(options);
    expect(await again!.inspect('kept')).toMatchObject({ state: 'orphan', v4: { elements: ['10.0.0.1'] } });
    await again!.delete('kept');
    await again!.close();
    expect(await AddressSets.openExisting({ ...options, readOnly: true }).then((sets) => sets?.close())).toBeUndefined();
  });

  it('destroyDue() raced by an ensure of the same owner, and by close(): the owner ends live with its content, and close waits for the destroy', async () => {
    const { backend, clock, first } = await deletedInAFirstProcess('raced', '10.0.0.1');
    await first.sets.ensure('other', ['10.0.0.9']);
    await first.sets.delete('other');
    await first.sets.close();
    await clock.advance(DELAY);
    const second = await openSets(backend, clock);
    const destroying = second.sets.destroyDue();
    const ensured = second.sets.ensure('raced', ['10.0.0.2']); // in the same tick: after the destroy in the queue
    const closing = second.sets.close();
    expect(await destroying).toBe(2);
    const refs = await ensured;
    await closing;
    expect(backend.elements(refs.v4)).toEqual(['10.0.0.2']);
    await expect(second.sets.destroyDue()).rejects.toMatchObject({ code: 'ERR_NETNS_ADDRSET_CLOSED' });
  });
});
