// Resident mode when the runtime gives up on an ADD: the shim times out
// (NETNS_CNI_TIMEOUT) or is killed (a runtime's context deadline) while IPAM
// is slow, and the runtime's DEL follows at once; or a DEL comes while the
// ADD's caller still waits. The DEL must never be overtaken by that ADD:
// once the DEL has returned and the ADD has settled, nothing of the
// attachment is left (veth, the container's interface, the IPAM allocation,
// masquerade rules, address sets), as with Go's ptp and the per-process plugin.
//
// The slow IPAM is a wrapper around host-local whose ADD says it started
// (when the test listens on an `entered` FIFO) and then blocks reading a
// `release` FIFO until the test writes it: no sleeps, and no timing of ours
// but the shim's own one-second deadline.
import type { ChildProcess } from 'node:child_process';
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, constants, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NetNS } from '../../dist/index.js';
import { createTestNetwork, type TestNetwork } from '../../dist/testing.js';
import { installShim } from '../helpers/cni-shim.mjs';
import { execOutcome } from '../helpers/exec-outcome.js';
import { privileged } from '../helpers/privileges.js';

const EXAMPLE = fileURLToPath(new URL('../../examples/cni-ptp/dist/', import.meta.url));
const HOST_LOCAL = '/usr/lib/cni/host-local';
const haveHostLocal = existsSync(HOST_LOCAL);
if (!haveHostLocal && process.env.CI) throw new Error('CI must install containernetworking-plugins (host-local in /usr/lib/cni)');

type Hosts = 'host' | 'c1' | 'c2' | 'c3' | 'c4' | 'c5';

const SLOW_IPAM = `#!/bin/sh
# host-local, but ADD (and DEL, once del-waits exists) waits for the test (see the top of the test file).
if [ "$CNI_COMMAND" = ADD ] || [ -e "$SLOW_IPAM_DIR/del-waits" ]; then
  if [ -p "$SLOW_IPAM_DIR/entered" ]; then echo "$$" > "$SLOW_IPAM_DIR/entered"; fi
  read line < "$SLOW_IPAM_DIR/release"
fi
exec ${HOST_LOCAL}
`;

describe.skipIf(!privileged || !haveHostLocal)('resident mode: an ADD the runtime gave up on never outlives its DEL', () => {
  const tag = randomBytes(3).toString('hex');
  let network: TestNetwork<Hosts>;
  let hosts: TestNetwork<Hosts>['hosts'];
  let dir: string;
  let shim: string;
  let socket: string;
  let daemon: { child: ChildProcess; exited: Promise<unknown> } | undefined;
  /** Descriptors holding each release FIFO open (written once, see release()). */
  const releases: number[] = [];

  beforeAll(async () => {
    network = await createTestNetwork({ prefix: `cniab-${tag}-`, hosts: { host: {}, c1: {}, c2: {}, c3: {}, c4: {}, c5: {} } });
    hosts = network.hosts;
    dir = mkdtempSync(join(tmpdir(), `netns-cni-abandoned-${tag}-`));
    mkdirSync(join(dir, 'bin'));
    writeFileSync(join(dir, 'bin', 'slow-ipam'), SLOW_IPAM, { mode: 0o755 });
    shim = installShim(join(dir, 'bin'), 'cni-ptp');
    mkdirSync(join(dir, 'run'), { mode: 0o700 });
    socket = join(dir, 'run', 'cni-ptp.sock');
    const child = hosts.host.spawn(process.execPath, [join(EXAMPLE, 'cni-ptp-daemon.cjs'), socket], { env: { PATH: process.env.PATH ?? '' }, stdio: ['ignore', 'ignore', 'pipe'] });
    const exited = new Promise((resolve) => child.on('close', resolve));
    daemon = { child, exited };
    let stderr = '';
    await new Promise<void>((resolve, reject) => {
      child.stderr!.setEncoding('utf8').on('data', (text: string) => {
        stderr += text;
        if (stderr.includes('serving on')) resolve();
      });
      void exited.then((code) => reject(new Error(`the daemon exited (${String(code)}) before serving: ${stderr}`)));
    });
  }, 60_000);

  afterAll(async () => {
    // A wrapper still blocked (a failed test) is let go; everything the daemon made lives in the
    // test's namespaces and the scratch folder, which go, so the daemon need not drain first.
    for (const fd of releases) {
      try {
        writeSync(fd, 'go\n');
      } catch {
        // already written: its pipe is full of nothing we need
      }
      closeSync(fd);
    }
    daemon?.child.kill('SIGKILL');
    await daemon?.exited;
    await network?.delete();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** A fresh slow-IPAM folder; with `entered`, its ADD reports its start there. */
  function slowIpam(name: string, entered: boolean) {
    const folder = join(dir, name);
    mkdirSync(folder);
    execFileSync('mkfifo', [join(folder, 'release'), ...(entered ? [join(folder, 'entered')] : [])]);
    // Read and write, non-blocking: the open never waits for a reader, and the FIFO stays
    // open until afterAll, so what is written waits for a wrapper that has not opened it yet.
    const fd = openSync(join(folder, 'release'), constants.O_RDWR | constants.O_NONBLOCK);
    releases.push(fd);
    return {
      folder,
      /** Resolves once the wrapper's ADD has started (opening the FIFO waits for it). */
      entered: () => readFile(join(folder, 'entered'), 'utf8'),
      release: () => writeSync(fd, 'go\n'),
    };
  }

  const config = (name: string, subnet: string) => ({
    cniVersion: '1.0.0',
    name,
    type: 'cni-ptp',
    ipMasq: true,
    dataDir: join(dir, `records-${name}`),
    ipam: { type: 'slow-ipam', subnet, dataDir: join(dir, `ipam-${name}`) },
    addressSets: { deleteDelayMs: 0 },
  });
  const env = (command: string, container: NetNS, containerId: string, ipamFolder: string, extra: Record<string, string> = {}) => ({
    PATH: process.env.PATH ?? '',
    CNI_PATH: join(dir, 'bin'),
    NETNS_CNI_SOCKET: socket,
    SLOW_IPAM_DIR: ipamFolder,
    CNI_COMMAND: command,
    CNI_CONTAINERID: containerId,
    CNI_NETNS: container.path,
    CNI_IFNAME: 'eth0',
    ...extra,
  });
  const viaShim = (vars: Record<string, string>, conf: object) => execOutcome(hosts.host, shim, [], { env: vars, input: JSON.stringify(conf) });

  /** The daemon's connections: 0 once every call, the abandoned ADD included, has settled (it keeps a call's connection until then). */
  const connections = async () => (await hosts.host.execFile('ss', ['-xH', 'src', socket])).stdout.split('\n').filter((line) => line.trim() !== '').length;

  /** Nothing of the attachment anywhere. */
  async function expectNothingLeft(container: NetNS, containerId: string, conf: ReturnType<typeof config>) {
    // The host end's alias names its attachment.
    expect((await hosts.host.execFile('ip', ['-o', 'link', 'show', 'type', 'veth'])).stdout).not.toContain(`id:${containerId},`);
    expect((await container.execFile('ip', ['-o', 'link', 'show'])).stdout).not.toContain('eth0');
    const allocations = join(conf.ipam.dataDir, conf.name);
    expect(existsSync(allocations) ? readdirSync(allocations).filter((file) => /^\d/.test(file)) : []).toEqual([]);
    const { stdout: ruleset } = await hosts.host.execFile('nft', ['list', 'ruleset']);
    expect(ruleset).not.toContain(containerId);
    expect(ruleset).not.toMatch(/\bset (?!as_owners )/); // the address-set library's own bookkeeping set may stay
  }

  it('the shim gives up at NETNS_CNI_TIMEOUT=1 during IPAM, DEL follows at once: DEL returns 0 and the ADD leaves nothing', async () => {
    const conf = config(`timeout-${tag}`, '10.81.0.0/24');
    const id = `ctr-timeout-${tag}`;
    const ipam = slowIpam('timeout', false);
    const add = await viaShim(env('ADD', hosts.c1, id, ipam.folder, { NETNS_CNI_TIMEOUT: '1' }), conf);
    expect(JSON.parse(add.stdout)).toMatchObject({ code: 999, msg: expect.stringContaining('did not answer in time') });
    const del = viaShim(env('DEL', hosts.c1, id, ipam.folder), conf);
    expect(await del).toEqual({ code: 0, stdout: '', stderr: '' });
    ipam.release(); // were the ADD still waiting on IPAM, it would go on now
    await expect.poll(connections, { timeout: 60_000 }).toBe(0);
    await expectNothingLeft(hosts.c1, id, conf);
  }, 90_000);

  it('the shim is SIGKILLed during IPAM, DEL follows at once: DEL returns 0 and the ADD leaves nothing', async () => {
    const conf = config(`killed-${tag}`, '10.82.0.0/24');
    const id = `ctr-killed-${tag}`;
    const ipam = slowIpam('killed', true);
    const child = hosts.host.spawn(shim, [], { env: env('ADD', hosts.c2, id, ipam.folder), stdio: ['pipe', 'ignore', 'ignore'] });
    const gone = new Promise((resolve) => child.on('close', resolve));
    child.stdin!.end(JSON.stringify(conf));
    await ipam.entered();
    child.kill('SIGKILL');
    await gone;
    expect(await viaShim(env('DEL', hosts.c2, id, ipam.folder), conf)).toEqual({ code: 0, stdout: '', stderr: '' });
    ipam.release();
    await expect.poll(connections, { timeout: 60_000 }).toBe(0);
    await expectNothingLeft(hosts.c2, id, conf);
  }, 90_000);

  it('a DEL while the ADD is in flight, its caller still waiting: the DEL waits for the ADD, which fails and rolls back; nothing is left', async () => {
    const conf = config(`overtake-${tag}`, '10.83.0.0/24');
    const id = `ctr-overtake-${tag}`;
    const ipam = slowIpam('overtake', true);
    const add = viaShim(env('ADD', hosts.c3, id, ipam.folder), conf);
    await ipam.entered();
    expect(await connections()).toBe(1); // the measure the other tests wait on sees a call in flight
    expect(await viaShim(env('DEL', hosts.c3, id, ipam.folder), conf)).toEqual({ code: 0, stdout: '', stderr: '' });
    ipam.release(); // were the ADD still waiting on IPAM (not cancelled), it would go on now
    const added = await add;
    expect(added.code).toBe(1);
    expect(JSON.parse(added.stdout)).toMatchObject({ code: 999, msg: expect.stringContaining('a DEL of the same attachment') });
    await expect.poll(connections, { timeout: 60_000 }).toBe(0);
    await expectNothingLeft(hosts.c3, id, conf);
  }, 90_000);

  it('the shim is SIGKILLed while the ADD waits for the address-set table, its veth and masquerade made; with no DEL, the ADD undoes all of it itself', async () => {
    const table = `cni_ptp_abandoned_${tag}`;
    const conf = { ...config(`undo-${tag}`, '10.84.0.0/24'), addressSets: { table, deleteDelayMs: 0 } };
    const id = `ctr-undo-${tag}`;
    const ipam = slowIpam('undo', false);
    ipam.release(); // IPAM answers at once: the ADD goes on to plumb
    // The table's writer lock (src/addrset/table-lock.ts), held by flock(1) until its stdin ends.
    const lockPath = `/run/netns-addrset/net-${statSync(hosts.host.path).ino}-${table}.lock`;
    mkdirSync('/run/netns-addrset', { recursive: true, mode: 0o700 });
    const holder = spawn('flock', [lockPath, 'sh', '-c', 'echo locked; exec cat'], { stdio: ['pipe', 'pipe', 'inherit'] });
    const unlocked = new Promise((resolve) => holder.on('close', resolve));
    try {
      await new Promise((resolve) => holder.stdout!.once('data', resolve));
      const child = hosts.host.spawn(shim, [], { env: env('ADD', hosts.c4, id, ipam.folder), stdio: ['pipe', 'ignore', 'ignore'] });
      const gone = new Promise((resolve) => child.on('close', resolve));
      child.stdin!.end(JSON.stringify(conf));
      // Masquerade is the step before the address set: once its rule is there, the ADD waits on the lock.
      await expect.poll(async () => (await hosts.host.execFile('nft', ['list', 'ruleset'])).stdout.includes(id), { timeout: 60_000 }).toBe(true);
      child.kill('SIGKILL');
      await gone;
    } finally {
      holder.stdin!.end();
      await unlocked;
      rmSync(lockPath, { force: true }); // the lock of this test's own table only
    }
    await expect.poll(connections, { timeout: 60_000 }).toBe(0);
    await expectNothingLeft(hosts.c4, id, conf);
    expect((await hosts.host.execFile('nft', ['list', 'tables'])).stdout).not.toContain(table);
  }, 90_000);

  // A DEL's caller killed while the DEL waited its turn (behind a CHECK of the same attachment): it is
  // still run, since what a DEL would leave undone is a leak (podman's rm hit this, the DEL never run).
  it('a DEL whose shim is SIGKILLed while it waits its turn still runs: nothing is left', async () => {
    const conf = config(`delgone-${tag}`, '10.85.0.0/24');
    const id = `ctr-delgone-${tag}`;
    const ipam = slowIpam('delgone', true);
    const add = viaShim(env('ADD', hosts.c5, id, ipam.folder), conf);
    await ipam.entered();
    ipam.release();
    const added = await add;
    expect(added.code).toBe(0);
    writeFileSync(join(ipam.folder, 'del-waits'), ''); // from now on every IPAM call waits for a release
    const check = viaShim(env('CHECK', hosts.c5, id, ipam.folder), { ...conf, prevResult: JSON.parse(added.stdout) });
    await ipam.entered();
    const child = hosts.host.spawn(shim, [], { env: env('DEL', hosts.c5, id, ipam.folder), stdio: ['pipe', 'ignore', 'ignore'] });
    const gone = new Promise((resolve) => child.on('close', resolve));
    child.stdin!.end(JSON.stringify(conf));
    await expect.poll(connections, { timeout: 60_000 }).toBe(2); // the DEL is in, queued behind the CHECK
    child.kill('SIGKILL');
    await gone;
    ipam.release(); // the CHECK's IPAM
    expect((await check).code).toBe(0);
    await ipam.entered(); // the DEL's IPAM: it runs (before the fix it never started, and this waited to the test's timeout)
    ipam.release();
    await expect.poll(connections, { timeout: 60_000 }).toBe(0);
    await expectNothingLeft(hosts.c5, id, conf);
  }, 90_000);

  it('after all that, an ADD of the same attachment runs whole and its DEL removes it', async () => {
    const conf = config(`timeout-${tag}`, '10.81.0.0/24');
    const id = `ctr-timeout-${tag}`;
    const ipam = slowIpam('again', false);
    ipam.release();
    const add = await viaShim(env('ADD', hosts.c1, id, ipam.folder), conf);
    expect(add.code).toBe(0);
    expect(JSON.parse(add.stdout)).toMatchObject({ ips: [{ address: '10.81.0.2/24' }] });
    expect(await viaShim(env('DEL', hosts.c1, id, ipam.folder), conf)).toEqual({ code: 0, stdout: '', stderr: '' });
    await expectNothingLeft(hosts.c1, id, conf);
  }, 90_000);
});
