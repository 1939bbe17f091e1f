// The addon starts its I/O threads on demand. When the kernel refuses a new
// thread (here: a cgroup v1 pids limit the child process is already at, a real
// and passing condition), an I/O call must reject with the cause, not abort the
// process or hang, and the process must still exit by itself; once the limit
// is raised, the next call starts a thread and succeeds.
//
// Assumption: this machine, and CI (which runs this suite as root on a machine
// like it), has the cgroup v1 pids controller mounted at /sys/fs/cgroup/pids.
// Without it this test FAILS; it skips only in a user namespace (a rootless
// sandbox), which has a sysfs of its own without the controller, and could not
// make a cgroup in the real root's hierarchy anyway.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmdirSync, writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { distUrl, packageRoot } from '../helpers/node-child.js';
import { inUserNamespace, privileged } from '../helpers/privileges.js';

const PIDS = '/sys/fs/cgroup/pids';

// The child says `ready` once Node's own threads exist (libuv's threadpool is
// started on purpose), then makes one call per line it reads: the outcome of
// each on a line of its own. After the second it stops reading and should exit.
const script = `
  import { readFile } from 'node:fs/promises';
  import { createInterface } from 'node:readline';
  const { NetNS, ioStats } = await import(${JSON.stringify(distUrl('index.js'))});
  await readFile('/proc/self/stat');  // starts libuv's threadpool now, not under the limit
  const ns = NetNS.open('/proc/self/ns/net');
  const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
  console.log('ready');
  for (let i = 0; i < 2; i++) {
    await lines.next();
    const outcome = await ns.readFile('/proc/thread-self/net/dev').then(
      (data) => ({ resolved: data.includes('lo:') }),
      (e) => ({ code: e.code, syscall: e.syscall }));
    console.log(JSON.stringify({ outcome, stats: ioStats() }));
  }
  process.stdin.destroy();
  ns.close();
`;

describe.skipIf(!privileged)('I/O threads at a thread limit', () => {
  it.skipIf(inUserNamespace)('rejects with EAGAIN from pthread_create, keeps the process alive and exiting, and recovers when the limit rises', async () => {
    expect(existsSync(`${PIDS}/cgroup.procs`), `cgroup v1 pids controller at ${PIDS} (see the assumption above)`).toBe(true);

    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { cwd: packageRoot, stdio: ['pipe', 'pipe', 'pipe'] });
    const pid = child.pid!;
    const group = `${PIDS}/nsnat-${pid}`;
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
      child.on('exit', (code, signal) => resolve({ code, signal })),
    );
    const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
    // the next line of output, or why there is none (the child died, e.g. SIGABRT)
    const nextLine = async (): Promise<string> => {
      const line = await Promise.race([
        lines.next().then((r) => (r.done ? null : r.value)),
        exited.then(() => null),
        new Promise<null>((resolve) => setTimeout(() => resolve(null), 10_000).unref()),
      ]);
      if (line !== null) return line;
      const exit = await Promise.race([exited, new Promise((resolve) => setTimeout(() => resolve('running'), 2_000).unref())]);
      throw new Error(`child gave no line: ${JSON.stringify({ exit, stderr })}`);
    };
    let movedIn = false;
    try {
      expect(await nextLine()).toBe('ready');
      const threads = readdirSync(`/proc/${pid}/task`).length;
      mkdirSync(group);
      writeFileSync(`${group}/pids.max`, String(threads));
      writeFileSync(`${group}/cgroup.procs`, String(pid));
      movedIn = true;

      child.stdin.write('call\n');
      expect(JSON.parse(await nextLine())).toEqual({
        outcome: { code: 'EAGAIN', syscall: 'pthread_create' },
        stats: { threadsCreated: 0, threadsDiscarded: 0 },
      });
      expect([child.exitCode, child.signalCode], 'the child is still running').toEqual([null, null]);

      writeFileSync(`${group}/pids.max`, String(threads + 1));
      child.stdin.write('call\n');
      expect(JSON.parse(await nextLine())).toEqual({
        outcome: { resolved: true },
        stats: { threadsCreated: 1, threadsDiscarded: 0 },
      });
      const exit = await Promise.race([exited, new Promise((resolve) => setTimeout(() => resolve('still running'), 10_000).unref())]);
      expect(exit, stderr).toEqual({ code: 0, signal: null });
    } finally {
      if (child.exitCode === null && child.signalCode === null) {
        try {
          if (movedIn) writeFileSync(`${PIDS}/cgroup.procs`, String(pid)); // out of the group
        } finally {
          child.kill('SIGKILL');
        }
        await exited;
      }
      if (existsSync(group)) rmdirSync(group);
    }
  });
});
