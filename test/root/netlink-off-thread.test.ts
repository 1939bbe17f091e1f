// A link made or deleted holds the kernel's sendmsg for milliseconds (a veth's
// deletion ~20 ms: RTNL and RCU waits). Those requests run off the JS thread,
// so a process serving many calls (a resident CNI daemon) goes on meanwhile;
// on one handle every request still meets the socket in the order it was
// made, and close() never frees the descriptor under a request still running.
import { readlinkSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { openNetlink } from '../../dist/netlink/index.js';
import { privileged } from '../helpers/privileges.js';
import { scratchNamespaces } from '../helpers/scratch-namespaces.js';

const scratch = scratchNamespaces('nlot');
/** What descriptor `fd` of this process is now, if anything. */
function target(fd: number): string | undefined {
  try {
    return readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    return undefined;
  }
}

/** Whether `promise` has settled once every microtask queued so far has run: only the event loop can settle one running off the thread. */
async function settledByMicrotasks(promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  for (let i = 0; i < 10; i++) await Promise.resolve();
  return settled;
}

describe.skipIf(!privileged)('netlink link changes off the JS thread', () => {
  afterEach(() => scratch.removeAll());

  it('a veth made and deleted: neither has settled before the event loop turns, and each did its work', async () => {
    const ns = await scratch.create();
    using nl = await openNetlink(ns);
    const adding = nl.links.add({ name: 'ot0', kind: 'veth', peer: { name: 'ot1' } });
    expect(await settledByMicrotasks(adding)).toBe(false);
    expect((await adding).name).toBe('ot0');
    const deleting = nl.links.delete('ot0');
    expect(await settledByMicrotasks(deleting)).toBe(false);
    await deleting;
    expect((await nl.links.list()).map((link) => link.name)).toEqual(['lo']);
  });

  it('requests made while a deletion runs wait their turn: a list sees the link gone, a failure is its own request\'s', async () => {
    const ns = await scratch.create();
    using nl = await openNetlink(ns);
    await nl.links.add({ name: 'ot0', kind: 'veth', peer: { name: 'ot1' } });
    await nl.links.add({ name: 'ot2', kind: 'veth', peer: { name: 'ot3' } });
    const [deleted, listed, again, up] = await Promise.allSettled([
      nl.links.delete('ot0'),
      nl.links.list(),
      nl.links.delete('ot0'),
      nl.links.up('ot2'),
    ]);
    expect(deleted.status).toBe('fulfilled');
    expect(listed.status === 'fulfilled' && listed.value.map((link) => link.name).sort()).toEqual(['lo', 'ot2', 'ot3']);
    expect(again).toMatchObject({ status: 'rejected', reason: { code: 'ENODEV' } });
    expect(up.status).toBe('fulfilled');
    expect((await nl.links.get('ot2')).flags).toContain('UP');
  });

  it('close() while a deletion runs: the deletion completes, later requests reject ERR_NETNS_CLOSED, and the descriptor is freed after', async () => {
    const ns = await scratch.create();
    const nl = await openNetlink(ns);
    const { fd } = nl.handle;
    const socket = target(fd);
    expect(socket).toMatch(/^socket:/);
    await nl.links.add({ name: 'ot0', kind: 'veth', peer: { name: 'ot1' } });
    const deleting = nl.links.delete('ot0');
    const waiting = nl.links.list();
    nl.close();
    expect(target(fd)).toBe(socket); // still the deletion's
    await deleting;
    await expect(waiting).rejects.toMatchObject({ code: 'ERR_NETNS_CLOSED' });
    await new Promise(setImmediate);
    expect(target(fd)).not.toBe(socket);
    const { stdout } = await ns.execFile('ip', ['-o', 'link', 'show']);
    expect(stdout).not.toContain('ot0');
  });
});
