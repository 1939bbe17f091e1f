// `netns sandbox` and spawnSandbox (issue 27): a user without root gets a
// user + mount + network namespace in which it is root, with a /run/netns and
// an /etc/netns of its own, and builds real test networks there; the command's status and
// signals pass through; nothing is left on the host. Run as real root, the
// commands go through `setpriv` to nobody; run inside a user namespace
// already (the suite's rootless run), the suite's user is unprivileged on the
// host as it is, and the sandbox nests.
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NetNS } from '../../dist/index.js';
import { spawnSandbox } from '../../dist/testing.js';
import { CLI_PATH } from '../helpers/cli-path.js';
import { netnsBinDir } from '../helpers/netns-on-path.js';
import { fixture, Lines, recorder, start, watchExit } from '../helpers/exec-cli.js';
import { assertNobodyCanReach } from '../helpers/nobody-access.js';
import { inUserNamespace, privileged } from '../helpers/privileges.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
/** Real root drops to nobody; a user namespace's root is nobody to the host already. */
const unprivileged = inUserNamespace ? [] : ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', '--inh-caps=-all'];
const sandboxArgv = (...command: string[]): string[] => [...unprivileged, process.execPath, CLI_PATH, 'sandbox', '--', ...command];

interface Outcome {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

const binDir = netnsBinDir('nssbx-bin-');

function run(argv: string[], options: { cwd?: string } = {}): Promise<Outcome> {
  return new Promise((resolve) => {
    const env = { ...process.env, PATH: `${binDir}:/usr/sbin:/usr/bin:/sbin:/bin` };
    execFile(argv[0]!, argv.slice(1), { cwd: options.cwd ?? root, encoding: 'utf8', env }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : null) : 0;
      resolve({ code, signal: (error?.signal as NodeJS.Signals | undefined) ?? null, stdout, stderr });
    });
  });
}

/** Runs the shell steps one after another in one sandbox, which must succeed; the output of each, trimmed. */
async function sandboxSteps(steps: string[]): Promise<string[]> {
  const result = await run(sandboxArgv('sh', '-c', steps.join(' && echo -- && ')));
  expect(result.code, result.stderr).toBe(0);
  return result.stdout.split('--\n').map((part) => part.trim());
}

/** What the host would show of a sandbox left behind: named namespaces, links, mounts. */
function hostState(): { netns: string[]; links: string[]; mounts: string } {
  return {
    netns: NetNS.list().map((entry) => entry.name),
    links: readdirSync('/sys/class/net').sort(),
    mounts: readFileSync('/proc/self/mountinfo', 'utf8'),
  };
}

/** Host pids of the `sleep MARKER` processes. */
function sleepers(marker: string): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8') === `sleep\0${marker}\0`;
      } catch {
        return false; // gone meanwhile
      }
    })
    .map(Number);
}

/** The host's lab state files (none when no lab was ever up). */
function labStateFiles(): string[] {
  try {
    return readdirSync('/run/netns-lab');
  } catch {
    return [];
  }
}

describe.skipIf(!privileged)('netns sandbox: rootless namespaces, test networks and commands', () => {
  const hostName = `nssbx-${process.pid}`;
  beforeAll(async () => {
    assertNobodyCanReach(CLI_PATH);
    (await NetNS.create(hostName)).close(); // the sandbox must not see it
  });
  afterAll(async () => {
    await NetNS.delete(hostName).catch(() => {});
    rmSync(binDir, { recursive: true, force: true });
  });

  it('as an unprivileged user, builds a two-host test network, passes TCP traffic and leaves no trace', async () => {
    const before = hostState();
    const result = await run(sandboxArgv(process.execPath, 'examples/readme/rootless.mjs'));
    expect(result, result.stderr).toMatchObject({ code: 0, stdout: 'b received: hello from a, uid 0\n' });
    expect(hostState()).toEqual(before);
  });

  it('is root of its own namespaces inside: lo up, an empty /run/netns, the host\'s other /run entries, a sysfs of its own', async () => {
    const hostRun = readdirSync('/run').filter((name) => !name.startsWith('netns'));
    const [uid, uidMap, lo, netnsCount, sysNet, run_, inode, inner] = await sandboxSteps([
      'id -u',
      'cat /proc/self/uid_map',
      'ip -o link show lo',
      'ls -A /run/netns | wc -l',
      'ls -A /sys/class/net',
      'ls -A /run',
      'stat -L -c %i /proc/self/ns/net',
      'ip netns add inner && ip netns list && ip -n inner -o link show lo',
    ]);
    expect(uid).toBe('0');
    expect(uidMap).toMatch(/^0\s+\d+\s+1$/);
    expect(lo).toMatch(/<LOOPBACK,UP,LOWER_UP>/);
    expect(netnsCount).toBe('0');
    expect(sysNet).toBe('lo');
    expect(run_!.split('\n')).toEqual(expect.arrayContaining([...hostRun, 'netns']));
    expect(Number(inode)).not.toBe(statSync('/proc/self/ns/net').ino);
    expect(inner).toMatch(/^inner\n1: lo: /);
    expect(NetNS.list().map((entry) => entry.name)).not.toContain('inner');
  });

  it("has an /etc of its own: the host's entries, an empty /etc/netns whose files ip netns exec binds, nothing written there reaching the host", async () => {
    const hostFolder = `/etc/netns/${hostName}`; // the host's: the sandbox must not see it
    mkdirSync(hostFolder, { recursive: true });
    try {
      const hostEtc = readdirSync('/etc').filter((name) => name !== 'netns');
      const [etc, netnsCount, hostname, resolved] = await sandboxSteps([
        'ls -A /etc',
        'ls -A /etc/netns | wc -l',
        'cat /etc/hostname',
        'ip netns add inner && mkdir /etc/netns/inner && printf "10.9.8.7 sandboxed-name\\n" > /etc/netns/inner/hosts && ip netns exec inner getent hosts sandboxed-name',
      ]);
      expect(etc!.split('\n')).toEqual(expect.arrayContaining([...hostEtc, 'netns']));
      expect(netnsCount).toBe('0');
      expect(hostname).toBe(readFileSync('/etc/hostname', 'utf8').trim());
      expect(resolved).toMatch(/^10\.9\.8\.7\s+sandboxed-name$/);
      expect(readdirSync('/etc/netns')).not.toContain('inner');
    } finally {
      rmSync(hostFolder, { recursive: true, force: true });
    }
  });

  it('runs the lab CLI as written (examples/readme/lab-cli.sh), and keeps lab state in its own /run/netns-lab by default', async () => {
    const hostLabs = labStateFiles();
    const script = await run(sandboxArgv('bash', '-euo', 'pipefail', 'examples/readme/lab-cli.sh'));
    expect(script.code, script.stderr).toBe(0);
    expect(script.stdout).toContain('dropped: 2 of 20 (10%)');
    const byDefault = await run(sandboxArgv('sh', '-c', 'netns lab up lab.yaml >/dev/null && ls /run/netns-lab && netns lab down demo'), { cwd: join(root, 'examples', 'readme') });
    expect(byDefault.code, byDefault.stderr).toBe(0);
    expect(byDefault.stdout).toMatch(/^demo/m);
    expect(labStateFiles()).toEqual(hostLabs);
  });

  it("builds a lab with names inside; in a user namespace of one's own, where /etc/netns is the real root's, one without names whose nodes are still named as hostnames, and hosts: true says why not", async () => {
    const script = `
      const { createLab } = await import(${JSON.stringify(new URL('../../dist/testing.js', import.meta.url).href)});
      const spec = { prefix: 'nssbxlab-', hosts: { a: {}, b: {} }, links: [['a', 'b']] };
      const lab = await createLab(spec);
      const named = await lab.execFile('a', 'sh', ['-c', 'hostname; getent hosts b || echo no name']);
      console.log(JSON.stringify(named.stdout.replace(/\\s+/g, ' ')));
      await lab.delete();
      await createLab(spec, { hosts: true }).then((lab) => lab.delete().then(() => console.log('built')), (error) => console.log(error.code, error.message));`;
    const node = [process.execPath, '--input-type=module', '-e', script];
    const sandboxed = await run(sandboxArgv(...node));
    expect(sandboxed.code, sandboxed.stderr).toBe(0);
    expect(sandboxed.stdout).toMatch(/^"a [0-9a-f.:]+ b "\nbuilt\n$/);
    // /run writable (a tmpfs), /etc/netns not (the real root's, or read-only as in a container; nested in the suite's
    // own sandbox, where /etc/netns is writable, it is made read-only)
    const ownRun = 'mount -t tmpfs tmpfs /run && mkdir /run/netns && { [ ! -d /etc/netns ] || mount -t tmpfs -o ro tmpfs /etc/netns; } && exec "$@"';
    const own = await run([...unprivileged, 'unshare', '--user', '--map-root-user', '--net', '--mount', 'sh', '-c', ownRun, 'sh', ...node]);
    expect(own.code, own.stderr).toBe(0);
    expect(own.stdout).toMatch(/^"a no name "\nERR_NETNS_FIXTURE mkdir \/etc\/netns\S* failed: (EACCES|EROFS)/);
  });

  it('ends every process left in the sandbox when the command ends, and all of it when the CLI is SIGKILLed', async () => {
    const marker = `${1000 + (process.pid % 1000)}.${Date.now() % 100000}`;
    // the background sleep is running (as /proc shows it) before the command goes on
    const startSleep = `sleep ${marker} & until [ "$(tr '\\0' ' ' < /proc/$!/cmdline)" = "sleep ${marker} " ]; do :; done; echo up`;
    const exited = await run(sandboxArgv('sh', '-c', `${startSleep}; exit 4`));
    expect(exited).toMatchObject({ code: 4, stdout: 'up\n' });
    expect(sleepers(marker)).toEqual([]);
    const started = start([...unprivileged, process.execPath, CLI_PATH, 'sandbox', '--', 'sh', '-c', `${startSleep}; sleep ${marker}`], { cwd: root });
    expect(await started.stdout.next()).toBe('up');
    const [sleeper] = sleepers(marker);
    const { exited: gone } = await watchExit(sleeper!);
    started.child.kill('SIGKILL');
    await gone;
  });

  it('starts in the working directory it was given, or in / when that is a host /run entry the sandbox hides', async () => {
    expect(await run(sandboxArgv('pwd'), { cwd: '/run/lock' })).toMatchObject({ code: 0, stdout: '/run/lock\n' });
    const ours = `/run/netns-nssbx-${process.pid}`; // hidden as the package's own state is
    mkdirSync(ours, { mode: 0o755 });
    try {
      const hidden = await run(sandboxArgv('pwd'), { cwd: ours });
      expect(hidden).toMatchObject({ code: 0, stdout: '/\n' });
      expect(hidden.stderr).toContain(`netns sandbox: ${ours} is the host's and not shown inside; starting in /`);
    } finally {
      rmSync(ours, { recursive: true });
    }
  });

  it('ends with the command\'s exit status, or dies of the signal that killed it', async () => {
    expect(await run(sandboxArgv('sh', '-c', 'exit 7'))).toMatchObject({ code: 7, signal: null });
    expect(await run(sandboxArgv('sh', '-c', 'kill -TERM $$'))).toMatchObject({ code: null, signal: 'SIGTERM' });
  });

  it('passes the signals sent to the CLI on to the command', async () => {
    const started = start([...unprivileged, process.execPath, CLI_PATH, 'sandbox', '--', ...recorder(['SIGTERM', 'SIGUSR1'])], { cwd: root });
    expect(await started.stdout.next()).toMatch(/^ready \d+$/);
    started.child.kill('SIGUSR1');
    expect(await started.stdout.next()).toBe('SIGUSR1');
    started.child.kill('SIGTERM');
    expect(await started.stdout.next()).toBe('SIGTERM');
    started.child.stdin!.end();
    expect(await started.exit).toEqual([7, null]);
  });

  it('names the setting when user namespaces are forbidden (user.max_user_namespaces=0 in the sandbox\'s own user namespace)', async () => {
    const nested = `echo 0 > /proc/sys/user/max_user_namespaces && exec "${process.execPath}" "${CLI_PATH}" sandbox -- true`;
    const result = await run(sandboxArgv('sh', '-c', nested));
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('ERR_NETNS_USERNS_DENIED');
    expect(result.stderr).toContain('sysctl user.max_user_namespaces is 0');
    expect(result.stderr).toContain('while making the sandbox for true');
  });

  // Real root drops to nobody here; a user namespace has no other uid to drop to (the root run covers it).
  it.skipIf(inUserNamespace)('without it, NetNS.create as nobody is EPERM that points to the sandbox and to runDir', async () => {
    const program = `import('${root}dist/index.js').then(({ NetNS }) => NetNS.create('x')).catch((e) => console.log(e.code, e.message))`;
    const result = await run([...unprivileged, process.execPath, '-e', program]);
    expect(result.stdout).toMatch(/^EPERM .*run in `netns sandbox`, or inside your own user namespace pass \{ runDir \}/);
  });

  it('refuses a missing command and bad options', async () => {
    expect(await run([process.execPath, CLI_PATH, 'sandbox'])).toMatchObject({ code: 2 });
    const missing = await run(sandboxArgv('/nonexistent/program'));
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("ENOENT: no such file or directory, spawn /nonexistent/program");
    expect(() => spawnSandbox('')).toThrow(expect.objectContaining({ code: 'ERR_NETNS_INVALID_ARG' }));
    expect(() => spawnSandbox('true', [], { etc: true } as never)).toThrow(expect.objectContaining({ code: 'ERR_NETNS_INVALID_ARG' }));
    expect(() => spawnSandbox('true', [], { uid: 65534 } as never)).toThrow(expect.objectContaining({ code: 'ERR_NETNS_INVALID_ARG' }));
    expect(() => spawnSandbox('true', [], { shell: true } as never)).toThrow(expect.objectContaining({ code: 'ERR_NETNS_INVALID_ARG' }));
    // past their limits, and what plain JavaScript passes
    for (const options of [{ timeout: 2 ** 31 }, { timeout: -1 }, { parentDeathSignal: 'SIGNOPE' }, { parentDeathSignal: 9 }, { stdio: ['pipe', 'pipe', 'pipe', 'pipe'] }, { env: 'PATH=/bin' }]) {
      expect(() => spawnSandbox('true', [], options as never), JSON.stringify(options)).toThrow(expect.objectContaining({ code: 'ERR_NETNS_INVALID_ARG' }));
    }
    expect(() => spawnSandbox('true', ['x', 'y\0'])).toThrow(expect.objectContaining({ code: 'ERR_NETNS_INVALID_ARG', message: expect.stringMatching(/^args\[1\] must not hold a NUL byte/) }));
    expect(() => spawnSandbox('true', [42] as never)).toThrow(expect.objectContaining({ code: 'ERR_NETNS_INVALID_ARG' }));
  });
});

describe.skipIf(!privileged)('spawnSandbox from a multi-threaded process', () => {
  it('starts the command in a sandbox of its own: spawn, output and exit as with child_process.spawn', async () => {
    const child = spawnSandbox('sh', ['-c', 'id -u; stat -L -c %i /proc/self/ns/net'], { stdio: ['ignore', 'pipe', 'inherit'] });
    let stdout = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    await once(child, 'spawn');
    expect(await once(child, 'close')).toEqual([0, null]);
    const [uid, inode] = stdout.trim().split('\n');
    expect(uid).toBe('0');
    expect(Number(inode)).not.toBe(statSync('/proc/self/ns/net').ino);
  });

  it('emits error ENOENT (and close with -errno) for a program that does not exist', async () => {
    const child = spawnSandbox('/nonexistent/program', [], { stdio: 'ignore' });
    const [error] = await once(child, 'error');
    expect(error).toMatchObject({ code: 'ENOENT', syscall: 'spawn /nonexistent/program' });
  });

  it("passes the program's child.kill() on to the command, once", async () => {
    const [command, ...args] = recorder(['SIGUSR1']);
    const child = spawnSandbox(command!, args, { stdio: ['pipe', 'pipe', 'inherit'] });
    const stdout = new Lines(child.stdout!);
    expect(await stdout.next()).toMatch(/^ready \d+$/);
    child.kill('SIGUSR1');
    expect(await stdout.next()).toBe('SIGUSR1');
    child.stdin!.end(); // the recorder exits 7 when its stdin ends
    expect(await once(child, 'exit')).toEqual([7, null]);
    expect((await stdout.rest()).slice(1)).toEqual(['SIGUSR1']); // not a second time through PID 1
  });

  it('takes every process of the sandbox with it when the helper itself is SIGKILLed', async () => {
    const marker = `${2000 + (process.pid % 1000)}.${Date.now() % 100000}`;
    const script = `sleep ${marker} & until [ "$(tr '\\0' ' ' < /proc/$!/cmdline)" = "sleep ${marker} " ]; do :; done; echo up; wait`;
    const child = spawnSandbox('sh', ['-c', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    expect(await new Lines(child.stdout!).next()).toBe('up');
    const [sleeper] = sleepers(marker);
    const { exited } = await watchExit(sleeper!);
    child.kill('SIGKILL');
    expect(await once(child, 'exit')).toEqual([null, 'SIGKILL']);
    await exited;
  });

  it('lets the command die with the parent when asked (parentDeathSignal)', async () => {
    // a parent that spawns the sandbox, prints the command's pid and is then SIGKILLed
    const parent = start([process.execPath, fixture('sandbox-parent.mjs')], { cwd: root });
    const pid = Number(await parent.stdout.next());
    const { exited } = await watchExit(pid);
    parent.child.kill('SIGKILL');
    await parent.exit;
    await exited; // the sandboxed `sleep` would otherwise run on for 1000 s
  });
});
