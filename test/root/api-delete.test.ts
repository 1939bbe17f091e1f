// ns.delete(): removes the handle's own name from its run directory (as
// `ip netns del`), then closes the handle; refused when the handle has no name.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { NetNS, NetnsError } from '../../dist/index.js';
import { privileged } from '../helpers/privileges.js';
import { fdCountOf } from '../helpers/process-state.js';
import { nsName, scratchNamespaces } from '../helpers/scratch-namespaces.js';
import { scratchRunDir, type ScratchRunDir } from '../helpers/scratch-run-dir.js';

const ipNetnsList = (): string[] =>
  execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' })
    .split('\n')
    .map((line) => line.split(' ')[0]!)
    .filter(Boolean);

describe.skipIf(!privileged)('ns.delete()', () => {
  const scratch = scratchNamespaces('apidel-');
  let runDir: ScratchRunDir | undefined;

  afterEach(async () => {
    await scratch.removeAll();
    await runDir?.remove();
    runDir = undefined;
  });

  it('removes the name from /run/netns and from ip netns list, then closes the handle', async () => {
    const ns = await scratch.create();
    const name = nsName(ns);
    expect(ipNetnsList()).toContain(name);
    await ns.delete();
    expect(existsSync(`/run/netns/${name}`)).toBe(false);
    expect(ipNetnsList()).not.toContain(name);
    expect(ns.closed).toBe(true);
  });

  it('deletes a handle opened by name, and leaves other handles of the namespace working', async () => {
    const made = await scratch.create();
    const name = nsName(made);
    const opened = NetNS.open(name);
    await opened.delete();
    expect(opened.closed).toBe(true);
    expect(existsSync(`/run/netns/${name}`)).toBe(false);
    // the namespace lives on through the other handle
    expect((await made.readFile('/proc/net/dev')).toString()).toContain('lo:');
  });

  it('works in a run directory of its own', async () => {
    runDir = scratchRunDir('apidel-');
    const ns = await NetNS.create('one', { runDir: runDir.dir });
    await ns.delete();
    expect(existsSync(`${runDir.dir}/one`)).toBe(false);
    expect(NetNS.list({ runDir: runDir.dir })).toEqual([]);
    expect(ns.closed).toBe(true);
  });

  it('refuses a handle with no name (fromPid, current, anonymous) and leaves it open', async () => {
    const anonymous = await NetNS.create();
    try {
      for (const ns of [NetNS.fromPid(process.pid), NetNS.current(), anonymous]) {
        const refusal = await ns.delete().then(() => null, (error: unknown) => error);
        expect(refusal).toBeInstanceOf(NetnsError);
        expect(refusal).toMatchObject({ code: 'ERR_NETNS_NOT_NAMED' });
        expect(ns.closed).toBe(false);
        if (ns !== anonymous) ns.close();
      }
    } finally {
      anonymous.close();
    }
  });

  it('refuses when the name now holds another namespace, removing nothing', async () => {
    const ns = await scratch.create();
    const name = nsName(ns);
    await NetNS.delete(name);
    const again = await NetNS.create(name);
    try {
      await expect(ns.delete()).rejects.toMatchObject({ code: 'ERR_NETNS_NAME_REPLACED' });
      expect(ns.closed).toBe(false);
      expect(ipNetnsList()).toContain(name);
    } finally {
      ns.close();
      again.close();
      await NetNS.delete(name);
    }
  });

  it('says ENOENT when the name is already gone, closing the handle (its delete is done), and ERR_NETNS_CLOSED after', async () => {
    const ns = await scratch.create();
    await NetNS.delete(nsName(ns));
    await expect(ns.delete()).rejects.toMatchObject({ code: 'ENOENT' });
    expect(ns.closed).toBe(true);
    await expect(ns.delete()).rejects.toMatchObject({ code: 'ERR_NETNS_CLOSED' });
  });

  it('two handles deleting one name at once: one wins, the other says ENOENT, and no descriptor is left open', async () => {
    const first = await scratch.create();
    const second = NetNS.open(nsName(first));
    const inode = first.inode;
    const outcomes = await Promise.allSettled([first.delete(), second.delete()]);
    expect(outcomes.map((outcome) => outcome.status).sort()).toEqual(['fulfilled', 'rejected']);
    expect(outcomes.find((outcome) => outcome.status === 'rejected')).toMatchObject({ reason: { code: 'ENOENT' } });
    expect([first.closed, second.closed]).toEqual([true, true]);
    expect(fdCountOf(`net:[${inode}]`)).toBe(0);
  });

  it('equals refuses what is not a handle or { dev, inode } with a coded error', async () => {
    const ns = await scratch.create();
    for (const other of [undefined, null, 42]) expect(() => ns.equals(other as never)).toThrow(expect.objectContaining({ code: 'ERR_NETNS_INVALID_ARG' }));
  });
});
