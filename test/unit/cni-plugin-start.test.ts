// How a delegate is started (the addon's runProgram, not node:child_process):
// with Debian's real host-local, and with sh plugins where a case needs a
// plugin that misbehaves. What a plugin relies on: its stdin arrives whole,
// both outputs come back whole however large, an error object on stdout is
// read as the delegate's own error, a binary being replaced is retried, and
// the delegate gets no descriptor of ours and no signal Node ignores, and an
// aborted call's delegate is killed.
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, copyFileSync, existsSync, mkdtempSync, openSync, readdirSync, readFileSync, readlinkSync, rmSync, watch, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { delegateAdd, execPlugin } from '../../dist/cni/index.js';
import { runPlugin } from '../../dist/cni/invoke.js';
import { openFdCount } from '../helpers/process-state.js';

const HOST_LOCAL = '/usr/lib/cni/host-local';
const haveHostLocal = existsSync(HOST_LOCAL);
if (!haveHostLocal && process.env.CI) throw new Error('CI must install containernetworking-plugins (host-local in /usr/lib/cni)');

const dir = mkdtempSync(join(tmpdir(), 'cni-plugin-start-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function plugin(name: string, body: string): string {
  const path = join(dir, name);
  writeFileSync(path, `#!/bin/sh\n${body}\n`, { mode: 0o755 });
  return path;
}

/** host-local's environment: it reads nothing but these (no namespace is touched by IPAM). */
const ipamEnv = (command: string): NodeJS.ProcessEnv => ({ PATH: process.env.PATH, CNI_COMMAND: command, CNI_CONTAINERID: 'c-start', CNI_NETNS: '/proc/self/ns/net', CNI_IFNAME: 'eth0', CNI_PATH: '/usr/lib/cni' });
const ipamConfig = (ipam: object): string => JSON.stringify({ cniVersion: '1.0.0', name: 'net-start', type: 'ptp', ipam: { type: 'host-local', dataDir: join(dir, 'host-local'), ...ipam } });

describe.skipIf(!haveHostLocal)('delegating to the real host-local', () => {
  it('gets its result for ADD, and the address back for DEL', async () => {
    const config = ipamConfig({ subnet: '10.77.0.0/24' });
    const result = JSON.parse((await execPlugin(HOST_LOCAL, config, ipamEnv('ADD'))).toString()) as { ips: { address: string }[] };
    expect(result.ips).toEqual([expect.objectContaining({ address: '10.77.0.2/24', gateway: '10.77.0.1' })]);
    expect(readdirSync(join(dir, 'host-local', 'net-start'))).toContain('10.77.0.2');
    await execPlugin(HOST_LOCAL, config, ipamEnv('DEL'));
    expect(readdirSync(join(dir, 'host-local', 'net-start'))).not.toContain('10.77.0.2');
  });

  it("reads the error object it prints on stdout as its own code and message", async () => {
    await expect(execPlugin(HOST_LOCAL, ipamConfig({ subnet: 'not-a-subnet' }), ipamEnv('ADD'))).rejects.toMatchObject({
      code: expect.any(Number),
      message: expect.stringContaining('not-a-subnet'),
    });
  });

  it('retries it while its binary is busy being written (ETXTBSY), then runs it', async () => {
    const copy = join(dir, 'host-local-copy');
    copyFileSync(HOST_LOCAL, copy);
    const writer = openSync(copy, 'r+');
    const env = { ...ipamEnv('VERSION'), CNI_NETNS: 'x', CNI_IFNAME: 'x' };
    const running = execPlugin(copy, '{"cniVersion":"1.0.0"}', env); // the first attempt fails now
    closeSync(writer);
    expect(JSON.parse((await running).toString())).toMatchObject({ supportedVersions: expect.arrayContaining(['1.0.0']) });
  });
});

describe('the delegate process', () => {
  it('gets its whole stdin and gives back whole outputs larger than a pipe holds, read at once', async () => {
    const input = JSON.stringify({ cniVersion: '1.0.0', pad: 'x'.repeat(3_000_000) });
    // Writes 2 MB to each output before reading anything: with either pipe left unread, it would stall.
    const path = plugin('big', 'head -c 2000000 /dev/zero | tr "\\0" e >&2\nhead -c 2000000 /dev/zero | tr "\\0" o\ncat > "$0.stdin"');
    const exit = await runPlugin(path, input, { PATH: process.env.PATH });
    expect(exit).toMatchObject({ code: 0, signal: null });
    expect([exit.stdout.length, exit.stderr.length]).toEqual([2_000_000, 2_000_000]);
    expect(exit.stdout.every((byte) => byte === 0x6f) && exit.stderr.every((byte) => byte === 0x65)).toBe(true);
    expect(readFileSync(`${path}.stdin`, 'utf8')).toBe(input);
  });

  it('passes on a failed plugin with 2 MB of stderr as a code 999 naming it', async () => {
    const path = plugin('loud', 'head -c 2000000 /dev/zero | tr "\\0" e >&2\nexit 5');
    await expect(execPlugin(path, '{}', { PATH: process.env.PATH })).rejects.toMatchObject({ code: 999, message: expect.stringContaining('exit status 5') });
  });

  it('says which signal killed it', async () => {
    const path = plugin('killed', 'kill -TERM $$');
    await expect(execPlugin(path, '{}', { PATH: process.env.PATH })).rejects.toMatchObject({ code: 999, message: expect.stringContaining('killed by SIGTERM') });
  });

  it('is killed when the call\'s signal aborts, and never started once it has: the call rejects with the reason', async () => {
    // It says it started, then blocks on a FIFO nobody writes: only the kill ends it.
    const entered = join(dir, 'blocked.entered');
    const fifo = join(dir, 'blocked.fifo');
    execFileSync('mkfifo', [entered, fifo]);
    const path = plugin('blocked', `echo "$$" > ${entered}\nread line < ${fifo}`);
    const controller = new AbortController();
    const reason = new Error('abandoned');
    const running = execPlugin(path, '{}', { PATH: process.env.PATH }, controller.signal);
    const pid = Number(readFileSync(entered, 'utf8')); // opening a FIFO waits for its writer: the plugin is running
    controller.abort(reason);
    await expect(running).rejects.toBe(reason);
    expect(existsSync(`/proc/${pid}`)).toBe(false); // reaped: killed, not left running
    const marker = join(dir, 'started-after-abort');
    await expect(execPlugin(plugin('late', `touch ${marker}`), '{}', {}, controller.signal)).rejects.toBe(reason);
    expect(existsSync(marker)).toBe(false);
  });

  it('gets exactly the environment given, and no signal blocked or ignored but glibc\'s own', async () => {
    // exec: grep reads its own status with the mask the shell was given (dash blocks every signal
    // while it waits for a child, so reading the waiting shell's status races with that).
    const path = plugin('inspect', 'env\nexec grep -E "^Sig(Ign|Blk)" /proc/self/status');
    const out = (await execPlugin(path, '{}', { ONLY: 'this' })).toString().split('\n');
    // dash adds PWD of its own accord.
    expect(out.filter((line) => /^[A-Za-z_]+=/.test(line) && !line.startsWith('PWD='))).toEqual(['ONLY=this']);
    // Node ignores SIGPIPE and SIGXFSZ. glibc's posix_spawn leaves its own two signals (32, 33) ignored
    // in the child; every program linked with glibc sets them up again at start, Go's runtime too.
    const mask = (name: string): bigint => BigInt(`0x${out.find((line) => line.startsWith(`${name}:`))!.split('\t')[1]!}`);
    expect(mask('SigIgn') & ~0x180000000n).toBe(0n);
    expect(mask('SigBlk')).toBe(0n);
  });

  it('gets no descriptor of ours but its three pipes, and leaves none open here', async () => {
    const link = /(\d+) -> (.*)$/;
    const before = new Set(readdirSync('/proc/self/fd').map((fd) => { try { return readlinkSync(`/proc/self/fd/${fd}`); } catch { return ''; } }));
    const count = openFdCount();
    const listing = (await execPlugin(plugin('fds', 'exec ls -l /proc/self/fd'), '{}', {})).toString();
    const held = listing.split('\n').flatMap((line) => { const m = link.exec(line); return m ? [[Number(m[1]), m[2]!] as const] : []; });
    expect(held.filter(([fd]) => fd <= 2).map(([, target]) => target.replace(/\d+/, 'N'))).toEqual(['pipe:[N]', 'pipe:[N]', 'pipe:[N]']);
    // Beyond 0-2: ls's own directory, and what this process inherited without close-on-exec (none of ours).
    expect(held.filter(([fd, target]) => fd > 2 && !target.startsWith('/proc/') && !before.has(target))).toEqual([]);
    expect(openFdCount()).toBe(count);
  });
});

// A runtime's deadline SIGKILLs the plugin, where no code of ours runs: its
// delegate must not live on (an abandoned ADD's IPAM allocating after DEL).
describe('a delegate of a plugin that is killed', () => {
  it('dies with the plugin (PR_SET_PDEATHSIG)', async () => {
    const pidFile = join(dir, 'delegate.pid');
    const delegate = plugin('lingers', `echo $$ > ${pidFile}.tmp && mv ${pidFile}.tmp ${pidFile}; exec sleep 1000`);
    const script = `const { execPlugin } = await import(${JSON.stringify(new URL('../../dist/cni/index.js', import.meta.url).href)});
      await execPlugin(${JSON.stringify(delegate)}, '{}', { PATH: process.env.PATH });`;
    const pluginProcess = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: 'ignore' });
    const watcher = watch(dir);
    try {
      if (!existsSync(pidFile)) await new Promise((resolve) => watcher.on('change', (_, name) => name === 'delegate.pid' && resolve(undefined)));
    } finally {
      watcher.close();
    }
    const pid = Number(readFileSync(pidFile, 'utf8'));
    pluginProcess.kill('SIGKILL');
    await once(pluginProcess, 'close');
    try {
      // reparented and reaped by init: gone, however long that takes (a delegate that lives on fails by the test's timeout)
      while (existsSync(`/proc/${pid}`) && !readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z ')) await new Promise(setImmediate);
    } finally {
      if (existsSync(`/proc/${pid}/stat`) && readFileSync(`/proc/${pid}/stat`, 'utf8').includes('(sleep)')) process.kill(pid, 'SIGKILL');
    }
  });
});

// delegateAdd is what the example's ADD calls: the same start, through CNI_PATH.
describe.skipIf(!haveHostLocal)('delegateAdd', () => {
  it("reads host-local's result", async () => {
    const saved = { ...process.env };
    Object.assign(process.env, ipamEnv('ADD'));
    try {
      const result = await delegateAdd('host-local', ipamConfig({ subnet: '10.78.0.0/24' }));
      expect(result.ips).toEqual([expect.objectContaining({ address: '10.78.0.2/24' })]);
    } finally {
      process.env = saved;
    }
  });
});

describe('what the addon cannot pass to execve', () => {
  // A NUL cuts a C string: '/bin/sh\0x' ran /bin/sh, a value lost its tail; '=' in a name makes another variable.
  it('refuses a NUL in the path, or in a variable, and = in a name, before starting anything (ERR_NETNS_INVALID_ARG, naming why, as child_process refuses them)', async () => {
    const marker = join(dir, 'started');
    const path = plugin('marks', `touch ${marker}`);
    for (const [file, env] of [[`${path}\0x`, {}], [path, { A: 'x\0y' }], [path, { 'A=B': 'c' }], [path, { '': 'c' }]] as const) {
      await expect(execPlugin(file, '{}', { PATH: process.env.PATH, ...env })).rejects.toMatchObject({ code: 'ERR_NETNS_INVALID_ARG', message: expect.stringMatching(/cannot hold/) });
    }
    expect(existsSync(marker)).toBe(false);
  });
});
