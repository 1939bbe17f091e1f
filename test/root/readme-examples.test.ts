// Runs every example of the README and docs/ (examples/readme/*, each shown
// verbatim once; test/unit/readme.test.ts checks that) as a user would, as root:
// `node FILE.mjs` and `bash -euo pipefail cli.sh` with `netns` on PATH. Each
// must exit 0, print its key lines, and leave no namespace behind; whatever a
// failed run leaves (names nsdoc-<its pid>-…) is removed here. The CNI plugin
// is run by its own test, through CniHarness, as a runtime runs it.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { NetNS } from '../../dist/index.js';
import { sweep } from '../../dist/testing.js';
import { inUserNamespace, privileged } from '../helpers/privileges.js';
import { netnsBinDir } from '../helpers/netns-on-path.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

interface Run {
  pid: number;
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

const binDir = netnsBinDir('nsdoc-bin-');

const pids: number[] = [];

function run(command: string, args: string[]): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: root,
      env: { ...process.env, PATH: `${binDir}:${process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin'}` },
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 60_000,
    });
    if (child.pid !== undefined) pids.push(child.pid);
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ pid: child.pid!, code, signal, stdout, stderr }));
  });
}

/** Namespaces an example run left behind. */
const leftovers = (pid: number): string[] =>
  NetNS.list()
    .map((entry) => entry.name)
    .filter((name) => name.startsWith(`nsdoc-${pid}-`));

async function removeLeftovers(): Promise<void> {
  for (const pid of pids.splice(0)) for (const name of leftovers(pid)) await NetNS.delete(name).catch(() => {});
  await sweep('nsdoc-');
}

async function example(file: string): Promise<Run> {
  const path = join('examples', 'readme', file);
  const result = file.endsWith('.sh') ? await run('bash', ['-euo', 'pipefail', path]) : await run(process.execPath, [path]);
  const report = `${file}: exit ${result.code ?? result.signal}\n--- stdout\n${result.stdout}--- stderr\n${result.stderr}`;
  expect(result.code, report).toBe(0);
  expect(leftovers(result.pid), `${file} left namespaces behind`).toEqual([]);
  return result;
}

describe.skipIf(!privileged)('README examples, run as written', () => {
  afterEach(removeLeftovers);
  afterAll(async () => {
    await removeLeftovers();
    rmSync(binDir, { recursive: true, force: true });
  });

  it('quick-start.mjs: two namespaces joined over netlink, a server in one, a client and fn in the other', async () => {
    const { stdout, pid } = await example('quick-start.mjs');
    expect(stdout).toBe(`hello from nsdoc-${pid}-a\n[ 'lo', 'eth0' ]\n`);
  });

  it('with-netns.mjs: fn, errors and abort', async () => {
    const { stdout } = await example('with-netns.mjs');
    expect(stdout).toBe('fn ran in the namespace: true\nerror code: ENOENT\naborted: AbortError\n');
  });

  it('worker-module.mjs: a module export run inside the namespace, the module kept loaded', async () => {
    const { stdout } = await example('worker-module.mjs');
    expect(stdout).toBe("[ 'lo' ]\nnumber\n");
  });

  it('io.mjs: sockets, children, sysctl and files in a namespace', async () => {
    const { stdout, pid } = await example('io.mjs');
    expect(stdout).toContain(`got: hi from nsdoc-${pid}-io\n`);
    expect(stdout).toContain('forwards: 1\n');
    expect(stdout).toContain('has lo: true\n');
    expect(stdout).toMatch(/^0{31}1 .* lo$/m); // cat printed /proc/net/if_inet6 of the namespace: lo's ::1
    expect(stdout).toContain('cat exited with 0\n');
    expect(stdout).toContain("/sys/class/net: [ 'lo' ]\n");
  });

  it('netlink.mjs: links, addresses, routes, a refusal and an event', async () => {
    const { stdout } = await example('netlink.mjs');
    expect(stdout).toBe(
      'route: 10.1.0.0/24 link\nroute: 10.2.0.0/16 10.1.0.254\ntrue\nEEXIST - ipv4: Address already assigned\nevent: new veth0\n',
    );
  });

  it('cni-veth.test.mjs: the plugin passes its CniHarness test as root', async () => {
    const { stdout } = await example('cni-veth.test.mjs');
    // node:test reports as TAP to a pipe on Node 20 and 22, as 'spec' from Node 23 on
    expect(stdout).toMatch(/^(ok 1 - |✔ )cni-veth: ADD, CHECK, DEL and DEL again( \(.*\))?$/m);
    expect(stdout).toMatch(/^[#ℹ] pass 1$/m);
    expect(stdout).toMatch(/^[#ℹ] fail 0$/m);
  });

  it('cni-veth.mjs: an executable plugin that answers VERSION', async () => {
    const child = spawn(join(root, 'examples', 'readme', 'cni-veth.mjs'), [], { env: { ...process.env, CNI_COMMAND: 'VERSION' } });
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    const [code] = (await once(child, 'close')) as [number];
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toEqual({ cniVersion: '1.1.0', supportedVersions: ['0.4.0', '1.0.0', '1.1.0'] });
  });

  it('lifecycle.mjs: create, list, pids, identify, fromPid, attach, watch, delete', async () => {
    const { stdout, pid } = await example('lifecycle.mjs');
    expect(stdout).toContain(`name: 'nsdoc-${pid}-life'`);
    expect(stdout).toContain('alive: true');
    expect(stdout).toContain('pids: true');
    expect(stdout).toContain(`identify: [ 'nsdoc-${pid}-life' ]`);
    expect(stdout).toContain('same namespace: true');
    // The watch saw both names come and the second go, in that order (the first goes after the loop).
    expect(stdout).toContain(`watch: add nsdoc-${pid}-life\nwatch: add nsdoc-${pid}-life-b\nwatch: delete nsdoc-${pid}-life-b\n`);
  });

  it('fixtures.mjs: a two-host test network', async () => {
    const { stdout } = await example('fixtures.mjs');
    expect(stdout).toContain('b fetched: hi from a');
  });

  it('addrset.mjs: the address-set lifecycle with a rule referencing a set', async () => {
    const { stdout } = await example('addrset.mjs');
    expect(stdout).toContain("v4: { name: 'as4_");
    expect(stdout).toContain("elements: [ '10.1.0.9' ]");
    expect(stdout).toContain("elements: [ 'fd00::9' ]");
    expect(stdout).toMatch(/^as4_\w+ live 0$/m);
    expect(stdout).toMatch(/^as6_\w+ live 0$/m);
    expect(stdout).toContain('gc would remove 0 sets; stats: 1 live');
  });

  it('tc.mjs: qdiscs, htb classes and a u32 filter over netlink, netem refused where the kernel lacks it', async () => {
    const { stdout } = await example('tc.mjs');
    expect(stdout).toContain('qdisc: htb 1: root {"defaultClass":16}\n');
    expect(stdout).toMatch(/^qdisc: tbf [0-9a-f]+: root \{"rate":125000,"burst":4096,/m);
    expect(stdout).toContain("{ destination: '10.9.0.0/24' }\n");
  });

  // FRR is installed by .ci/run: only a machine without it, outside CI, skips; and a user namespace, whose refusal
  // testing-lab-frr checks (user frr is not mapped there).
  it.skipIf((!existsSync('/usr/lib/frr/zebra') && !process.env.CI) || inUserNamespace)('lab-frr.mjs: an OSPF triangle of FRR routers converges and reroutes around a link taken down; names, a dir of its own, a way out through NAT', async () => {
    const { stdout } = await example('lab-frr.mjs');
    expect(stdout).toBe('r1 to h3 through eth2 (r3)\nh1 reaches this machine through gw\nr1 to h3 through eth1 (r2)\n');
  });

  it('lab.mjs: a routed three-subnet lab, impaired, captured, partitioned and drawn', async () => {
    const { stdout, pid } = await example('lab.mjs');
    rmSync(`/tmp/lab-${pid}.pcap`, { force: true });
    expect(stdout).toContain('dropped: 0 of 20 (0%)');
    expect(stdout).toMatch(/^captured [1-9]\d* packets$/m);
    expect(stdout).toContain('{ pairs: 2, of: 20 }');
    expect(stdout).toContain('graph LR\n');
    expect(stdout).toContain('r1→r2: rate 10mbit, loss 1%');
  });

  it('lab-cli.sh: the same lab from a YAML file, through netns lab', async () => {
    const { stdout } = await example('lab-cli.sh');
    expect(stdout).toContain('lab demo is up:');
    expect(stdout).toContain('1 received');
    expect(stdout).toContain('dropped: 2 of 20 (10%)');
    expect(stdout).toContain('impair  c -> s2: rate 1mbit');
    expect(NetNS.list().filter((entry) => entry.name.startsWith('nsdoc-demo.'))).toEqual([]);
    expect(readdirSync('/etc/netns').filter((name) => name.startsWith('nsdoc-demo.'))).toEqual([]);
  });

  it('lab-machines.mjs: a node reaches another by name and is named as itself; the names go with the lab', async () => {
    const { stdout, pid } = await example('lab-machines.mjs');
    expect(stdout).toMatch(/^h1\nPING h3[^]*1 packets transmitted, 1 received/);
    expect(readdirSync('/etc/netns').filter((name) => name.startsWith(`nsdoc-${pid}-`))).toEqual([]);
  });

  it('cli.sh: the netns command', async () => {
    const { stdout, stderr, pid } = await example('cli.sh');
    expect(stdout).toMatch(new RegExp(`^nsdoc-${pid}-cli \\(id: \\d+\\)$`, 'm'));
    expect(JSON.parse(stdout.split('\n').find((line) => line.startsWith('[{"nsid"'))!)).toContainEqual({ nsid: expect.any(Number), name: `nsdoc-${pid}-cli` });
    expect(stdout).toMatch(/^lo\s+DOWN/m);
    expect(stdout).toContain('exit status: 3');
    expect(stdout).toContain('"dryRun": true');
    expect(stdout).toContain('exit status: 2');
    expect(stderr).toContain('netns: ERR_NETNS_ADDRSET_LIVE_REQUIRED: ');
  });
});
