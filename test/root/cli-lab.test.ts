// `netns lab` as a user runs it: a YAML topology brought up, looked at,
// worked (exec, partition, impair, link, matrix, graph) and brought down,
// with its state in a folder of the test's own (NETNS_LAB_DIR).
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { privileged } from '../helpers/privileges.js';

const prefix = `nslabc${randomBytes(2).toString('hex')}-`;
const mine = (dir: string): string[] => (existsSync(dir) ? readdirSync(dir).filter((name) => name.startsWith(prefix)) : []);
const leftovers = (): string[] => mine('/run/netns');
const hostsLeftovers = (): string[] => mine('/etc/netns');
const dir = mkdtempSync(join(tmpdir(), 'netns-lab-cli-'));

const TOPOLOGY = `# two subnets and a router between them
name: demo
prefix: ${prefix}
hosts: { a: {}, b: {} }
switches:
  s1: { subnet: 10.70.1.0/24 }
routers: { r1: {} }
links:
  - [a, s1]
  - [r1, s1]
  - [r1, b, { subnet: 10.70.2.0/24, impair: { r1: { rate: 10mbit } } }]
`;

describe.skipIf(!privileged)('netns lab', () => {
  beforeAll(() => {
    process.env.NETNS_LAB_DIR = join(dir, 'state');
  });
  afterEach(() => {
    for (const name of leftovers()) execFileSync('ip', ['netns', 'del', name]);
    for (const name of hostsLeftovers()) rmSync(`/etc/netns/${name}`, { recursive: true, force: true });
    rmSync(join(dir, 'state'), { recursive: true, force: true });
  });
  afterAll(() => {
    delete process.env.NETNS_LAB_DIR;
    rmSync(dir, { recursive: true, force: true });
  });

  it('brings a YAML lab up, works it, and brings it down leaving nothing', async () => {
    const file = join(dir, 'demo.yaml');
    writeFileSync(file, TOPOLOGY);
    const upped = await runCli('lab', 'up', file);
    expect(upped).toMatchObject({ code: 0, stderr: '' });
    expect(upped.stdout).toContain(`a            ${prefix}demo.a`);
    expect(leftovers().sort()).toEqual(['a', 'b', 'r1', 's1'].map((node) => `${prefix}demo.${node}`));
    expect(await runCli('lab', 'up', file)).toMatchObject({ code: 1, stderr: expect.stringContaining('EEXIST: lab demo is already up') });

    const status = JSON.parse((await runCli('lab', 'status', 'demo', '--json')).stdout);
    expect(status[0].state.impairments).toEqual([['r1', 'b', { rate: '10mbit' }]]);
    expect((await runCli('lab', 'status')).stdout).toContain('impair  r1 -> b: rate 10mbit');

    // exec: the only lab up is the one meant; the command's status is the CLI's.
    const ping = await runCli('lab', 'exec', 'a', '--', 'ping', '-c', '1', '-W', '5', '10.70.2.2');
    expect(ping).toMatchObject({ code: 0, stdout: expect.stringContaining('1 received') });
    expect((await runCli('lab', 'exec', 'a', '--', 'sh', '-c', 'exit 7')).code).toBe(7);

    expect((await runCli('lab', 'partition', 'a', 'b')).stdout).toBe('1\n');
    const cut = JSON.parse((await runCli('lab', 'matrix', '--timeout', '10000', '--json')).stdout);
    expect(cut.dropped).toEqual({ pairs: 2, of: 6 });
    expect((await runCli('lab', 'heal', '1')).code).toBe(0);
    expect((await runCli('lab', 'matrix', '--timeout', '10000')).stdout).toContain('dropped: 0 of 6 (0%)');

    expect((await runCli('lab', 'impair', 'a', 's1', '--loss', '100')).code).toBe(0);
    expect((await runCli('lab', 'matrix', '--timeout', '3000')).stdout).toContain('dropped: 4 of 6');
    expect((await runCli('lab', 'impair', 'a', 's1', '--clear')).code).toBe(0);
    expect((await runCli('lab', 'link', 'r1', 'b', 'down')).code).toBe(0);
    expect((await runCli('lab', 'graph', '--format', 'dot')).stdout).toContain('style=dashed');
    expect((await runCli('lab', 'link', 'r1', 'b', 'up')).code).toBe(0);
    expect((await runCli('lab', 'matrix', '--timeout', '10000')).stdout).toContain('dropped: 0 of 6 (0%)');

    expect(await runCli('lab', 'down', 'demo')).toMatchObject({ code: 0, stderr: '' });
    expect(leftovers()).toEqual([]);
    expect((await runCli('lab', 'status')).stdout).toBe('no lab is up\n');
  });

  it("runs lab exec with the node's own directories, kept across commands, and down removes the lab's folders of them", async () => {
    const file = join(dir, 'dirs.yaml');
    writeFileSync(file, `name: dirs\nprefix: ${prefix}\nhosts:\n  a: { dirs: { /var/log: empty, /etc: overlay } }\n  b: {}\nlinks: [[a, b]]\n`);
    expect(await runCli('lab', 'up', file)).toMatchObject({ code: 0, stderr: '' });
    expect((await runCli('lab', 'exec', 'a', '--', 'sh', '-c', 'echo a > /var/log/a.log && echo a > /etc/a-file')).code).toBe(0);
    expect(await runCli('lab', 'exec', 'a', '--', 'cat', '/var/log/a.log', '/etc/a-file')).toMatchObject({ code: 0, stdout: 'a\na\n' });
    expect((await runCli('lab', 'exec', 'b', '--', 'test', '-e', '/etc/a-file')).code).toBe(1);
    expect(existsSync('/etc/a-file')).toBe(false);
    const folders = (): string[] => readdirSync(tmpdir()).filter((entry) => entry.startsWith(`netns-dirs-${prefix}dirs.`));
    expect(folders()).toEqual([`netns-dirs-${prefix}dirs.a`]);
    expect(await runCli('lab', 'down', 'dirs')).toMatchObject({ code: 0, stderr: '' });
    expect(folders()).toEqual([]);
    expect(leftovers()).toEqual([]);
  });

  it('refuses a bad file before making anything, and down needs a name it knows', async () => {
    const file = join(dir, 'bad.yaml');
    writeFileSync(file, `prefix: ${prefix}\nhosts: { a: {} }\nlinks: [[a, ghost]]\n`);
    expect(await runCli('lab', 'up', file)).toMatchObject({ code: 1, stderr: expect.stringContaining('ERR_NETNS_INVALID_ARG: createLab: a link names unknown node "ghost"') });
    writeFileSync(file, 'hosts: [a\n');
    expect((await runCli('lab', 'up', file)).stderr).toContain('ERR_NETNS_INVALID_ARG: lab file');
    expect((await runCli('lab', 'down')).code).toBe(2);
    expect(await runCli('lab', 'down', 'nothere')).toMatchObject({ code: 1, stderr: expect.stringContaining('ENOENT: no lab nothere is up') });
    // JSON.parse would keep only the second `hosts`
    const json = join(dir, 'dup.json');
    writeFileSync(json, `{"prefix": "${prefix}", "hosts": {"a": {}}, "hosts": {"b": {}}}`);
    expect(await runCli('lab', 'up', json)).toMatchObject({ code: 1, stderr: expect.stringMatching(/ERR_NETNS_INVALID_ARG: lab file .*dup.json: .*unique/) });
    for (const args of [['matrix', '--timeout', 'abc'], ['matrix', '--timeout', '0'], ['matrix', '--family', '5'], ['heal', 'abc'], ['heal', '1.5'], ['impair', 'a', 's', '--loss', ''], ['impair', 'a', 's', '--loss', '0x10'], ['impair', 'a', 's', '--duplicate', '1e2']]) {
      expect(await runCli('lab', ...args, '--lab', 'nothere'), args.join(' ')).toMatchObject({ code: 2, stderr: expect.stringContaining('ERR_NETNS_INVALID_ARG: ') });
    }
    expect(leftovers()).toEqual([]);
  });

  const SMALL = `prefix: ${prefix}\nhosts: { a: {}, b: {}, c: {} }\nswitches: { s: {} }\nlinks: [[a, s], [b, s], [c, s]]\nipv6: false\n`;
  const up = async (name: string): Promise<void> => {
    const file = join(dir, 'small.yaml');
    writeFileSync(file, SMALL);
    expect(await runCli('lab', 'up', file, '--name', name)).toMatchObject({ code: 0, stderr: '' });
  };
  const stateFile = (name: string): string => join(dir, 'state', `${name}.json`);

  it("lab exec runs as ip netns exec: /sys shows the node's own interfaces and MAC, /etc/netns/NAME is bound over /etc", async () => {
    await up('machines');
    const name = `${prefix}machines.a`;
    const etcDir = `/etc/netns/${name}`;
    mkdirSync(etcDir, { recursive: true });
    writeFileSync(join(etcDir, 'hosts'), '10.70.9.9 only-in-a\n');
    try {
      expect(await runCli('lab', 'exec', '--lab', 'machines', 'a', '--', 'ls', '/sys/class/net')).toMatchObject({ code: 0, stdout: 'eth0\nlo\n' });
      const [link] = JSON.parse(execFileSync('ip', ['-n', name, '-j', 'link', 'show', 'eth0'], { encoding: 'utf8' }));
      expect(await runCli('lab', 'exec', '--lab', 'machines', 'a', '--', 'cat', '/sys/class/net/eth0/address')).toMatchObject({ code: 0, stdout: `${link.address}\n` });
      expect(await runCli('lab', 'exec', '--lab', 'machines', 'a', '--', 'cat', '/etc/hosts')).toMatchObject({ code: 0, stdout: '10.70.9.9 only-in-a\n' });
    } finally {
      rmSync(etcDir, { recursive: true, force: true });
    }
    expect(await runCli('lab', 'down', 'machines')).toMatchObject({ code: 0 });
  });

  it('lab exec runs a command as on a machine named as the node, which reaches the others by name; down removes the names', async () => {
    await up('named');
    const ran = await runCli('lab', 'exec', '--lab', 'named', 'a', '--', 'sh', '-c', 'hostname && ping -c 1 -W 5 c');
    expect(ran).toMatchObject({ code: 0, stdout: expect.stringMatching(/^a\n[^]*1 received/) });
    expect(hostsLeftovers().sort()).toEqual(['a', 'b', 'c', 's'].map((node) => `${prefix}named.${node}`));
    expect(await runCli('lab', 'down', 'named')).toMatchObject({ code: 0 });
    expect(hostsLeftovers()).toEqual([]);
  });

  it('down deletes only the namespaces the lab made, by their identity and their name', async () => {
    await up('guard');
    const replaced = `${prefix}guard.b`;
    execFileSync('ip', ['netns', 'del', replaced]);
    execFileSync('ip', ['netns', 'add', replaced]);
    expect((await runCli('lab', 'status', 'guard')).stdout).toContain(`${replaced} (replaced since up`);
    expect(await runCli('lab', 'partition', 'a', 'b', '--lab', 'guard')).toMatchObject({ code: 1, stderr: expect.stringContaining(`ERR_NETNS_FIXTURE: lab guard: ${replaced} replaced since up`) });

    // a state file naming a namespace the lab never made: damaged, and nothing deleted by it
    const victim = `${prefix}victim`;
    execFileSync('ip', ['netns', 'add', victim]);
    const stolen = JSON.parse(readFileSync(stateFile('guard'), 'utf8'));
    writeFileSync(stateFile('evil'), JSON.stringify({ ...stolen, name: 'evil', state: { ...stolen.state, names: { ...stolen.state.names, a: victim } } }));
    writeFileSync(stateFile('evil2'), JSON.stringify({ name: 'evil2', file: 'x', building: false, state: { names: { a: victim } } }));
    for (const name of ['evil', 'evil2']) {
      expect(await runCli('lab', 'down', name)).toMatchObject({ code: 0, stdout: expect.stringContaining(`lab ${name}: its state file was damaged`) });
    }
    expect(leftovers()).toContain(victim);

    const downed = await runCli('lab', 'down', 'guard');
    expect(downed).toMatchObject({ code: 0, stdout: `lab guard: left ${replaced}: not the namespace the lab made (replaced since up, or there before it)\n` });
    expect(leftovers().sort()).toEqual([replaced, victim]);
    execFileSync('ip', ['netns', 'del', replaced]);
    execFileSync('ip', ['netns', 'del', victim]);

    // an `up` killed while building recorded no identities: down takes the names it would have made, made since it began
    const killed = (started: bigint) => {
      const names = Object.fromEntries(Object.keys(stolen.state.names).map((key) => [key, `${prefix}killed.${key}`]));
      writeFileSync(stateFile('killed'), JSON.stringify({ ...stolen, name: 'killed', building: true, identities: undefined, started: String(started), state: { ...stolen.state, names } }));
    };
    execFileSync('ip', ['netns', 'add', `${prefix}killed.a`]);
    killed(BigInt(Date.now() + 3_600_000) * 1_000_000n); // began after a was made: a was there before it
    expect(await runCli('lab', 'down', 'killed')).toMatchObject({ code: 0, stdout: expect.stringContaining(`left ${prefix}killed.a: not the namespace the lab made`) });
    expect(leftovers()).toEqual([`${prefix}killed.a`]);
    killed(0n); // began before a was made
    expect(await runCli('lab', 'down', 'killed')).toMatchObject({ code: 0, stdout: '' });
    expect(leftovers()).toEqual([]);

    // up refuses names that are taken, by someone or by another lab under another prefix, and makes nothing
    execFileSync('ip', ['netns', 'add', `${prefix}guard.a`]);
    expect(await runCli('lab', 'up', join(dir, 'small.yaml'), '--name', 'guard')).toMatchObject({ code: 1, stderr: expect.stringContaining(`EEXIST: lab guard needs namespaces that already exist: ${prefix}guard.a`) });
    expect(leftovers()).toEqual([`${prefix}guard.a`]);
    expect((await runCli('lab', 'status')).stdout).not.toContain('lab guard');
    execFileSync('ip', ['netns', 'del', `${prefix}guard.a`]);
  });

  it('one command at a time changes a lab: concurrent ones all land', async () => {
    const file = join(dir, 'race.yaml');
    writeFileSync(file, SMALL);
    const ups = await Promise.all([1, 2].map(() => runCli('lab', 'up', file, '--name', 'race')));
    expect(ups.map((run) => run.code).sort()).toEqual([0, 1]);
    expect(ups.map((run) => run.stderr).join('')).toContain('EEXIST: lab race is already up');
    expect(existsSync(stateFile('race'))).toBe(true);

    const cuts = await Promise.all([['a', 'b'], ['a', 'c'], ['b', 'c']].map(([x, y]) => runCli('lab', 'partition', x!, y!, '--lab', 'race')));
    expect(cuts.map((cut) => cut.stdout).sort()).toEqual(['1\n', '2\n', '3\n']);
    const impairs = await Promise.all(['a', 'b', 'c'].map((node) => runCli('lab', 'impair', node, 's', '--rate', '1mbit', '--lab', 'race')));
    expect(impairs.map((run) => run.code)).toEqual([0, 0, 0]);
    const state = JSON.parse((await runCli('lab', 'status', 'race', '--json')).stdout)[0].state;
    expect(state.partitions).toHaveLength(3);
    expect(state.impairments.map(([from]: string[]) => from).sort()).toEqual(['a', 'b', 'c']);
    expect(await runCli('lab', 'down', 'race')).toMatchObject({ code: 0, stdout: '' });
    expect(leftovers()).toEqual([]);
  });

  it('a damaged state file is shown as such and taken away by down, deleting nothing', async () => {
    await up('fine');
    for (const text of ['{"name":"bad"}', '[']) {
      writeFileSync(stateFile('bad'), text);
      const status = await runCli('lab', 'status');
      expect(status).toMatchObject({ code: 0, stdout: expect.stringContaining('lab bad: damaged state file (') });
      expect(status.stdout).toContain(`lab fine (from ${join(dir, 'small.yaml')})`);
      expect(await runCli('lab', 'graph', '--lab', 'bad')).toMatchObject({ code: 1, stderr: expect.stringContaining(`ERR_NETNS_INVALID_ARG: the state file ${stateFile('bad')} is damaged`) });
      expect(await runCli('lab', 'down', 'bad')).toMatchObject({ code: 0, stdout: expect.stringContaining('removed it, deleted no namespace') });
      expect(existsSync(stateFile('bad'))).toBe(false);
    }
    expect(await runCli('lab', 'down', 'fine')).toMatchObject({ code: 0, stdout: '' });
    expect(leftovers()).toEqual([]);
  });
});
