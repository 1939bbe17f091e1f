// FRR in a lab: an OSPF triangle of real zebra + ospfd converges, a link
// taken down reroutes through the third router, and delete() leaves no
// daemon, directory or namespace; a lab that cannot converge says which
// router lacks which prefix.
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { createLab, type Lab } from '../../dist/testing.js';
import { inUserNamespace, privileged, realRootOnly } from '../helpers/privileges.js';

const prefix = `nsfrrt${randomBytes(2).toString('hex')}-`;
const leftovers = (): string[] => (existsSync('/run/netns') ? readdirSync('/run/netns').filter((name) => name.startsWith(prefix)) : []);
const frrMissing = !existsSync('/usr/lib/frr/zebra');
if (frrMissing && process.env.CI) throw new Error('CI must run the FRR lab tests: /usr/lib/frr/zebra is missing (.ci/run installs frr)');
// The daemons run as user frr, which a rootless sandbox does not map.
const skip = !privileged || inUserNamespace || frrMissing;
if (privileged && inUserNamespace) console.warn(`testing-lab-frr: ${realRootOnly}`);

/** Three routers in a triangle, a host on each. */
const triangle = {
  prefix,
  ipv6: false,
  hosts: { h1: {}, h2: {}, h3: {} },
  routers: { r1: { frr: { ospf: {} } }, r2: { frr: { ospf: {} } }, r3: { frr: { ospf: {} } } },
  links: [['h1', 'r1'], ['h2', 'r2'], ['h3', 'r3'], ['r1', 'r2'], ['r2', 'r3'], ['r1', 'r3']] as [string, string][],
};

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
};

/** The interface `node`'s kernel sends to `address` through. */
async function deviceToward(lab: Lab, node: string, address: string): Promise<string> {
  const { stdout } = await lab.execFile(node, 'ip', ['route', 'get', address]);
  return /\bdev (\S+)/.exec(stdout)?.[1] ?? stdout;
}

const ping = (lab: Lab, from: string, to: string) => lab.execFile(from, 'ping', ['-n', '-c', '1', '-W', '2', lab.address(to)]);

describe.skipIf(skip)('createLab with FRR routers', () => {
  afterAll(() => {
    expect(leftovers()).toEqual([]);
  });

  it('converges an OSPF triangle, reroutes around a link taken down, and delete() stops every daemon', async () => {
    const started = performance.now();
    const lab = await createLab(triangle);
    let pids: number[] = [];
    try {
      await lab.waitConverged({ timeoutMs: 60_000 });
      console.log(`OSPF triangle: built and converged in ${Math.round(performance.now() - started)} ms`);
      expect(await deviceToward(lab, 'r1', lab.address('h3'))).toBe(lab.interfaceTo('r1', 'r3'));
      await ping(lab, 'h1', 'h3');

      const cut = performance.now();
      await lab.linkDown('r1', 'r3');
      await lab.waitConverged({ timeoutMs: 60_000 });
      console.log(`OSPF triangle: rerouted around r1-r3 in ${Math.round(performance.now() - cut)} ms`);
      expect(await deviceToward(lab, 'r1', lab.address('h3'))).toBe(lab.interfaceTo('r1', 'r2'));
      await ping(lab, 'h1', 'h3');

      pids = ['r1', 'r2', 'r3'].flatMap((router) => Object.values(lab.daemonPids(router)));
      expect(pids).toHaveLength(6);
      expect(pids.every(alive)).toBe(true);
    } finally {
      await lab.delete();
    }
    expect(pids.filter(alive)).toEqual([]);
    expect(leftovers()).toEqual([]);
    expect(existsSync(lab.daemonDir('r1'))).toBe(false);
    expect((await lab.daemonLogs('r1')).ospfd).toMatch(/ospfd [\d.]+ starting/);
  }, 120_000);

  it('kills the daemons and removes their directory when the process exits without delete()', async () => {
    const script = `
      const { createLab } = await import(${JSON.stringify(new URL('../../dist/testing.js', import.meta.url).href)});
      const ospf = { frr: { ospf: {} } };
      const lab = await createLab({ prefix: ${JSON.stringify(prefix)}, ipv6: false, hosts: {}, routers: { r1: ospf, r2: ospf }, links: [['r1', 'r2']] });
      console.log(JSON.stringify({ pids: [...Object.values(lab.daemonPids('r1')), ...Object.values(lab.daemonPids('r2'))], dir: lab.daemonDir('r1') }));`;
    const { pids, dir } = JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 30_000 })) as { pids: number[]; dir: string };
    expect(pids).toHaveLength(4);
    // SIGKILL was sent at exit; the orphans are reaped by whoever inherits them, a moment later.
    await vi.waitFor(() => expect(pids.filter(alive)).toEqual([]), { timeout: 5_000, interval: 20 });
    expect(existsSync(dir)).toBe(false);
    expect(leftovers()).toEqual([]);
  });

  it("removes a SIGKILLed owner's lab with its daemons (which would hold its namespaces alive) at the next createLab of the prefix", async () => {
    const script = `
      const { createLab } = await import(${JSON.stringify(new URL('../../dist/testing.js', import.meta.url).href)});
      const ospf = { frr: { ospf: {} } };
      const lab = await createLab({ prefix: ${JSON.stringify(prefix)}, ipv6: false, hosts: {}, routers: { r1: ospf, r2: ospf }, links: [['r1', 'r2']] });
      console.log(JSON.stringify({ pids: [...Object.values(lab.daemonPids('r1')), ...Object.values(lab.daemonPids('r2'))], dir: lab.daemonDir('r1') }));
      setInterval(() => {}, 1 << 30);`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    const [line] = (await once(createInterface({ input: child.stdout! }), 'line')) as [string];
    const { pids, dir } = JSON.parse(line) as { pids: number[]; dir: string };
    try {
      expect(pids).toHaveLength(4);
      child.kill('SIGKILL'); // no exit hook runs; the daemons, now frr's, took no parent-death signal with them
      await once(child, 'exit');
      expect(pids.filter(alive)).toHaveLength(4);
      await using lab = await createLab({ prefix, hosts: { a: {} } });
      expect(leftovers()).toEqual(Object.values(lab.names));
      // SIGKILLed by the sweep; reaped by whoever inherited them, a moment later.
      await vi.waitFor(() => expect(pids.filter(alive)).toEqual([]), { timeout: 5_000, interval: 20 });
      expect(existsSync(dirname(dir))).toBe(false);
    } finally {
      child.kill('SIGKILL');
      for (const pid of pids.filter(alive)) process.kill(pid, 'SIGKILL');
      rmSync(dirname(dir), { recursive: true, force: true });
    }
  });

  it('rejects waitConverged with ETIMEDOUT naming the router and the prefix it lacks, with a configuration given as is that routes nothing', async () => {
    const asIs = { frr: { config: 'hostname quiet\n!\n' } };
    const lab = await createLab({ prefix, ipv6: false, hosts: { h1: {}, h2: {} }, routers: { r1: asIs, r2: asIs }, links: [['h1', 'r1'], ['r1', 'r2'], ['r2', 'h2']] });
    try {
      expect(Object.keys(lab.daemonPids('r1'))).toEqual(['zebra']);
      const h2Subnet = lab.plan.segments[lab.plan.links[2]!.segment]!.subnet;
      await expect(lab.waitConverged({ timeoutMs: 300 })).rejects.toMatchObject({ code: 'ETIMEDOUT', message: expect.stringContaining(`r1 lacks ${h2Subnet}`) });
    } finally {
      await lab.delete();
    }
  });

  it('refuses a bad FRR spec before building anything', async () => {
    const bad = async (frr: unknown, options?: { keep: boolean }) => createLab({ prefix, hosts: {}, routers: { r1: { frr } as never } }, options);
    await expect(bad({})).rejects.toMatchObject({ code: 'ERR_NETNS_INVALID_ARG', message: expect.stringContaining('one of ospf') });
    await expect(bad({ ospf: {}, config: '' })).rejects.toMatchObject({ code: 'ERR_NETNS_INVALID_ARG' });
    await expect(bad({ ospf: { hello: 0 } })).rejects.toMatchObject({ code: 'ERR_NETNS_INVALID_ARG', message: expect.stringContaining('hello') });
    await expect(bad({ ospf: { hello: 4, dead: 4 } })).rejects.toMatchObject({ code: 'ERR_NETNS_INVALID_ARG', message: expect.stringContaining('longer than hello') });
    await expect(bad({ ospf: { helo: 1 } })).rejects.toMatchObject({ code: 'ERR_NETNS_INVALID_ARG', message: expect.stringContaining('helo') });
    await expect(bad({ config: 'x', daemons: ['ospfd', 'sh -c id'] })).rejects.toMatchObject({ code: 'ERR_NETNS_INVALID_ARG' });
    await expect(bad({ ospf: {} }, { keep: true })).rejects.toMatchObject({ code: 'ERR_NETNS_INVALID_ARG', message: expect.stringContaining('kept') });
    expect(leftovers()).toEqual([]);
  });
});

// Where user frr is not mapped (a rootless sandbox), the daemons could not read their files: refused before anything is built.
describe.skipIf(!privileged || !inUserNamespace || frrMissing)('createLab with FRR routers in a user namespace', () => {
  it('refuses with ERR_NETNS_UNSUPPORTED naming user frr, and builds nothing', async () => {
    await expect(createLab(triangle)).rejects.toMatchObject({ code: 'ERR_NETNS_UNSUPPORTED', message: expect.stringContaining('user frr') });
    expect(leftovers()).toEqual([]);
  });
});
