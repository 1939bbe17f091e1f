// The switch's own refusals, asked of the addon directly: the process's main
// thread never switches, and a thread whose restore failed never switches
// again. withNetNS never gets this far on such a thread (its worker ends), so
// only a direct call shows that the addon itself refuses.
import { openSync, closeSync, statSync } from 'node:fs';
import { isMainThread, Worker } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { native } from '../../dist/core/native.js';
import { NetNS } from '../../dist/index.js';
import { distUrl } from '../helpers/node-child.js';
import { privileged } from '../helpers/privileges.js';
import { scratchNamespaces } from '../helpers/scratch-namespaces.js';

const CAP_SYS_ADMIN = 21;

interface PoisonedThreadReport {
  inside: number;
  restore: string | null;
  enter: string;
  enterAgain: string;
}

/**
 * In a Worker of its own: switch into `target`, drop CAP_SYS_ADMIN so that
 * the restore fails for real, then try to switch again. The Worker's thread
 * ends with the Worker, wherever it is.
 */
function poisonAThread(target: string): Promise<PoisonedThreadReport> {
  const source = `
    const { parentPort, workerData } = require('node:worker_threads');
    const fs = require('node:fs');
    const codeOf = (attempt) => { try { attempt(); return 'entered'; } catch (error) { return error.code; } };
    import(workerData.nativeUrl).then(({ native }) => {
      const addon = native();
      addon.becomeSwitchThread();
      const fd = fs.openSync(workerData.target, 'r');
      addon.enter(fd);
      const inside = fs.statSync('/proc/thread-self/ns/net').ino;
      addon.dropEffectiveCapability(${CAP_SYS_ADMIN});
      const failed = addon.restore();
      parentPort.postMessage({
        inside,
        restore: failed && failed.code,
        enter: codeOf(() => addon.enter(fd)),
        enterAgain: codeOf(() => addon.enter(fd)),
      });
    });
  `;
  const worker = new Worker(source, { eval: true, workerData: { target, nativeUrl: distUrl('core/native.js') } });
  return new Promise<PoisonedThreadReport>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`the worker exited (${code}) before reporting`)));
  }).finally(() => worker.terminate());
}

describe.skipIf(!privileged)('the namespace switch', () => {
  const scratch = scratchNamespaces('nsswt');
  let target: NetNS;

  beforeAll(async () => {
    target = await scratch.create();
  });

  afterAll(() => scratch.removeAll());

  it('is refused on the process main thread, which stays at home', () => {
    expect(isMainThread).toBe(true); // vitest's forks pool runs this file on a process's main thread
    const home = statSync('/proc/thread-self/ns/net').ino;
    const fd = openSync(target.path, 'r');
    try {
      expect(() => native().becomeSwitchThread()).toThrow(expect.objectContaining({ code: 'ERR_NETNS_MAIN_THREAD' }));
      expect(() => native().enter(fd)).toThrow(expect.objectContaining({ code: 'ERR_NETNS_MAIN_THREAD' }));
      expect(statSync('/proc/thread-self/ns/net').ino).toBe(home);
    } finally {
      closeSync(fd);
    }
  });

  it('is refused with ERR_NETNS_POISONED, every time, on a thread whose restore failed', async () => {
    const report = await poisonAThread(target.path);
    expect(report.inside).toBe(target.inode);
    expect(report.restore).toBe('EPERM');
    expect(report.enter).toBe('ERR_NETNS_POISONED');
    expect(report.enterAgain).toBe('ERR_NETNS_POISONED');
  });
});
