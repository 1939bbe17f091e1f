// MemoryBackend, the fake users get from netns/testing for deterministic
// tests of code built on AddressSets: it must refuse and report as nftables
// does, and its inspection helpers must say exactly what it holds. Found by
// the mutation pass over src/addrset/memory-backend.ts (issue 34).
import { describe, expect, it } from 'vitest';
import { parseEntries } from '../../dist/addrset/addresses.js';
import { MemoryBackend } from '../../dist/testing.js';

const entries = (...texts: string[]) => parseEntries(texts);

async function withTable() {
  const backend = new MemoryBackend();
  const lock = await backend.lock({ timeoutMs: 0 });
  await backend.apply([{ op: 'addTable' }, { op: 'addRegistry', name: 'reg' }], lock);
  return { backend, lock };
}

describe('MemoryBackend', () => {
  it('lists sets and elements sorted, and nothing for a set it does not have', async () => {
    const { backend, lock } = await withTable();
    await backend.apply([{ op: 'createSet', name: 'zz', family: 4 }, { op: 'createSet', name: 'aa', family: 4 }, { op: 'addElements', name: 'aa', elements: entries('10.0.0.9', '10.0.0.10', '10.0.0.1') }], lock);
    expect(backend.setNames()).toEqual(['aa', 'reg', 'zz']);
    expect(backend.elements('aa')).toEqual(['10.0.0.1', '10.0.0.10', '10.0.0.9']);
    expect(backend.elements('none')).toBeUndefined();
    expect(backend.setId('none')).toBeUndefined();
  });

  it('keeps a set made again as the same set, and gives one made after a delete a new id', async () => {
    const { backend, lock } = await withTable();
    await backend.apply([{ op: 'createSet', name: 's', family: 4 }, { op: 'addElements', name: 's', elements: entries('10.0.0.1') }], lock);
    const id = backend.setId('s');
    await backend.apply([{ op: 'createSet', name: 's', family: 4 }], lock);
    expect(backend.setId('s')).toBe(id);
    expect(backend.elements('s')).toEqual([]); // created again: emptied, as createSet's flush does
    await backend.apply([{ op: 'deleteSet', name: 's' }, { op: 'createSet', name: 's', family: 4 }], lock);
    expect(backend.setId('s')).not.toBe(id);
  });

  it('reads records with their comments and sets with their family, the registry apart', async () => {
    const { backend, lock } = await withTable();
    await backend.apply([{ op: 'addRegistry', name: 'other_reg' }, { op: 'createSet', name: 's6', family: 6 }, { op: 'addElements', name: 's6', elements: entries('fd00::1') }, { op: 'putRecord', registry: 'reg', key: 's6', comment: 'v1 o=x' }], lock);
    const view = await backend.read({ elements: true, registry: 'reg' });
    expect(view.records).toEqual(new Map([['s6', 'v1 o=x']]));
    expect([...view.sets.keys()]).toEqual(['s6']); // another prefix's registry is not a set of addresses
    expect(view.sets.get('s6')).toMatchObject({ family: 6, elements: [expect.objectContaining({ text: 'fd00::1' })] });
  });

  it('refuses as nft does: no table, no set, no element, no record, a referenced set, a writer without the lock', async () => {
    const fresh = new MemoryBackend();
    const freshLock = await fresh.lock({ timeoutMs: 0 });
    await expect(fresh.apply([{ op: 'createSet', name: 's', family: 4 }], freshLock)).rejects.toMatchObject({ code: 'ENOENT', message: 'no such table' });
    const { backend, lock } = await withTable();
    await expect(backend.apply([{ op: 'flushSet', name: 'x' }], lock)).rejects.toMatchObject({ code: 'ENOENT', message: 'no such set x' });
    await backend.apply([{ op: 'createSet', name: 's', family: 4 }], lock);
    await expect(backend.apply([{ op: 'deleteElements', name: 's', elements: entries('10.0.0.1') }], lock)).rejects.toMatchObject({ code: 'ENOENT', message: 'no such element 10.0.0.1' });
    await expect(backend.apply([{ op: 'deleteRecord', registry: 'reg', key: 's' }], lock)).rejects.toMatchObject({ code: 'ENOENT', message: 'no such record s' });
    backend.reference('s');
    await expect(backend.apply([{ op: 'deleteSet', name: 's' }], lock)).rejects.toMatchObject({ code: 'EBUSY', message: 'set s is referenced by a rule' });
    lock.release();
    await expect(backend.apply([{ op: 'addTable' }], lock)).rejects.toMatchObject({ code: 'ERR_NETNS_ADDRSET_LOCKED', message: 'a transaction from a writer that does not hold the lock' });
    expect(backend.setNames()).toEqual(['reg', 's']);
  });

  it('fails the next transaction with an injected code, changing nothing', async () => {
    const { backend, lock } = await withTable();
    backend.failNext('EBUSY');
    await expect(backend.apply([{ op: 'createSet', name: 's', family: 4 }], lock)).rejects.toMatchObject({ code: 'EBUSY', message: 'injected failure (EBUSY)' });
    expect(backend.setNames()).toEqual(['reg']);
  });

  it('refuses a second writer at once with timeout 0, and hands the lock to a waiting one on release', async () => {
    const { backend, lock } = await withTable();
    await expect(backend.lock({ timeoutMs: 0 })).rejects.toMatchObject({ code: 'ERR_NETNS_ADDRSET_LOCKED', message: 'the table has another writer' });
    const waiting = backend.lock({ timeoutMs: 60_000 });
    lock.release();
    const next = await waiting;
    await backend.apply([{ op: 'createSet', name: 's', family: 4 }], next);
    expect(backend.setNames()).toEqual(['reg', 's']);
  });

  it('gives up on a lock still held when its timeout passes, and leaves no waiter behind', async () => {
    const { backend, lock } = await withTable();
    await expect(backend.lock({ timeoutMs: 20 })).rejects.toMatchObject({ code: 'ERR_NETNS_ADDRSET_LOCKED', message: 'the table has another writer' });
    lock.release();
    const next = await backend.lock({ timeoutMs: 0 });
    await backend.apply([{ op: 'createSet', name: 's', family: 4 }], next);
    expect(backend.setNames()).toEqual(['reg', 's']);
  });

  it('crashWriter lets what was sent land by default, or not, and frees the lock; with no writer it does nothing', async () => {
    new MemoryBackend().crashWriter();
    for (const lands of [undefined, false]) {
      const { backend, lock } = await withTable();
      const sent = backend.nextSend();
      void backend.apply([{ op: 'createSet', name: 's', family: 4 }], lock);
      await sent;
      backend.crashWriter(lands === undefined ? undefined : { lands });
      expect(backend.setNames(), String(lands)).toEqual(lands === false ? ['reg'] : ['reg', 's']);
      (await backend.lock({ timeoutMs: 0 })).release();
    }
  });
});
