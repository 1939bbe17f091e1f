import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestNetwork, sweep } from '../../dist/testing.js';
import { mountsAt } from '../helpers/mounts.js';
import { privileged } from '../helpers/privileges.js';

const prefix = `nsfixt${randomBytes(2).toString('hex')}-`;
const testing = fileURLToPath(new URL('../../dist/testing.js', import.meta.url));

function leftovers(): string[] {
  return existsSync('/run/netns') ? readdirSync('/run/netns').filter((name) => name.startsWith(prefix)) : [];
}

/** Runs a script that builds a network, prints its names, then does `then`. */
function childWithNetwork(then: 'throw' | 'hang'): { names: Promise<string[]>; exited: Promise<number | null>; kill(): void } {
  const script = `
    const { createTestNetwork } = await import(${JSON.stringify(testing)});
    const network = await createTestNetwork({ prefix: ${JSON.stringify(prefix)}, hosts: { a: {}, b: {} }, links: [['a', 'b']] });
    console.log(JSON.stringify(Object.values(network.names)));
    ${then === 'throw' ? "throw new Error('the test failed');" : 'setInterval(() => {}, 1000);'}
  `;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'ignore'] });
  const names = new Promise<string[]>((resolve) => child.stdout.once('data', (line: Buffer) => resolve(JSON.parse(line.toString()))));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { names, exited, kill: () => child.kill('SIGKILL') };
}

describe.skipIf(!privileged)('createTestNetwork', () => {
  afterAll(() => {
    for (const name of leftovers()) execFileSync('ip', ['netns', 'del', name]);
  });

  it("takes hosts named as Object.prototype's members as themselves, and no address from a polluted prototype", async () => {
    const proto = Object.prototype as Record<string, unknown>;
    proto.addr = '10.66.0.9/24';
    let network;
    try {
      network = await createTestNetwork({
        prefix,
        hosts: { constructor: { addr: '10.11.0.1/24' }, toString: {} },
        links: [['constructor', 'toString', Object.fromEntries([['toString', '10.11.0.2/24']]) as never]],
      });
    } finally {
      delete proto.addr;
    }
    try {
      expect(network.address('constructor')).toBe('10.11.0.1');
      expect(network.address('toString')).toBe('10.11.0.2');
    } finally {
      await network.delete();
    }
    await expect(createTestNetwork(JSON.parse(`{ "prefix": "${prefix}", "hosts": { "__proto__": {}, "b": {} } }`))).rejects.toMatchObject({ code: 'ERR_NETNS_INVALID_ARG' });
    expect(leftovers()).toEqual([]);
  });

  it('builds hosts joined by veth pairs, usable through NetNS', async () => {
    const network = await createTestNetwork({
      prefix,
      hosts: { a: { addr: '10.10.0.1/24' }, b: { addr: '10.10.0.2/24' }, c: {} },
      links: [['a', 'b'], ['b', 'c', { b: '10.20.0.1/24', c: '10.20.0.2/24' }]],
    });
    try {
      expect(network.address('a')).toBe('10.10.0.1');
      expect(network.address('c')).toBe('10.20.0.2');
      expect(network.interfaces('b')).toEqual(['eth0', 'eth1']);
      expect(Object.values(network.names).every((name) => name.startsWith(`${prefix}${process.pid}-`))).toBe(true);
      const server = await network.hosts.a.listen(net.createServer((socket) => socket.end('over the veth')), { port: 8080 });
      const socket = await network.hosts.b.connect({ host: network.address('a'), port: 8080 });
      const text = await new Promise<string>((resolve) => {
        let data = '';
        socket.setEncoding('utf8').on('data', (chunk) => (data += chunk)).on('end', () => resolve(data));
      });
      expect(text).toBe('over the veth');
      server.close();
      expect(await network.ip('c', '-br', 'addr', 'show', 'eth0')).toContain('10.20.0.2/24');
    } finally {
      await network.delete();
    }
    expect(leftovers()).toEqual([]);
    expect(mountsAt('/run/netns', { under: true }).filter((point) => point.includes(prefix))).toEqual([]);
    await network.delete(); // idempotent
  });

  it('removes what it made when building fails half-way', async () => {
    await expect(
      // A well-formed address the kernel refuses (multicast) fails half-way; a malformed one is refused before.
      createTestNetwork({ prefix, hosts: { a: { addr: 'ff02::1/64' }, b: {} }, links: [['a', 'b']] }),
    ).rejects.toMatchObject({ code: 'ERR_NETNS_FIXTURE' });
    expect(leftovers()).toEqual([]);
  });

  it('refuses a spec naming unknown hosts before creating anything', async () => {
    await expect(createTestNetwork({ prefix, hosts: { a: {} }, links: [['a', 'zz' as 'a']] })).rejects.toMatchObject({
      code: 'ERR_NETNS_INVALID_ARG',
    });
    await expect(createTestNetwork({ prefix, hosts: { 'bad host!': {} } })).rejects.toMatchObject({ code: 'ERR_NETNS_INVALID_ARG' });
    expect(leftovers()).toEqual([]);
  });

  it('leaves nothing behind when a test process fails', async () => {
    const child = childWithNetwork('throw');
    const names = await child.names;
    expect(names).toHaveLength(2);
    expect(await child.exited).toBe(1);
    expect(leftovers()).toEqual([]);
  });

  it('sweeps what a killed run left, and nothing of live runs or other names', async () => {
    const child = childWithNetwork('hang');
    const orphaned = await child.names;
    child.kill();
    await child.exited;
    expect(leftovers().sort()).toEqual([...orphaned].sort());

    const manual = `${prefix}manual`;
    execFileSync('ip', ['netns', 'add', manual]);
    const live = await createTestNetwork({ prefix, hosts: { a: {} } });
    try {
      expect((await sweep(prefix)).sort()).toEqual([...orphaned].sort());
      expect(leftovers().sort()).toEqual([manual, live.names.a].sort());
    } finally {
      await live.delete();
      execFileSync('ip', ['netns', 'del', manual]);
    }
  });
});
