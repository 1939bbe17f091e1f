// A MemoryBackend with a hand on its table, for tests of what the manager
// does when its table is changed behind its back.
import type { AddrsetBackend, Op, ReadOptions, WriterLock } from '../../dist/addrset/index.js';
import { encodeRecord, ownerHash, setName } from '../../dist/addrset/naming.js';
import { MemoryBackend } from '../../dist/testing.js';

/**
 * A MemoryBackend and a hand on its table: `byHand` changes it between the
 * writer's transactions, as `nft` typed in a shell would. The memory backend
 * takes changes from the lock holder only, so the hand borrows the writer's.
 * `reads` lists what each read of the writer asked for (ReadOptions.elements).
 */
export function tableWithAHand() {
  const memory = new MemoryBackend();
  let writerLock: WriterLock | undefined;
  const reads: ReadOptions['elements'][] = [];
  const backend: AddrsetBackend = {
    apply: (ops, lock) => memory.apply(ops, lock),
    read: (options) => {
      reads.push(options.elements);
      return memory.read(options);
    },
    lock: async (options) => (writerLock = await memory.lock(options)),
  };
  const byHand = (ops: Op[]) => memory.apply(ops, writerLock!);
  return { memory, backend, byHand, reads };
}

/** An owner's sets and records as another writer (or a restored ruleset backup) would leave them, named for `prefix`. */
export function recordedOwnerOps(prefix: string, owner: string): Op[] {
  const hash = ownerHash(owner);
  return ([4, 6] as const).flatMap((family): Op[] => [
    { op: 'createSet', name: setName(prefix, family, hash), family },
    { op: 'putRecord', registry: `${prefix}_owners`, key: setName(prefix, family, hash), comment: encodeRecord(owner) },
  ]);
}

