// Work the addon runs on a thread of its own (a link made or deleted, a
// delegate program) may outlive the Worker that started it: terminated, or
// ending by process.exit, mid-call. The process must go on: before, the thread
// called the Worker's freed thread-safe function (SIGABRT), or ran the addon's
// code after the Worker's teardown had unloaded it (SIGSEGV). Each case runs
// in a node process of its own, which must end by itself with code 0.
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { NetNS } from '../../dist/index.js';
import { distUrl, runNodeScript } from '../helpers/node-child.js';
import { privileged } from '../helpers/privileges.js';

const tag = randomBytes(3).toString('hex');

describe.skipIf(!privileged)('threads of the addon outliving the Worker that started them', () => {
  // A child that crashed (the old addon) never reached its own cleanup.
  afterAll(async () => {
    if ((await NetNS.list()).some((ns) => ns.name === `otw-${tag}`)) await NetNS.delete(`otw-${tag}`);
  });

  it('Workers ended (terminated, or by process.exit) while deleting a veth: the process goes on, and the links are gone', async () => {
    const script = `
      import { Worker } from 'node:worker_threads';
      import { NetNS } from ${JSON.stringify(distUrl('index.js'))};
      const ns = await NetNS.create('otw-${tag}');
      try {
        for (let i = 0; i < 6; i++) {
          const exits = i % 2 === 1;
          const worker = new Worker(\`
            import { parentPort, workerData } from 'node:worker_threads';
            const { openNetlink } = await import(\${JSON.stringify(${JSON.stringify(distUrl('netlink/index.js'))})});
            const nl = await openNetlink(workerData);
            await nl.links.add({ name: 'w\${i}', kind: 'veth', peer: { name: 'p\${i}' } });
            void nl.links.delete('w\${i}');
            parentPort.postMessage('deleting');
            if (\${exits}) process.exit(0);\`, { eval: true, workerData: ns.path });
          // Listening for the exit first: a Worker that exits with its message still queued emits both in one go.
          const exited = new Promise((resolve) => worker.once('exit', resolve));
          await new Promise((resolve) => worker.once('message', resolve));
          if (exits) await exited;
          else await worker.terminate();
        }
        // A deletion the Worker left running still ends: its link goes (the kernel finishes it).
        const { stdout } = await ns.execFile('ip', ['-o', 'link', 'show', 'type', 'veth']);
        console.log(JSON.stringify({ veths: stdout.trim() }));
      } finally {
        await ns.delete();
      }`;
    const run = await runNodeScript(script);
    expect(run, run.stderr).toMatchObject({ code: 0, signal: null });
    expect(JSON.parse(run.stdout)).toEqual({ veths: '' });
  });

  it('a Worker, the only one to load the addon, terminated while its delegate runs: the process goes on', async () => {
    const script = `
      import { Worker } from 'node:worker_threads';
      import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
      import { join } from 'node:path';
      import { tmpdir } from 'node:os';
      const dir = mkdtempSync(join(tmpdir(), 'netns-otw-'));
      const plugin = join(dir, 'slow');
      writeFileSync(plugin, '#!/bin/sh\\nsleep 0.3\\necho "{}"\\n', { mode: 0o755 });
      try {
        for (let i = 0; i < 4; i++) {
          const worker = new Worker(\`
            import { parentPort } from 'node:worker_threads';
            const { execPlugin } = await import(\${JSON.stringify(${JSON.stringify(distUrl('cni/index.js'))})});
            execPlugin(\${JSON.stringify(plugin)}, '{}', { PATH: process.env.PATH }).catch(() => {});
            parentPort.postMessage('running');\`, { eval: true });
          await new Promise((resolve) => worker.once('message', resolve));
          await worker.terminate();
        }
        // The delegates' threads end after their Workers: nothing of theirs may run unmapped then.
        await new Promise((resolve) => setTimeout(resolve, 600));
        console.log('alive');
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }`;
    const run = await runNodeScript(script);
    expect(run, run.stderr).toMatchObject({ code: 0, signal: null, stdout: 'alive\n' });
  });
});
