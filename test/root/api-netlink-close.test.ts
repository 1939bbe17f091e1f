// Netlink's close() is synchronous (convention: it only lets go of this
// process's descriptor): requests made or still on their way afterwards reject
// with ERR_NETNS_CLOSED, and callers who await it still work.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NetNS } from '../../dist/index.js';
import { NetnsError, openNetlink } from '../../dist/netlink/index.js';
import { privileged } from '../helpers/privileges.js';
import { scratchNamespaces } from '../helpers/scratch-namespaces.js';

describe.skipIf(!privileged)('Netlink close()', () => {
  const scratch = scratchNamespaces('apiclose-');
  let ns: NetNS;

  beforeAll(async () => {
    ns = await scratch.create();
  });

  afterAll(() => scratch.removeAll());

  it('returns nothing (not a Promise), and later requests reject with ERR_NETNS_CLOSED', async () => {
    const nl = await openNetlink(ns);
    expect(nl.close()).toBeUndefined();
    expect(nl.handle.closed).toBe(true);
    const error = await nl.links.list().then(() => null, (failure: unknown) => failure);
    expect(error).toBeInstanceOf(NetnsError);
    expect(error).toMatchObject({ code: 'ERR_NETNS_CLOSED' });
    await expect(nl.watch({ links: true })).rejects.toMatchObject({ code: 'ERR_NETNS_CLOSED' });
    expect(nl.close()).toBeUndefined(); // idempotent
  });

  it('rejects a request still resolving its link name when close() comes first', async () => {
    const nl = await openNetlink(ns);
    const pending = nl.addresses.add({ link: 'lo', address: '10.9.9.9/32' }); // looks lo up first, then sends
    nl.close();
    await expect(pending).rejects.toMatchObject({ code: 'ERR_NETNS_CLOSED' });
    using check = await openNetlink(ns);
    expect((await check.addresses.list({ link: 'lo' })).map((a) => a.address)).not.toContain('10.9.9.9');
  });

  it('works with await, using and await using', async () => {
    const awaited = await openNetlink(ns);
    await awaited.close();
    expect(awaited.handle.closed).toBe(true);
    let kept;
    {
      using nl = await openNetlink(ns);
      kept = nl;
    }
    expect(kept.handle.closed).toBe(true);
    {
      await using nl = await openNetlink(ns);
      kept = nl;
    }
    expect(kept.handle.closed).toBe(true);
  });
});
