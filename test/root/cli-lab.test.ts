// `netns lab` as a user runs it: a YAML topology brought up, looked at,
// worked (exec, partition, impair, link, matrix, graph) and brought down,
// with its state in a folder of the test's own (NETNS_LAB_DIR).
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { privileged } from '../helpers/privileges.js';

const prefix = `nslabc${randomBytes(2).toString('hex')}-`;
const leftovers = (): string[] => (existsSync('/run/netns') ? readdirSync('/run/netns').filter((name) => name.startsWith(prefix)) : []);
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
  afterAll(() => {
    delete process.env.NETNS_LAB_DIR;
    for (const name of leftovers()) execFileSync('ip', ['netns', 'del', name]);
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
    const cut = JSON.parse((await runCli('lab', 'matrix', '--timeout', '300', '--json')).stdout);
    expect(cut.dropped).toEqual({ pairs: 2, of: 6 });
    expect((await runCli('lab', 'heal', '1')).code).toBe(0);
    expect((await runCli('lab', 'matrix')).stdout).toContain('dropped: 0 of 6 (0%)');

    expect((await runCli('lab', 'impair', 'a', 's1', '--loss', '100')).code).toBe(0);
    expect((await runCli('lab', 'matrix', '--timeout', '300')).stdout).toContain('dropped: 4 of 6');
    expect((await runCli('lab', 'impair', 'a', 's1', '--clear')).code).toBe(0);
    expect((await runCli('lab', 'link', 'r1', 'b', 'down')).code).toBe(0);
    expect((await runCli('lab', 'graph', '--format', 'dot')).stdout).toContain('style=dashed');
    expect((await runCli('lab', 'link', 'r1', 'b', 'up')).code).toBe(0);
    expect((await runCli('lab', 'matrix')).stdout).toContain('dropped: 0 of 6 (0%)');

    expect(await runCli('lab', 'down', 'demo')).toMatchObject({ code: 0, stderr: '' });
    expect(leftovers()).toEqual([]);
    expect((await runCli('lab', 'status')).stdout).toBe('no lab is up\n');
  });

  it('refuses a bad file before making anything, and down needs a name it knows', async () => {
    const file = join(dir, 'bad.yaml');
    writeFileSync(file, `prefix: ${prefix}\nhosts: { a: {} }\nlinks: [[a, ghost]]\n`);
    expect(await runCli('lab', 'up', file)).toMatchObject({ code: 1, stderr: expect.stringContaining('ERR_NETNS_INVALID_ARG: createLab: a link names unknown node "ghost"') });
    writeFileSync(file, 'hosts: [a\n');
    expect((await runCli('lab', 'up', file)).stderr).toContain('ERR_NETNS_INVALID_ARG: lab file');
    expect((await runCli('lab', 'down')).code).toBe(2);
    expect(await runCli('lab', 'down', 'nothere')).toMatchObject({ code: 1, stderr: expect.stringContaining('ENOENT: no lab nothere is up') });
    expect(leftovers()).toEqual([]);
  });
});
