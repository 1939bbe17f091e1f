// Nodes that are machines: a command run in a node finds the other nodes by
// name (/etc/netns/<name>/hosts, bound over /etc/hosts as ip netns exec does),
// and those names go with the lab, even one whose process was SIGKILLed; it
// sees the node's name as hostname; a host has a default route.
import { execFile as execFileCallback, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
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

const routed = routedLab(prefix);

/** Every address of a node, as planned, without prefix length. */
const addressesOf = (lab: Lab, node: string): string[] =>
  lab.plan.links.flatMap((link) => [link.a, link.b]).filter((end) => end.node === node).flatMap((end) => end.addresses.map((cidr) => cidr.split('/')[0]!));

describe.skipIf(!privileged)('a lab of machines', () => {
  afterAll(() => {
    for (const name of leftovers()) execFileSync('ip', ['netns', 'del', name]);
    for (const name of hostsLeftovers()) rmSync(`/etc/netns/${name}`, { recursive: true, force: true });
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

  it('removes the names of a lab left to the exit hook, with its namespaces', async () => {
    const script = `
      const { createLab } = await import(${JSON.stringify(new URL('../../dist/testing.js', import.meta.url).href)});
      const { readdirSync } = await import('node:fs');
      const lab = await createLab({ prefix: ${JSON.stringify(prefix)}, hosts: { a: {}, b: {} }, links: [['a', 'b']] });
      console.log(readdirSync('/etc/netns').filter((name) => name.startsWith(${JSON.stringify(prefix)})).length);`;
    const { stdout } = await execFile(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(stdout).toBe('2\n'); // while it ran
    expect(hostsLeftovers()).toEqual([]);
    expect(leftovers()).toEqual([]);
  });

  it('sweep(prefix) removes the names of a lab whose process was SIGKILLed, with its namespaces', async () => {
    const script = `
      const { createLab } = await import(${JSON.stringify(new URL('../../dist/testing.js', import.meta.url).href)});
      const lab = await createLab({ prefix: ${JSON.stringify(prefix)}, hosts: { a: {}, b: {} }, links: [['a', 'b']] });
      console.log(JSON.stringify(Object.values(lab.names)));
      setInterval(() => {}, 1000);`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    const [line] = await once(createInterface({ input: child.stdout! }), 'line');
    const names: string[] = JSON.parse(line);
    child.kill('SIGKILL');
    await once(child, 'exit');
    expect(hostsLeftovers().sort()).toEqual(names.sort());
    expect((await sweep(prefix)).sort()).toEqual(names.sort());
    expect(hostsLeftovers()).toEqual([]);
    expect(leftovers()).toEqual([]);
  });
});
