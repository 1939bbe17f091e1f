// An I/O thread first opens its own namespace as home. When it cannot (here:
// the process's descriptor table is full, a real and passing condition), it
// must fail the job it was started for with the cause, leave, and be replaced:
// the next job, once descriptors are free again, succeeds.
import { describe, expect, it } from 'vitest';
import { distUrl, runNodeScript } from '../helpers/node-child.js';
import { privileged } from '../helpers/privileges.js';

const AF_INET = 2;
const SOCK_DGRAM = 2;

describe.skipIf(!privileged)('I/O thread start-up', () => {
  it('fails one job with the cause when a thread cannot open its home, then replaces the thread', async () => {
    // A low descriptor limit (prlimit) only keeps filling the table quick.
    const result = await runNodeScript(
      `
      import { closeSync, openSync } from 'node:fs';
      const { native } = await import(${JSON.stringify(distUrl('core/native.js'))});
      const { fd } = native().openNetns('/proc/self/ns/net');
      const fillers = [];
      try { for (;;) fillers.push(openSync('/dev/null', 'r')); } catch (e) { if (e.code !== 'EMFILE') throw e; }
      closeSync(fillers.pop()); // room for the job's own copy of the namespace fd, none for the thread's home
      const first = await native().ioSocket(fd, ${AF_INET}, ${SOCK_DGRAM}, 0).then(
        () => 'resolved', (e) => ({ code: e.code, syscall: e.syscall }));
      for (const filler of fillers) closeSync(filler);
      const second = await native().ioSocket(fd, ${AF_INET}, ${SOCK_DGRAM}, 0).then(
        (socket) => { native().closeFd(socket); return 'resolved'; }, (e) => ({ code: e.code }));
      console.log(JSON.stringify({ first, second, stats: native().ioStats() }));
      `,
      { prefix: ['prlimit', '--nofile=256:256'] },
    );
    expect(result).toMatchObject({ code: 0, signal: null });
    expect(JSON.parse(result.stdout)).toEqual({
      first: { code: 'EMFILE', syscall: 'open' },
      second: 'resolved',
      stats: { threadsCreated: 2, threadsDiscarded: 0 },
    });
  });
});
