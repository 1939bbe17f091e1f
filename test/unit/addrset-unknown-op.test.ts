// Every backend refuses an operation it does not know, failing the whole
// transaction, rather than leaving it out: a transaction missing one of its
// changes would land as something nobody asked for (an owner's record kept
// with its set gone, say).
import { describe, expect, it } from 'vitest';
import type { Op } from '../../dist/addrset/index.js';
import { encodeOps } from '../../dist/addrset/netlink-ops.js';
import { renderJson, renderText } from '../../dist/addrset/render.js';
import { NFPROTO_INET } from '../../dist/nftables/constants.js';
import { MemoryBackend } from '../../dist/testing.js';

const table = { family: 'inet', table: 't' } as const;
const bogus = { op: 'renameSet', name: 'as4_0123456789a' } as unknown as Op;
const refused = expect.objectContaining({ code: 'ERR_NETNS_INVALID_ARG', message: 'addrset backend: unknown operation {"op":"renameSet","name":"as4_0123456789a"}' });

describe('an operation a backend does not know', () => {
  it('fails the memory backend\'s transaction whole: the set made before it in the list is not made', async () => {
    const memory = new MemoryBackend();
    const lock = await memory.lock({ timeoutMs: 0 });
    await expect(memory.apply([{ op: 'addTable' }, { op: 'createSet', name: 'as4_0123456789a', family: 4 }, bogus], lock)).rejects.toEqual(refused);
    expect((await memory.read({ elements: false, registry: 'as_owners' })).sets.size).toBe(0);
    lock.release();
  });

  it('is refused by the nft text and JSON renderers and the netlink encoder, before anything is sent', () => {
    expect(() => renderText(table, [{ op: 'addTable' }, bogus])).toThrow(refused);
    expect(() => renderJson(table, [{ op: 'addTable' }, bogus])).toThrow(refused);
    expect(() => encodeOps({ family: NFPROTO_INET, table: 't' }, [{ op: 'addTable' }, bogus])).toThrow(refused);
  });
});
