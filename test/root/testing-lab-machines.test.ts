// Nodes that are machines: a command run in a node finds the other nodes by
// name (/etc/netns/<name>/hosts, bound over /etc/hosts as ip netns exec does),
// and those names go with the lab, even one whose process was SIGKILLed; it
// sees the node's name as hostname; a host has a default route; a node has
// directories of its own (empty, an overlay of the machine's, or the test's
// folder), which go with the lab too; a NAT router is the lab's way out to
// the machine.
import { execFile as execFileCallback, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type AddressInfo } from 'node:net';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { text } from 'node:stream/consumers';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { createLab, sweep, type Lab } from '../../dist/testing.js';
import { privileged } from '../helpers/privileges.js';
import { routedLab } from '../helpers/lab-specs.js';

const execFile = promisify(execFileCallback);
const prefix = `nslabm${randomBytes(2).toString('hex')}-`;
const mine = (dir: string): string[] => (existsSync(dir) ? readdirSync(dir).filter((name) => name.startsWith(prefix)) : []);
const leftovers = (): string[] => mine('/run/netns');
const hostsLeftovers = (): string[] => mine('/etc/netns');
/** The lab's folders of nodes' own directories (<tmpdir>/netns-dirs-NAME) under this file's prefix. */
const dirsLeftovers = (): string[] => readdirSync(tmpdir()).filter((entry) => entry.startsWith(`netns-dirs-${prefix}`));

const routed = routedLab(prefix);

/** Every address of a node, as planned, without prefix length. */
const addressesOf = (lab: Lab, node: string): string[] =>
  lab.plan.links.flatMap((link) => [link.a, link.b]).filter((end) => end.node === node).flatMap((end) => end.addresses.map((cidr) => cidr.split('/')[0]!));

describe.skipIf(!privileged)('a lab of machines', () => {
  afterAll(() => {
    for (const name of leftovers()) execFileSync('ip', ['netns', 'del', name]);
    for (const name of hostsLeftovers()) rmSync(`/etc/netns/${name}`, { recursive: true, force: true });
    for (const entry of dirsLeftovers()) rmSync(join(tmpdir(), entry), { recursive: true, force: true });
  });

  it("names every node's addresses in every node's /etc/hosts, so a node pings another by name, IPv4 and IPv6; the names go with the lab", async () => {
    const lab = await createLab(routed);
    try {
      const hosts = (await lab.execFile('a', 'cat', ['/etc/hosts'])).stdout;
      expect(hosts).toMatch(/^127\.0\.0\.1\s+localhost$/m);
      expect(addressesOf(lab, 'r1')).toHaveLength(4); // two links, IPv4 and IPv6 on each: a router is named by each
      for (const node of ['a', 'b', 'c', 'r1', 'r2']) for (const address of addressesOf(lab, node)) expect(hosts).toContain(`${address}\t${node}\n`);
      for (const family of ['-4', '-6']) expect((await lab.execFile('a', 'ping', [family, '-c', '1', '-W', '5', 'c'])).stdout).toContain('1 received');
      expect((await lab.execFile('r2', 'cat', ['/etc/hosts'])).stdout).toBe(hosts);
      expect(hostsLeftovers().sort()).toEqual(Object.values(lab.names).sort());
    } finally {
      await lab.delete();
    }
    expect(hostsLeftovers()).toEqual([]);
  });

  it("sends a host's traffic for outside the lab to its router (a default route, IPv4 and IPv6), again after its link went down and up; a router has none", async () => {
    await using lab = await createLab(routed, { hosts: false });
    const routeTo = (node: string, address: string): string => execFileSync('ip', ['-n', lab.names[node]!, 'route', 'get', address], { encoding: 'utf8' });
    const r2OnS2 = lab.plan.links.find((link) => link.a.node === 'r2' && link.b.node === 's2')!.a.addresses[1]!.split('/')[0];
    const outside = () => {
      expect(routeTo('a', '203.0.113.1')).toContain(`via ${lab.address('r1')} dev eth0`);
      expect(routeTo('c', '2001:db8::1')).toContain(`via ${r2OnS2} dev eth0`);
    };
    outside();
    await lab.linkDown('a', 's1');
    await lab.linkUp('a', 's1');
    outside();
    expect(() => routeTo('r1', '203.0.113.1')).toThrow(/unreachable/);
  });

  it("runs a node's commands under the node's name as hostname, in a UTS namespace that goes with them: the machine's stays", async () => {
    await using lab = await createLab({ prefix, hosts: { a: {} }, routers: { r1: {} }, links: [['a', 'r1']], ipv6: false }, { hosts: false });
    const machine = hostname();
    expect((await lab.execFile('r1', 'hostname')).stdout).toBe('r1\n');
    const child = lab.spawn('a', 'uname', ['-n'], { stdio: ['ignore', 'pipe', 'inherit'] });
    const [output] = await Promise.all([text(child.stdout!), once(child, 'close')]);
    expect(output).toBe('a\n');
    expect((await lab.execFile('a', 'hostname', [], { hostname: 'web-1' })).stdout).toBe('web-1\n');
    expect((await lab.execFile('a', 'hostname', [], { etc: false })).stdout).toBe(`${machine}\n`); // the network namespace alone
    expect(hostname()).toBe(machine);
    const longest = 'x'.repeat(64);
    expect((await lab.nodes.a!.execFile('hostname', [], { hostname: longest })).stdout).toBe(`${longest}\n`);
    for (const bad of ['x'.repeat(65), '', 'a\0b', 7]) {
      await expect(lab.execFile('a', 'hostname', [], { hostname: bad as string }), JSON.stringify(bad)).rejects.toMatchObject({ code: 'ERR_NETNS_INVALID_ARG', message: expect.stringMatching(/^hostname must be/) });
    }
  });

  it('writes no names with { hosts: false }, refuses a bad value, and never writes into nor removes a /etc/netns folder it did not make', async () => {
    await using plain = await createLab({ prefix, hosts: { a: {}, b: {} }, links: [['a', 'b']] }, { hosts: false });
    expect(hostsLeftovers()).toEqual([]);
    expect((await plain.execFile('a', 'cat', ['/etc/hosts'])).stdout).toBe(readFileSync('/etc/hosts', 'utf8'));
    await expect(createLab({ prefix, hosts: { a: {} } }, { hosts: 'yes' as never })).rejects.toMatchObject({ code: 'ERR_NETNS_INVALID_ARG' });

    const foreign = `/etc/netns/${prefix}taken.b`;
    mkdirSync(foreign, { recursive: true });
    writeFileSync(`${foreign}/hosts`, '10.70.9.9 users-own\n');
    try {
      const failed = createLab({ prefix, hosts: { a: {}, b: {}, c: {} }, links: [['a', 'b'], ['b', 'c']] }, { name: 'taken' });
      await expect(failed).rejects.toMatchObject({ code: 'ERR_NETNS_FIXTURE', message: expect.stringContaining(`mkdir ${foreign} failed: it exists and is not this lab's`) });
      expect(hostsLeftovers()).toEqual([`${prefix}taken.b`]);
      expect(readFileSync(`${foreign}/hosts`, 'utf8')).toBe('10.70.9.9 users-own\n');
      expect(leftovers().sort()).toEqual([plain.names.a, plain.names.b].sort());
    } finally {
      rmSync(foreign, { recursive: true, force: true });
    }
  });

  it("gives a node directories of its own: an empty one and an overlay kept across its commands and apart from other nodes and the machine, the test's folder bound; delete() removes the lab's", async () => {
    const testFolder = mkdtempSync(join(tmpdir(), 'nslabm-folder-'));
    const machineEtc = readdirSync('/etc');
    const lab = await createLab({
      prefix,
      hosts: { h1: { dirs: { '/var/log': 'empty', '/etc': 'overlay', '/mnt': testFolder } }, h2: {} },
      links: [['h1', 'h2']],
    });
    try {
      const sh = async (node: string, script: string): Promise<string> => (await lab.execFile(node, 'sh', ['-c', script])).stdout;
      expect(await sh('h1', 'ls -A /var/log | wc -l')).toBe('0\n');
      await sh('h1', 'echo log > /var/log/h1.log && echo node > /etc/h1-file && echo kept > /mnt/out');
      // a later command in h1 finds them; the machine's /etc is still seen through the overlay, with the lab's names bound over it
      expect(await sh('h1', 'cat /var/log/h1.log /etc/h1-file && test -f /etc/passwd && getent hosts h2 >/dev/null && echo seen')).toBe('log\nnode\nseen\n');
      expect(await sh('h2', 'test -e /var/log/h1.log || test -e /etc/h1-file || echo apart')).toBe('apart\n');
      expect(existsSync('/etc/h1-file') || existsSync('/var/log/h1.log')).toBe(false);
      expect(readdirSync('/etc')).toEqual(machineEtc);
      expect(readFileSync(join(testFolder, 'out'), 'utf8')).toBe('kept\n');
      const onMachine = lab.dirs('h1');
      expect(readFileSync(join(onMachine['/var/log']!, 'h1.log'), 'utf8')).toBe('log\n');
      expect(readFileSync(join(onMachine['/etc']!, 'h1-file'), 'utf8')).toBe('node\n');
      expect(onMachine['/mnt']).toBe(testFolder);
      expect(lab.dirs('h2')).toEqual({});
      // etc: false is the network namespace alone: the machine's directories
      expect((await lab.execFile('h1', 'ls', ['/var/log/h1.log'], { etc: false }).catch((error) => error)).code).toBe('ERR_NETNS_COMMAND_FAILED');
      expect(dirsLeftovers()).toHaveLength(1);
    } finally {
      await lab.delete();
    }
    expect(dirsLeftovers()).toEqual([]);
    expect(readdirSync(testFolder)).toEqual(['out']); // the test's own folder is never removed
    rmSync(testFolder, { recursive: true });
  });

  it("gives the lab a way out through its NAT router: every node reaches the machine's addresses, masqueraded as the router's uplink; delete() takes the machine's end away", async () => {
    const lab = await createLab({ prefix, hosts: { h1: {}, h2: {} }, routers: { r1: {}, gw: { nat: {} } }, links: [['h1', 'r1'], ['r1', 'gw'], ['h2', 'gw']] });
    const nat = lab.plan.nat!;
    const machine = nat.machineAddress.split('/')[0]!;
    const server = createServer((socket) => socket.end(`${socket.remoteAddress}\n`));
    try {
      expect(nat.subnet).toMatch(/^100\.(6[4-9]|[7-9]\d|1[01]\d|12[0-7])\.\d+\.\d+\/30$/);
      expect(execFileSync('ip', ['-o', '-4', 'addr', 'show', 'dev', nat.machineIface], { encoding: 'utf8' })).toContain(` ${nat.machineAddress} `);
      await new Promise<void>((resolve) => server.listen(0, machine, resolve));
      const { port } = server.address() as AddressInfo;
      const connect = `const s = require('net').connect(${port}, '${machine}'); s.on('data', (d) => process.stdout.write(d));`;
      for (const host of ['h1', 'h2']) {
        // h1 through r1 then gw, h2 through gw: each by its IPv4 default route
        expect((await lab.execFile(host, process.execPath, ['-e', connect])).stdout).toBe(`${nat.routerAddress.split('/')[0]}\n`);
      }
      expect(lab.plan.routes.r1).toContainEqual({ destination: 'default', gateway: lab.address('gw'), device: 'eth1' });
    } finally {
      server.close();
      await lab.delete();
    }
    expect(() => execFileSync('ip', ['link', 'show', 'dev', nat.machineIface], { stdio: 'ignore' })).toThrow();
  });

  it('refuses a bad nat before building anything, and takes a subnet given', async () => {
    const withNat = (routers: Record<string, unknown>) => createLab({ prefix, hosts: { h1: {} }, routers: routers as never, links: [['h1', Object.keys(routers)[0]!]] });
    const refused = { code: 'ERR_NETNS_INVALID_ARG' };
    await expect(withNat({ a: { nat: {} }, b: { nat: {} } })).rejects.toMatchObject({ ...refused, message: expect.stringContaining('one way out') });
    await expect(withNat({ a: { nat: { subnet: 'fd00::/64' } } })).rejects.toMatchObject({ ...refused, message: expect.stringContaining('IPv4') });
    await expect(withNat({ a: { nat: { subnet: '100.64.9.0/31' } } })).rejects.toMatchObject({ ...refused, message: expect.stringContaining('/30') });
    await expect(withNat({ a: { nat: { subnet: '0.0.0.0/1' } } })).rejects.toMatchObject({ ...refused, message: expect.stringContaining('/24 to a /30') });
    await expect(withNat({ a: { nat: { subnet: '127.0.0.0/30' } } })).rejects.toMatchObject({ ...refused, message: expect.stringContaining("the machine's") });
    await expect(withNat({ a: { nat: { subnet: '10.0.1.0/30' } } })).rejects.toMatchObject({ ...refused, message: expect.stringContaining('overlaps') });
    await expect(withNat({ a: { nat: { mode: 'x' } } })).rejects.toMatchObject(refused);
    await expect(createLab({ prefix, hosts: { h1: { nat: {} } as never } })).rejects.toMatchObject(refused);
    expect(leftovers()).toEqual([]);
    const lab = await createLab({ prefix, hosts: { h1: {} }, routers: { gw: { nat: { subnet: '100.127.9.8/30' } } }, links: [['h1', 'gw']] });
    try {
      expect(lab.plan.nat).toMatchObject({ subnet: '100.127.9.8/30', machineAddress: '100.127.9.9/30', routerAddress: '100.127.9.10/30' });
      await lab.execFile('h1', 'ping', ['-c', '1', '-W', '5', '100.127.9.9']);
    } finally {
      await lab.delete();
    }
  });

  it('refuses bad dirs before building anything', async () => {
    const withDirs = (dirs: unknown) => createLab({ prefix, hosts: { h1: { dirs } as never } });
    const refused = { code: 'ERR_NETNS_INVALID_ARG' };
    await expect(withDirs(['/var/log'])).rejects.toMatchObject(refused);
    await expect(withDirs({ 'var/log': 'empty' })).rejects.toMatchObject({ ...refused, message: expect.stringContaining('absolute path') });
    await expect(withDirs({ '/var/../etc': 'empty' })).rejects.toMatchObject(refused);
    await expect(withDirs({ '/proc/sys': 'empty' })).rejects.toMatchObject({ ...refused, message: expect.stringContaining("kernel's") });
    await expect(withDirs({ '/no/such/dir': 'empty' })).rejects.toMatchObject({ ...refused, message: expect.stringContaining('not a directory') });
    await expect(withDirs({ '/var/log': '/no/such/folder' })).rejects.toMatchObject({ ...refused, message: expect.stringContaining('not a directory') });
    await expect(withDirs({ '/var/log': 'tmpfs' })).rejects.toMatchObject(refused);
    await expect(withDirs({ '/var': 'empty', '/var/log': 'overlay' })).rejects.toMatchObject({ ...refused, message: expect.stringContaining('overlap') });
    await expect(createLab({ prefix, hosts: {}, switches: { s1: { dirs: {} } as never } })).rejects.toMatchObject(refused);
    expect(leftovers()).toEqual([]);
    expect(dirsLeftovers()).toEqual([]);
  });

  it("removes the names and nodes' own directories of a lab left to the exit hook, with its namespaces", async () => {
    const script = `
      const { createLab } = await import(${JSON.stringify(new URL('../../dist/testing.js', import.meta.url).href)});
      const { readdirSync } = await import('node:fs');
      const lab = await createLab({ prefix: ${JSON.stringify(prefix)}, hosts: { a: { dirs: { '/var/log': 'empty' } }, b: {} }, links: [['a', 'b']] });
      console.log(readdirSync('/etc/netns').filter((name) => name.startsWith(${JSON.stringify(prefix)})).length, Object.keys(lab.dirs('a')));`;
    const { stdout } = await execFile(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(stdout).toBe("2 [ '/var/log' ]\n"); // while it ran
    expect(hostsLeftovers()).toEqual([]);
    expect(dirsLeftovers()).toEqual([]);
    expect(leftovers()).toEqual([]);
  });

  it("sweep(prefix) removes the names and nodes' own directories of a lab whose process was SIGKILLed, with its namespaces", async () => {
    const script = `
      const { createLab } = await import(${JSON.stringify(new URL('../../dist/testing.js', import.meta.url).href)});
      const lab = await createLab({ prefix: ${JSON.stringify(prefix)}, hosts: { a: { dirs: { '/var/log': 'empty', '/etc': 'overlay' } }, b: {} }, links: [['a', 'b']] });
      console.log(JSON.stringify(Object.values(lab.names)));
      setInterval(() => {}, 1000);`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    const [line] = await once(createInterface({ input: child.stdout! }), 'line');
    const names: string[] = JSON.parse(line);
    child.kill('SIGKILL');
    await once(child, 'exit');
    expect(hostsLeftovers().sort()).toEqual(names.sort());
    expect(dirsLeftovers()).toHaveLength(1);
    expect((await sweep(prefix)).sort()).toEqual(names.sort());
    expect(hostsLeftovers()).toEqual([]);
    expect(dirsLeftovers()).toEqual([]);
    expect(leftovers()).toEqual([]);
  });
});
