// Network namespace ids through this package beside `ip netns set / list /
// list-id` on the same namespaces: what one assigns the other reads, list()
// is `ip -j netns list-id` with its filters, refusals carry ip's words. Ids
// are assigned in namespaces made here (the "home" of each test), where no
// other test assigns any, except in the first test, which uses the suite's
// namespace with ids far above those the kernel picks for others.
import { execFileSync, spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { NetNS } from '../../dist/index.js';
import { ErrorCodes, openNetlink, type NsidEntry } from '../../dist/netlink/index.js';
import { privileged } from '../helpers/privileges.js';
import { ipJson, nsName, scratchNamespaces } from '../helpers/scratch-namespaces.js';

const scratch = scratchNamespaces('nsnsid');
const namespace = (): Promise<NetNS> => scratch.create();

/** `ip [-n NS] netns ...`, its status and output (ip fails with a status, not an exception). */
const ipNetns = (ns: NetNS | undefined, ...args: string[]) =>
  spawnSync('ip', [...(ns ? ['-n', nsName(ns)] : []), 'netns', ...args], { encoding: 'utf8' });

/** The lines of `ip [-n NS] netns list`. */
const ipList = (ns?: NetNS): string[] => ipNetns(ns, 'list').stdout.split('\n');

/** `ip -n NS -j netns list-id ...` in list()'s shape, ip's names aside. */
const ipIds = (ns: NetNS, ...args: string[]): NsidEntry[] =>
  ipJson(ns, 'netns', 'list-id', ...args).map(({ nsid, 'current-nsid': currentNsid }) => ({
    ...(nsid === undefined ? {} : { nsid }),
    ...(currentNsid === undefined ? {} : { currentNsid }),
  }));

/** Every named namespace, as the run directory lists them (other tests' included). */
const runDirectory = (): { name: string; path: string }[] => readdirSync('/run/netns').map((name) => ({ name, path: `/run/netns/${name}` }));

describe.skipIf(!privileged)('network namespace ids', () => {
  afterEach(async () => {
    await scratch.removeAll();
  });

  it('what set() assigns is what `ip netns list` prints, and what `ip netns set` assigns get() reads', async () => {
    const [a, b] = [await namespace(), await namespace()];
    using nl = await openNetlink();
    const id = 1_000_000 + (process.pid % 1_000_000);
    await expect(nl.nsids.set(a, id)).resolves.toBe(id);
    expect(ipList()).toContain(`${nsName(a)} (id: ${id})`);
    expect(JSON.parse(execFileSync('ip', ['-j', 'netns', 'list'], { encoding: 'utf8' }))).toContainEqual({ name: nsName(a), id });
    expect(ipNetns(undefined, 'set', nsName(b), String(id + 1)).status).toBe(0);
    for (const target of [b, nsName(b), b.path]) expect(await nl.nsids.get(target)).toBe(id + 1);
  });

  it("'auto' assigns the lowest free id, the one ip then shows", async () => {
    const [home, a, b] = [await namespace(), await namespace(), await namespace()];
    using nl = await openNetlink(home);
    await expect(nl.nsids.set(a, 'auto')).resolves.toBe(0);
    expect(ipNetns(home, 'set', nsName(b), 'auto').status).toBe(0);
    expect(await nl.nsids.get(b)).toBe(1);
    expect(ipList(home)).toEqual(expect.arrayContaining([`${nsName(a)} (id: 0)`, `${nsName(b)} (id: 1)`]));
  });

  it('list() is `ip -j netns list-id`, with target-nsid and nsid; names() names the ids as ip does', async () => {
    const [home, a, b, c] = [await namespace(), await namespace(), await namespace(), await namespace()];
    using nl = await openNetlink(home);
    await nl.nsids.set(a, 'auto');
    expect(ipNetns(home, 'set', nsName(b), '5').status).toBe(0);
    await nl.nsids.set(c, 2);
    expect(ipNetns(a, 'set', nsName(b), '3').status).toBe(0);

    expect(await nl.nsids.list()).toEqual([{ nsid: 0 }, { nsid: 2 }, { nsid: 5 }]);
    expect(await nl.nsids.list()).toEqual(ipIds(home));
    // a is 0 to home: a's ids, each with home's for the same namespace
    expect(await nl.nsids.list({ targetNsid: 0 })).toEqual([{ nsid: 3, currentNsid: 5 }]);
    expect(await nl.nsids.list({ targetNsid: 0 })).toEqual(ipIds(home, 'target-nsid', '0'));
    expect(await nl.nsids.list({ nsid: 5 })).toEqual(ipIds(home, 'nsid', '5'));
    expect(await nl.nsids.list({ targetNsid: 0, nsid: 5 })).toEqual(ipIds(home, 'target-nsid', '0', 'nsid', '5'));
    // c is 2 to home, and nothing to a
    expect(await nl.nsids.list({ targetNsid: 0, nsid: 2 })).toEqual([{ currentNsid: 2 }]);
    expect(await nl.nsids.list({ targetNsid: 0, nsid: 2 })).toEqual(ipIds(home, 'target-nsid', '0', 'nsid', '2'));

    const named = await nl.nsids.names(runDirectory());
    expect(named).toEqual(new Map([[0, nsName(a)], [2, nsName(c)], [5, nsName(b)]]));
    expect(named).toEqual(new Map(ipJson(home, 'netns', 'list-id').map((entry) => [entry.nsid, entry.name])));
  });

  it('a filter naming no namespace is the kernel’s refusal, as ip prints it', async () => {
    const home = await namespace();
    using nl = await openNetlink(home);
    for (const [filter, args] of [[{ nsid: 9 }, ['nsid', '9']], [{ targetNsid: 9 }, ['target-nsid', '9']]] as const) {
      const error = await nl.nsids.list(filter).catch((e: unknown) => e);
      expect(error).toMatchObject({ code: 'nsid' in filter ? 'ENOENT' : 'EINVAL', syscall: 'netlink' });
      expect(ipNetns(home, 'list-id', ...args).stderr).toContain(`Error: ${(error as { extack: string }).extack}.`);
    }
  });

  it('a second id for a namespace, or an id taken, is EEXIST with the words ip prints', async () => {
    const [home, a, b] = [await namespace(), await namespace(), await namespace()];
    using nl = await openNetlink(home);
    await nl.nsids.set(a, 4);
    for (const [target, id, words] of [[a, 6, 'Peer netns already has a nsid assigned'], [b, 4, 'The specified nsid is already used']] as const) {
      const error = await nl.nsids.set(target, id).catch((e: unknown) => e);
      expect(error).toMatchObject({ code: 'EEXIST', errno: -17, extack: words, message: expect.stringContaining(words) });
      const shown = ipNetns(home, 'set', nsName(target), String(id));
      expect({ status: shown.status, stderr: shown.stderr }).toEqual({ status: 2, stderr: `Error: ${words}.\n` });
    }
    expect(await nl.nsids.get(a)).toBe(4);
    expect(await nl.nsids.get(b)).toBeUndefined();
  });

  it('bad ids, pids and filters are refused before anything is sent', async () => {
    const [home, a] = [await namespace(), await namespace()];
    using nl = await openNetlink(home);
    for (const id of [-1, 2 ** 31, 1.5, Number.NaN, '3', 'AUTO', null]) {
      await expect(nl.nsids.set(a, id as number)).rejects.toMatchObject({ code: ErrorCodes.INVALID_ARG });
    }
    await expect(nl.nsids.set({ pid: 0 }, 1)).rejects.toMatchObject({ code: ErrorCodes.INVALID_ARG });
    await expect(nl.nsids.list({ nsid: -1 })).rejects.toMatchObject({ code: ErrorCodes.INVALID_ARG });
    expect(ipIds(home)).toEqual([]);
  });

  it('a namespace without an id is undefined; a process is named by its pid; a veth assigns one itself', async () => {
    const [home, a] = [await namespace(), await namespace()];
    using nl = await openNetlink(home);
    expect(await nl.nsids.get(a)).toBeUndefined();
    expect(await nl.nsids.get(home)).toBeUndefined(); // no namespace has an id for itself
    expect(await nl.nsids.get({ pid: process.pid })).toBeUndefined();
    const id = await nl.nsids.set({ pid: process.pid }, 'auto');
    expect(await nl.nsids.get('/proc/self/ns/net')).toBe(id);
    expect(ipIds(home)).toEqual([{ nsid: id }]);
    // The kernel names a veth's peer namespace by an id of its own choosing.
    const veth = await nl.links.add({ kind: 'veth', name: 'va', peer: { name: 'vb', netns: a } });
    expect(veth.linkNetnsId).toBeTypeOf('number');
    expect(await nl.nsids.get(a)).toBe(veth.linkNetnsId);
  });

  it('a deleted name is ENOENT, while the NetNS still open has its namespace; a closed one is ERR_NETNS_CLOSED', async () => {
    const [home, a] = [await namespace(), await namespace()];
    using nl = await openNetlink(home);
    const name = nsName(a);
    await NetNS.delete(name);
    await expect(nl.nsids.get(name)).rejects.toMatchObject({ code: 'ENOENT' });
    const id = await nl.nsids.set(a, 'auto');
    expect(await nl.nsids.get(a)).toBe(id);
    expect(await nl.nsids.names([{ name, path: a.path }])).toEqual(new Map());
    a.close();
    await expect(nl.nsids.get(a)).rejects.toMatchObject({ code: ErrorCodes.CLOSED });
    await expect(nl.nsids.set(a, 1)).rejects.toMatchObject({ code: ErrorCodes.CLOSED });
  });

  it('ids are the assigning namespace’s: from inside another (openNetlink(ns)) they are its own', async () => {
    const [home, a, b] = [await namespace(), await namespace(), await namespace()];
    using nl = await openNetlink(home);
    using inA = await openNetlink(a);
    await nl.nsids.set(b, 1);
    expect(ipNetns(a, 'set', nsName(b), '7').status).toBe(0);
    await inA.nsids.set(home, 'auto');
    expect(await inA.nsids.get(b)).toBe(7);
    expect(await nl.nsids.get(b)).toBe(1);
    expect(await inA.nsids.list()).toEqual(ipIds(a));
    expect(await inA.nsids.list()).toEqual([{ nsid: 0 }, { nsid: 7 }]);
    expect(await inA.nsids.names(runDirectory())).toEqual(new Map([[0, nsName(home)], [7, nsName(b)]]));
    expect(ipList(a)).toEqual(expect.arrayContaining([`${nsName(home)} (id: 0)`, `${nsName(b)} (id: 7)`]));
  });
});
