// Whether a thread is switched is a property of the OS thread. A second copy
// of the addon (the same .node file loaded from another path is a separate
// addon instance) used inside withNetNS's fn does not know that the pool
// worker switched its thread, yet must not start an I/O thread there: it
// would inherit the target namespace as its home.
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closePool, NetNS, poolIdle, withNetNS } from '../../dist/index.js';
import { packageRoot } from '../helpers/node-child.js';
import { inodeOf, threadsAwayFrom } from '../helpers/process-state.js';
import { privileged } from '../helpers/privileges.js';

const home = inodeOf('/proc/thread-self/ns/net');
const name = `nsnat-copy-${process.pid}`;
const addonPath = process.env.NETNS_ADDON_PATH ?? `${packageRoot}build/Release/netns.node`;

describe.skipIf(!privileged)('a second copy of the addon', () => {
  let target: NetNS | undefined;
  let dir: string | undefined;

  beforeAll(async () => {
    target = await NetNS.create(name);
    dir = mkdtempSync('/tmp/nsnat-copy-');
    copyFileSync(addonPath, `${dir}/netns.node`);
  });

  afterAll(async () => {
    await closePool(); // unloads the copy with the worker that loaded it
    target?.close();
    if (NetNS.list().some((entry) => entry.name === name)) await NetNS.delete(name);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('refuses I/O on a thread withNetNS switched, and starts no thread there', async () => {
    const seen = await withNetNS(
      target!,
      async (copyPath: string, nsPath: string) => {
        const module = { exports: {} as Record<string, (...args: unknown[]) => any> };
        process.dlopen(module, copyPath);
        const copy = module.exports;
        const { fd } = copy.openNetns!(nsPath);
        let outcome: string;
        try {
          const socket = await copy.ioSocket!(fd, 2, 2, 0);
          copy.closeFd!(socket);
          outcome = 'a socket';
        } catch (error) {
          outcome = (error as { code: string }).code;
        }
        copy.closeFd!(fd);
        return { outcome, stats: copy.ioStats!() };
      },
      `${dir}/netns.node`,
      target!.path,
    );
    expect(seen).toEqual({ outcome: 'ERR_NETNS_SWITCHED_THREAD', stats: { threadsCreated: 0, threadsDiscarded: 0 } });
    await poolIdle();
    expect(threadsAwayFrom(home)).toEqual([]);
  });
});
