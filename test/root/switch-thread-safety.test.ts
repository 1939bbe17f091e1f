// The switch's own refusals, asked of the addon directly: the process's main
// thread never switches, and a thread whose restore failed never switches
// again. withNetNS never gets this far on such a thread (its worker ends), so
// only a direct call shows that the addon itself refuses.
import { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NetNS } from '../../dist/index.js';
import { distUrl, runNodeScript } from '../helpers/node-child.js';
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

  it('is refused on the process main thread, which stays at home', async () => {
    // In a child of its own: were the refusal broken, only that process would move.
    const result = await runNodeScript(`
      import { isMainThread } from 'node:worker_threads';
      import { openSync, statSync } from 'node:fs';
      const { native } = await import(${JSON.stringify(distUrl('core/native.js'))});
      const codeOf = (attempt) => { try { attempt(); return 'allowed'; } catch (error) { return error.code; } };
      const home = statSync('/proc/thread-self/ns/net').ino;
      const fd = openSync(${JSON.stringify(target.path)}, 'r');
      const become = codeOf(() => native().becomeSwitchThread());
      const enter = codeOf(() => native().enter(fd));
      console.log(JSON.stringify({ isMainThread, become, enter, home: statSync('/proc/thread-self/ns/net').ino === home }));
    `);
    expect(result, result.stderr).toMatchObject({ code: 0 });
    expect(JSON.parse(result.stdout)).toEqual({ isMainThread: true, become: 'ERR_NETNS_MAIN_THREAD', enter: 'ERR_NETNS_MAIN_THREAD', home: true });
  });

  it('is refused with ERR_NETNS_POISONED, every time, on a thread whose restore failed', async () => {
    const report = await poisonAThread(target.path);
    expect(report.inside).toBe(target.inode);
    expect(report.restore).toBe('EPERM');
    expect(report.enter).toBe('ERR_NETNS_POISONED');
    expect(report.enterAgain).toBe('ERR_NETNS_POISONED');
  });
});
