// A lab outlives no owner: a signal that ends the process deletes it before
// the process dies by that same signal, and what a SIGKILL left is removed by
// the next createLab of the prefix, while a lab whose owner still runs is kept.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { afterAll, describe, expect, it } from 'vitest';
import { createLab } from '../../dist/testing.js';
import { distUrl, packageRoot } from '../helpers/node-child.js';
import { privileged } from '../helpers/privileges.js';

const prefix = `nslabc${randomBytes(2).toString('hex')}-`;
const leftovers = (): string[] => (existsSync('/run/netns') ? readdirSync('/run/netns').filter((name) => name.startsWith(prefix)) : []);
const twoHosts = { prefix, hosts: { a: {}, b: {} }, links: [['a', 'b']] as [string, string][] };

interface LabChild {
  child: ChildProcess;
  names: string[];
  exited: Promise<[number | null, NodeJS.Signals | null]>;
}

/**
 * A node process that builds a lab, prints its namespace names, and then waits
 * to be killed; `before` runs first (a test runner's own signal handler), and
 * `launcher` starts node (unshare, say).
 */
async function labChild(options: Record<string, unknown> = {}, before = '', launcher: string[] = []): Promise<LabChild> {
  const script = `
    ${before}
    const { createLab } = await import(${JSON.stringify(distUrl('testing.js'))});
    const lab = await createLab(${JSON.stringify(twoHosts)}, ${JSON.stringify(options)});
    console.log(JSON.stringify(Object.values(lab.names)));
    setInterval(() => {}, 1 << 30);`;
  const [command, ...args] = [...launcher, process.execPath, '--input-type=module', '-e', script];
  const child = spawn(command!, args, { cwd: packageRoot, stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  const [line] = (await Promise.race([once(createInterface({ input: child.stdout! }), 'line'), exited.then(([code, signal]) => {
    throw new Error(`the lab's child ended before its lab was built (code ${code}, signal ${signal})`);
  })])) as [string];
  return { child, names: JSON.parse(line) as string[], exited };
}

describe.skipIf(!privileged)('a lab whose owner ends', () => {
  afterAll(() => {
    for (const name of leftovers()) execFileSync('ip', ['netns', 'del', name]);
    // The hosts folders of a lab no sweep here may judge (its owner was in another PID namespace).
    for (const name of existsSync('/etc/netns') ? readdirSync('/etc/netns') : []) {
      if (name.startsWith(prefix)) rmSync(`/etc/netns/${name}`, { recursive: true, force: true });
    }
  });

  it.each(['SIGTERM', 'SIGINT', 'SIGHUP'] as const)('is deleted on %s, and its owner dies by that signal', async (signal) => {
    const { child, names, exited } = await labChild();
    expect(leftovers()).toEqual(expect.arrayContaining(names));
    child.kill(signal);
    expect(await exited).toEqual([null, signal]);
    expect(leftovers()).toEqual([]);
  });

  it("leaves a signal to the process's own handler, which decides how it ends; the lab goes when it exits", async () => {
    const { child, exited } = await labChild({}, `process.on('SIGTERM', () => setImmediate(() => process.exit(7)));`);
    child.kill('SIGTERM');
    expect(await exited).toEqual([7, null]);
    expect(leftovers()).toEqual([]);
  });

  it('is left on a signal with deleteOnSignal: false (its owner still dies by the signal)', async () => {
    const { child, names, exited } = await labChild({ deleteOnSignal: false });
    child.kill('SIGTERM');
    expect(await exited).toEqual([null, 'SIGTERM']);
    expect(leftovers().sort()).toEqual([...names].sort());
    for (const name of names) execFileSync('ip', ['netns', 'del', name]);
  });

  it("after a SIGKILL, is removed by the next createLab of its prefix; a live owner's lab is kept", async () => {
    const killed = await labChild();
    const alive = await labChild();
    try {
      killed.child.kill('SIGKILL');
      expect(await killed.exited).toEqual([null, 'SIGKILL']);
      expect(leftovers()).toEqual(expect.arrayContaining(killed.names));
      await using lab = await createLab(twoHosts);
      expect(leftovers().sort()).toEqual([...alive.names, ...Object.values(lab.names)].sort());
    } finally {
      alive.child.kill('SIGTERM');
      await alive.exited;
    }
  });

  it('takes a pid that another process now runs under for a dead owner (the start time differs)', async () => {
    // A live process's pid (this one's parent), with a start time it never had: the owner of that name is long gone.
    const reused = `${prefix}${process.ppid}-t1-abcdef-a`;
    execFileSync('ip', ['netns', 'add', reused]);
    await using lab = await createLab(twoHosts);
    expect(leftovers().sort()).toEqual(Object.values(lab.names).sort());
  });

  it("removes the empty hosts folder of a lab killed between making it and writing its file, and keeps one holding another's file", async () => {
    const emptyDir = `/etc/netns/${prefix}${process.ppid}-t1-abcdef-a`; // a dead owner's (the start time is not its)
    const usersDir = `/etc/netns/${prefix}${process.ppid}-t1-abcdef-b`;
    mkdirSync(emptyDir, { recursive: true });
    mkdirSync(usersDir);
    writeFileSync(`${usersDir}/hosts`, '10.1.2.3 mine\n');
    try {
      await using lab = await createLab({ ...twoHosts, hosts: { a: {} }, links: [] });
      expect(existsSync(emptyDir)).toBe(false);
      expect(readFileSync(`${usersDir}/hosts`, 'utf8')).toBe('10.1.2.3 mine\n');
      expect(Object.keys(lab.names)).toEqual(['a']);
    } finally {
      rmSync(usersDir, { recursive: true, force: true });
      rmSync(emptyDir, { recursive: true, force: true });
    }
  });

  it('never judges an owner in another PID namespace (a container sharing /run/netns): its pid means another process here', async () => {
    // node is pid 1 in there, with /proc its own: here, pid 1 is init, started at another time.
    const other = await labChild({}, '', ['unshare', '--pid', '--fork', '--mount-proc', '--kill-child']);
    try {
      await using lab = await createLab(twoHosts);
      expect(leftovers().sort()).toEqual([...other.names, ...Object.values(lab.names)].sort());
    } finally {
      other.child.kill('SIGKILL'); // unshare ignores SIGTERM while it waits; --kill-child ends node with it
      await other.exited;
    }
  });
});
