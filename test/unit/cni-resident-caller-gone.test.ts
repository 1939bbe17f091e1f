// A resident call whose shim goes away before the answer (a runtime that
// timed out, or killed it): an ADD or CHECK is cancelled through its signal,
// with the reason saying so, so that the handler undoes what it made; a DEL
// runs to its end, and close() waits for it. The real shim, killed once the
// handler has started; serveResident in this process, where the mutation
// tool sees it (the root tests run the daemon in a child).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { serveResident, type ResidentServer } from '../../dist/cni/index.js';
import { SHIM } from '../helpers/cni-shim.mjs';

const VERSION = '1.0.0';
const CONFIG = Buffer.from(JSON.stringify({ cniVersion: VERSION, name: 'gone', type: 'gone' }));

function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

describe('a resident call whose shim goes away', () => {
  let dir: string;
  let server: ResidentServer | undefined;
  let started: ReturnType<typeof deferred<AbortSignal>>;
  let finish: ReturnType<typeof deferred<void>>;
  const held = (args: { signal: AbortSignal }) => {
    started.resolve(args.signal);
    return finish.promise;
  };
  const handlers = {
    add: async (args: { signal: AbortSignal }) => {
      await held(args);
      return { cniVersion: VERSION };
    },
    check: held,
    del: held,
  };

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'netns-caller-gone-'));
    started = deferred<AbortSignal>();
    finish = deferred();
    server = await serveResident(handlers as never, { versions: [VERSION] }, { socketPath: join(dir, 'gone.sock'), handleSignals: false });
  });

  afterEach(async () => {
    finish.resolve();
    await server?.close();
    server = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  /** The shim running `command` for one attachment, in this namespace; resolves once it has ended. */
  function viaShim(command: string): { child: ChildProcess; ended: Promise<void> } {
    const env = { NETNS_CNI_SOCKET: server!.socketPath, CNI_COMMAND: command, CNI_CONTAINERID: 'ctr', CNI_IFNAME: 'eth0', CNI_NETNS: '/proc/self/ns/net', CNI_NETNS_OVERRIDE: '1', CNI_PATH: '/nonexistent' };
    const child = spawn(SHIM, [], { env, stdio: ['pipe', 'ignore', 'ignore'] });
    child.stdin!.end(CONFIG);
    return { child, ended: new Promise((resolve) => child.once('close', () => resolve())) };
  }

  for (const command of ['ADD', 'CHECK']) {
    it(`cancels ${command} through its signal, saying the caller went away`, async () => {
      const { child, ended } = viaShim(command);
      const signal = await started.promise;
      expect(signal.aborted).toBe(false);
      child.kill('SIGKILL');
      await ended;
      if (!signal.aborted) await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
      expect(signal.reason).toMatchObject({ code: 999, message: 'cancelled: the caller went away before the answer (the shim gave up or was killed)' });
    });
  }

  it('lets DEL run to its end, and close() waits for it', async () => {
    const { child, ended } = viaShim('DEL');
    const signal = await started.promise;
    child.kill('SIGKILL');
    await ended;
    let closed = false;
    const closing = server!.close().then(() => (closed = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(closed).toBe(false); // the DEL is still running
    expect(signal.aborted).toBe(false);
    finish.resolve();
    await closing;
    expect(signal.aborted).toBe(false);
  });
});
