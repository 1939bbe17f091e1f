// createTestNetwork, createLab and sweep with a run directory of the caller's
// own ({ runDir }): every namespace they make, find and delete is named there,
// none in /run/netns. And what that is for: a user who is root only in a user
// namespace (nobody under `unshare -Urn --mount`, /run not writable) builds a
// network, carries TCP over it and leaves nothing behind.
import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { NetNS } from '../../dist/index.js';
import { createLab, createTestNetwork, Lab, sweep } from '../../dist/testing.js';
import { assertNobodyCanReach } from '../helpers/nobody-access.js';
import { inUserNamespace, privileged } from '../helpers/privileges.js';
import { scratchRunDir, type ScratchRunDir } from '../helpers/scratch-run-dir.js';
import { tcpHello } from '../helpers/tcp-hello.js';

const prefix = `nsrund${randomBytes(2).toString('hex')}-`;
const testing = fileURLToPath(new URL('../../dist/testing.js', import.meta.url));
const inRunNetns = (): string[] => (existsSync('/run/netns') ? readdirSync('/run/netns').filter((name) => name.startsWith(prefix)) : []);
const invalidArg = expect.objectContaining({ code: 'ERR_NETNS_INVALID_ARG' });
const twoHosts = { prefix, hosts: { a: { addr: '10.61.0.1/24' }, b: { addr: '10.61.0.2/24' } }, links: [['a', 'b']] as [['a', 'b']] };

let scratches: ScratchRunDir[] = [];
function scratch(): string {
  const made = scratchRunDir(`${prefix}dir-`);
  scratches.push(made);
  return made.dir;
}

/** Runs a node script (as root) to its end; resolves with its exit code and output. */
function node(script: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let [stdout, stderr] = ['', ''];
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe.skipIf(!privileged)('fixtures in a run directory of the caller', () => {
  afterEach(async () => {
    for (const made of scratches) await made.remove();
    scratches = [];
  });
  afterAll(async () => {
    for (const name of inRunNetns()) await NetNS.delete(name).catch(() => {});
  });

  it('createTestNetwork names its hosts in runDir, not /run/netns, carries TCP, runs ip there, and deletes them', async () => {
    const runDir = scratch();
    const network = await createTestNetwork(twoHosts, { runDir });
    try {
      expect(network.runDir).toBe(runDir);
      expect(readdirSync(runDir).sort()).toEqual(Object.values(network.names).sort());
      expect(network.hosts.a.path).toBe(`${runDir}/${network.names.a}`);
      expect(NetNS.list({ runDir }).every((entry) => entry.alive)).toBe(true);
      expect(inRunNetns()).toEqual([]);
      expect(await tcpHello(network.hosts.b, network.address('b'), network.hosts.a)).toBe('hello');
      // `ip -n NAME` would look in /run/netns: ip() enters the host by its handle
      expect(await network.ip('b', '-br', 'addr', 'show', 'eth0')).toContain('10.61.0.2/24');
      await expect(network.ip('a', 'link', 'show', 'nosuchlink')).rejects.toMatchObject({ code: 'ERR_NETNS_FIXTURE', message: expect.stringContaining(network.hosts.a.path) });
    } finally {
      await network.delete();
    }
    expect(readdirSync(runDir)).toEqual([]);
  });

  it('removes what it made in runDir when building fails half-way', async () => {
    const runDir = scratch();
    // a well-formed address the kernel refuses (multicast): the hosts are made, the address fails
    await expect(createTestNetwork({ prefix, hosts: { a: { addr: 'ff02::1/64' }, b: {} }, links: [['a', 'b']] }, { runDir })).rejects.toMatchObject({ code: 'ERR_NETNS_FIXTURE' });
    expect(readdirSync(runDir)).toEqual([]);
  });

  it('deletes at exit the network and the lab of a process that fails, in their runDir', async () => {
    const runDir = scratch();
    const { code, stdout } = await node(`
      const { createLab, createTestNetwork } = await import(${JSON.stringify(testing)});
      const options = { runDir: ${JSON.stringify(runDir)} };
      const network = await createTestNetwork({ prefix: ${JSON.stringify(prefix)}, hosts: { a: {}, b: {} }, links: [['a', 'b']] }, options);
      const lab = await createLab({ prefix: ${JSON.stringify(prefix)}, hosts: { a: {}, b: {} }, links: [['a', 'b']] }, options);
      console.log(JSON.stringify([...Object.values(network.names), ...Object.values(lab.names)]));
      throw new Error('the test failed');`);
    expect(code).toBe(1);
    expect(JSON.parse(stdout)).toHaveLength(4);
    expect(readdirSync(runDir)).toEqual([]);
  });

  it('a lab failing half-way removes what it made in runDir, and not a name taken there before', async () => {
    const runDir = scratch();
    const taken = await NetNS.create(`${prefix}clash.b`, { runDir });
    try {
      await expect(createLab({ prefix, hosts: { a: {}, b: {}, c: {} }, links: [['a', 'b'], ['b', 'c']] }, { name: 'clash', runDir })).rejects.toMatchObject({ code: 'EEXIST' });
      expect(readdirSync(runDir)).toEqual([`${prefix}clash.b`]);
      using again = NetNS.open(`${prefix}clash.b`, { runDir });
      expect(again.equals(taken)).toBe(true);
    } finally {
      await taken.delete();
    }
  });

  it('createLab builds a routed lab in runDir, carries TCP across its router, attaches by state, and deletes it', async () => {
    const runDir = scratch();
    const lab = await createLab({ prefix, hosts: { a: {}, b: {} }, routers: { r: {} }, switches: { s: {} }, links: [['a', 's'], ['r', 's'], ['r', 'b']] }, { runDir });
    try {
      expect(lab.runDir).toBe(runDir);
      expect(readdirSync(runDir).sort()).toEqual(Object.values(lab.names).sort());
      expect(inRunNetns()).toEqual([]);
      expect(await tcpHello(lab.nodes.b!, lab.address('b'), lab.nodes.a!)).toBe('hello');
      const state = JSON.parse(JSON.stringify(lab.state())) as ReturnType<Lab['state']>;
      expect(state.runDir).toBe(runDir);
      const again = await Lab.attach(state);
      try {
        expect(again.nodes.r!.equals(lab.nodes.r!)).toBe(true);
        expect(again.nodes.r!.path).toBe(`${runDir}/${lab.names.r}`);
      } finally {
        again.close();
      }
      await expect(Lab.attach({ ...state, runDir: 'relative' })).rejects.toEqual(invalidArg);
    } finally {
      await lab.delete();
    }
    expect(readdirSync(runDir)).toEqual([]);
  });

  it('sweep(prefix, { runDir }) deletes what a crashed run left there, and sweep(prefix) does not look there', async () => {
    const runDir = scratch();
    // pid_max is at most 2^22: no process has this pid
    const crashed = `${prefix}999999999-abcdef-a`;
    (await NetNS.create(crashed, { runDir })).close();
    const live = await createTestNetwork({ prefix, hosts: { a: {} } }, { runDir });
    try {
      expect(await sweep(prefix)).toEqual([]);
      expect(await sweep(prefix, { runDir })).toEqual([crashed]);
      expect(readdirSync(runDir)).toEqual([live.names.a]);
    } finally {
      await live.delete();
    }
  });

  it('refuses a bad runDir or an unknown option before making anything', async () => {
    const runDir = scratch();
    const toRoot = `${runDir}-root`;
    symlinkSync('/', toRoot);
    try {
      for (const options of [{ runDir: 'relative' }, { runDir: '/' }, { runDir: '/tmp/..' }, { runDir: toRoot }, { runDir: 42 }, { rundir: runDir }, 'x']) {
        await expect(createTestNetwork(twoHosts, options as never), JSON.stringify(options)).rejects.toEqual(invalidArg);
        await expect(createLab({ prefix, hosts: { a: {}, b: {} }, links: [['a', 'b']] }, options as never), JSON.stringify(options)).rejects.toEqual(invalidArg);
      }
      for (const options of [{ runDir: 'relative' }, { runDir: '' }, { runDir: 42 }, { rundir: runDir }, null]) {
        await expect(sweep(prefix, options as never), JSON.stringify(options)).rejects.toEqual(invalidArg);
      }
      await expect(createTestNetwork(twoHosts, { rundir: runDir } as never)).rejects.toThrow(/did you mean runDir/);
    } finally {
      rmSync(toRoot);
    }
    expect(readdirSync(runDir)).toEqual([]);
    expect(inRunNetns()).toEqual([]);
  });
});

// Root of a user namespace only: the network and mount namespaces are the
// user namespace's, /run (and /run/netns) stay the real root's.
const rootless = `
  import { mkdtempSync, readdirSync, accessSync, constants } from 'node:fs';
  import { tmpdir } from 'node:os';
  const { createTestNetwork, createLab, sweep } = await import(${JSON.stringify(testing)});
  const prefix = ${JSON.stringify(prefix)};
  const out = { uid: process.getuid() };
  out.runWritable = (() => { try { accessSync('/run', constants.W_OK); return true; } catch { return false; } })();
  const runDir = mkdtempSync(tmpdir() + '/' + prefix) + '/netns';
  out.runDir = runDir;
  const network = await createTestNetwork({ prefix, hosts: { a: { addr: '10.62.0.1/24' }, b: { addr: '10.62.0.2/24' } }, links: [['a', 'b']] }, { runDir });
  out.made = readdirSync(runDir).length;
  const net = await import('node:net');
  const server = await network.hosts.b.listen(net.createServer((socket) => socket.end('hello from b')), { host: network.address('b'), port: 7000 });
  const socket = await network.hosts.a.connect({ host: network.address('b'), port: 7000 });
  out.text = '';
  for await (const chunk of socket) out.text += chunk;
  server.close();
  out.ip = (await network.ip('a', '-br', 'addr', 'show', 'eth0')).includes('10.62.0.1/24');
  await network.delete();
  out.afterDelete = readdirSync(runDir).length;
  const lab = await createLab({ prefix, hosts: { a: {}, b: {} }, routers: { r: {} }, links: [['a', 'r'], ['r', 'b']] }, { runDir });
  out.labDropped = (await lab.connectivity()).dropped;
  await lab.delete();
  out.afterLab = readdirSync(runDir).length;
  out.sweptRunNetns = await sweep(prefix); // a dead run's leftover there is the real root's: not ours to delete
  // left for the exit hook
  await createTestNetwork({ prefix, hosts: { a: {}, b: {} }, links: [['a', 'b']] }, { runDir });
  console.log(JSON.stringify(out));`;

// Real root drops to nobody here; a user namespace has no other uid to drop to (the root run covers it).
describe.skipIf(!privileged || inUserNamespace)('fixtures without root (nobody, root of a user namespace)', () => {
  it('build a network and a lab in a runDir of their own, carry TCP, and leave nothing, at exit either', async () => {
    assertNobodyCanReach(testing);
    const crashed = `${prefix}999999999-abcdef-a`;
    (await NetNS.create(crashed)).close();
    let runDir: string | undefined;
    try {
      const result = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
        execFile(
          'setpriv',
          ['--reuid=65534', '--regid=65534', '--clear-groups', 'unshare', '-Urn', '--mount', '--', process.execPath, '--input-type=module', '-e', rootless],
          { encoding: 'utf8' },
          (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
        ),
      );
      runDir = /"runDir":"([^"]+)"/.exec(result.stdout)?.[1];
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      expect(JSON.parse(result.stdout)).toEqual({
        ...{ uid: 0, runWritable: false, runDir: expect.stringMatching(new RegExp(`^/tmp/${prefix}.+/netns$`)), made: 2, text: 'hello from b', ip: true },
        ...{ afterDelete: 0, labDropped: { pairs: 0, of: 6 }, afterLab: 0, sweptRunNetns: [] },
      });
      // the user namespace is gone with the script: what is left of the run directory is on /tmp, for all to see
      expect(readdirSync(runDir!)).toEqual([]);
      expect(inRunNetns()).toEqual([crashed]);
    } finally {
      await NetNS.delete(crashed);
      if (runDir !== undefined) rmSync(dirname(runDir), { recursive: true, force: true });
    }
  });
});
