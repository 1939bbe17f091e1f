import { closeSync, mkdirSync, readFileSync, readSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NetNS, withNetNS } from '../../dist/index.js';
import { createTestNetwork, type TestNetwork } from '../../dist/testing.js';
import { inodeOf, openFdCount, threadsAwayFrom } from '../helpers/process-state.js';
import { nodeSpawnError } from '../helpers/missing-command.js';
import { privileged } from '../helpers/privileges.js';

const home = inodeOf('/proc/thread-self/ns/net');

describe.skipIf(!privileged)('NetNS I/O from the main thread', () => {
  let network: TestNetwork<'a' | 'b'>;
  let nameA: string;
  let a: NetNS;
  let b: NetNS;

  beforeAll(async () => {
    network = await createTestNetwork({
      prefix: 'nsio-',
      hosts: { a: { addr: '10.77.0.1/24' }, b: { addr: '10.77.0.2/24' } },
      links: [['a', 'b']],
    });
    nameA = network.names.a;
    a = network.hosts.a;
    b = network.hosts.b;
  });

  afterAll(async () => {
    await network?.delete();
  });

  it('serves from A on its veth address to B, and not to the host', async () => {
    const server = await a.listen(net.createServer((socket) => socket.end('from A')), { host: '10.77.0.1', port: 0 });
    try {
      const { port } = server.address() as net.AddressInfo;
      const client = await b.connect({ host: '10.77.0.1', port });
      expect(await readAll(client)).toBe('from A');

      // Same port on loopback: A's server is not there for the host (nor for A's own loopback).
      const local = await a.listen(net.createServer((socket) => socket.end('A loopback')), { host: '127.0.0.1', port: 0 });
      const localPort = (local.address() as net.AddressInfo).port;
      const hex = `:${localPort.toString(16).toUpperCase().padStart(4, '0')} 00000000:0000 0A`;
      expect(readFileSync('/proc/self/net/tcp', 'utf8')).not.toContain(hex);
      await expect(connectFromHost(localPort)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
      expect(await readAll(await a.connect({ host: '127.0.0.1', port: localPort }))).toBe('A loopback');
      local.close();
    } finally {
      server.close();
    }
  });

  it('listens on an IPv4-mapped IPv6 address, as Node does', async () => {
    const server = await a.listen(net.createServer((socket) => socket.end('mapped')), { host: '::ffff:127.0.0.1', port: 0 });
    try {
      const { port } = server.address() as net.AddressInfo;
      expect(await readAll(await a.connect({ host: '127.0.0.1', port }))).toBe('mapped');
      const udp = await a.createSocket('udp6', { address: '::ffff:127.0.0.1', port: 0 });
      udp.close();
    } finally {
      server.close();
    }
  });

  it('reports refused and timed-out connections as coded errors', async () => {
    await expect(b.connect({ host: '10.77.0.1', port: 1 })).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    // 10.77.0.3 is on B's veth subnet but nobody answers ARP: the connect hangs until our timeout.
    await expect(b.connect({ host: '10.77.0.3', port: 80, timeout: 200 })).rejects.toMatchObject({ code: 'ETIMEDOUT', syscall: 'connect' });
  });

  it('reports a port in use as EADDRINUSE with the address', async () => {
    const first = await a.listen(net.createServer(), { host: '127.0.0.1', port: 0 });
    const { port } = first.address() as net.AddressInfo;
    await expect(a.listen(net.createServer(), { host: '127.0.0.1', port })).rejects.toMatchObject({
      code: 'EADDRINUSE',
      syscall: 'bind',
      address: '127.0.0.1',
      port,
    });
    first.close();
  });

  it('echoes UDP between two namespaces', async () => {
    const echo = await a.createSocket('udp4', { address: '10.77.0.1', port: 0 });
    echo.on('message', (message, from) => echo.send(message, from.port, from.address));
    const client = await b.createSocket('udp4', { address: '10.77.0.2' });
    try {
      const reply = new Promise<string>((resolve) => client.once('message', (m) => resolve(m.toString())));
      client.send('ping', echo.address().port, '10.77.0.1');
      expect(await reply).toBe('ping');
    } finally {
      echo.close();
      client.close();
    }
  });

  it('keeps abstract unix sockets per namespace', async () => {
    const path = `\0netns-test-${process.pid}`;
    const server = await a.listen(net.createServer((socket) => socket.end('abstract A')), { path });
    try {
      expect(await readAll(await a.connect({ path }))).toBe('abstract A');
      await expect(b.connect({ path })).rejects.toMatchObject({ code: 'ECONNREFUSED' });
      // the name as this Node's own net.connect spells it (Node 20 pads it to the whole sun_path, 22+ does not)
      const plain = (name: string) =>
        new Promise((resolve, reject) => {
          const socket = require('node:net').connect({ path: name }, () => socket.on('data', (data: Buffer) => resolve(String(data))));
          socket.on('error', reject);
        });
      expect(await withNetNS(a, plain, path)).toBe('abstract A');
    } finally {
      server.close();
    }
  });

  it('spawns real child processes inside the namespace', async () => {
    const { stdout } = await a.execFile('ip', ['-j', 'link']);
    const names = (JSON.parse(stdout) as { ifname: string }[]).map((link) => link.ifname).sort();
    expect(names).toEqual(['eth0', 'lo']);

    const link = await a.execFile('readlink', ['/proc/self/ns/net']);
    expect(link.stdout.trim()).toBe(`net:[${a.inode}]`);

    const asNode = nodeSpawnError('surely-no-such-command'); // ENOENT, unless a PATH folder is out of reach
    await expect(a.execFile('surely-no-such-command', [])).rejects.toMatchObject(asNode);
    const missing = a.spawn('surely-no-such-command');
    const [error] = (await once(missing, 'error')) as [Error & { code: string }];
    expect(error.code).toBe(asNode.code);

    await expect(a.execFile('sh', ['-c', 'echo oops >&2; exit 3'])).rejects.toMatchObject({ name: 'NetnsError', code: 'ERR_NETNS_COMMAND_FAILED', exitCode: 3, signal: null, stderr: 'oops\n' });
    const sleeper = a.spawn('sleep', ['30'], { stdio: 'ignore' });
    await once(sleeper, 'spawn');
    sleeper.kill('SIGTERM');
    expect(await once(sleeper, 'exit')).toEqual([null, 'SIGTERM']);
  });

  it('with { etc: true } binds /etc/netns/NAME over /etc and remounts /sys, as ip netns exec', async () => {
    const etcDir = `/etc/netns/${nameA}`;
    mkdirSync(etcDir, { recursive: true });
    writeFileSync(`${etcDir}/hosts`, '10.77.0.2 peer-b\n');
    try {
      const hosts = await a.execFile('cat', ['/etc/hosts'], { etc: true });
      expect(hosts.stdout).toBe('10.77.0.2 peer-b\n');
      const sys = await a.execFile('ls', ['/sys/class/net'], { etc: true });
      expect(sys.stdout.split('\n').filter(Boolean).sort()).toEqual(['eth0', 'lo']);
      const plain = await a.execFile('cat', ['/etc/hosts']);
      expect(plain.stdout).toBe(readFileSync('/etc/hosts', 'utf8'));
    } finally {
      rmSync(etcDir, { recursive: true, force: true });
    }
    using anonymous = NetNS.current();
    expect(() => anonymous.spawn('true', [], { etc: true })).toThrow(expect.objectContaining({ code: 'ERR_NETNS_INVALID_ARG' }));
  });

  it('sets sysctls in one namespace only', async () => {
    const key = 'net.ipv4.conf.eth0.forwarding';
    const hostForwarding = readFileSync('/proc/sys/net/ipv4/ip_forward', 'utf8').trim();
    // A new namespace copies IPv4 settings from the first one (net.core.devconf_inherit_init_net 0):
    // b starts with whatever the host had, so a is set to the other value.
    const bBefore = [await b.sysctl.get('net.ipv4.ip_forward'), await b.sysctl.get(key)];
    const other = bBefore[0] === '1' ? '0' : '1';
    await a.sysctl.set('net.ipv4.ip_forward', Number(other));
    await a.sysctl.set(key, other);
    expect(await a.sysctl.get('net.ipv4.ip_forward')).toBe(other);
    expect(await a.sysctl.get('net/ipv4/conf/eth0/forwarding')).toBe(other);
    expect([await b.sysctl.get('net.ipv4.ip_forward'), await b.sysctl.get(key)]).toEqual(bBefore);
    expect(readFileSync('/proc/sys/net/ipv4/ip_forward', 'utf8').trim()).toBe(hostForwarding);
  });

  it('refuses sysctls outside net.* and path tricks', async () => {
    await expect(a.sysctl.set('kernel.hostname', 'x')).rejects.toMatchObject({ code: 'ERR_NETNS_SYSCTL_SCOPE' });
    await expect(a.sysctl.get('vm.swappiness')).rejects.toMatchObject({ code: 'ERR_NETNS_SYSCTL_SCOPE' });
    for (const bad of ['net/../kernel/hostname', '/proc/sys/net/ipv4/ip_forward', 'net.ipv4\0x', 'net..ipv4', '']) {
      await expect(a.sysctl.get(bad)).rejects.toMatchObject({ code: 'ERR_NETNS_INVALID_SYSCTL' });
    }
    await expect(a.sysctl.get('net.ipv4.no_such_knob')).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('reads /proc/net as the namespace sees it', async () => {
    const devices = (text: string) => [...text.matchAll(/^\s*([^\s:]+):/gm)].map((m) => m[1]).sort();
    expect(devices((await a.readFile('/proc/net/dev')).toString())).toEqual(['eth0', 'lo']);
    expect(devices((await a.readFile('/proc/self/net/dev')).toString())).toEqual(['eth0', 'lo']);
    expect(devices(readFileSync('/proc/self/net/dev', 'utf8'))).not.toEqual(['eth0', 'lo']);
    await expect(a.readFile('/etc/passwd')).rejects.toMatchObject({ code: 'ERR_NETNS_INVALID_ARG' });
    await expect(a.readFile('/proc/net/../../etc/passwd')).rejects.toMatchObject({ code: 'ERR_NETNS_INVALID_ARG' });
  });

  it('hands out raw descriptors made inside the namespace: a netlink socket sees its links', async () => {
    const fd = await a.socket('netlink', 'raw', 0); // NETLINK_ROUTE
    try {
      expect(dumpLinkNames(fd)).toEqual(['eth0', 'lo']);
    } finally {
      closeSync(fd);
    }
    // the same dump from a host socket shows the host's links, which are not A's
    using host = NetNS.current();
    const hostFd = await host.socket('netlink', 'raw', 0);
    try {
      expect(dumpLinkNames(hostFd)).not.toEqual(['eth0', 'lo']);
    } finally {
      closeSync(hostFd);
    }
    await expect(a.socket('bogus' as 'inet', 'stream')).rejects.toMatchObject({ code: 'ERR_NETNS_INVALID_ARG' });
    await expect(a.socket('inet', 'bogus' as 'stream')).rejects.toMatchObject({ code: 'ERR_NETNS_INVALID_ARG' });
  });

  it('leaves the fd count alone after 10,000 socket creations, and every thread home', async () => {
    const before = openFdCount();
    for (let round = 0; round < 10; round++) {
      const fds = await Promise.all(Array.from({ length: 1000 }, () => a.socket('inet', 'dgram')));
      for (const fd of fds) closeSync(fd);
    }
    expect(Math.abs(openFdCount() - before)).toBeLessThanOrEqual(2);
    expect(threadsAwayFrom(home)).toEqual([]);
  });

  it('rejects bad input with clear codes', async () => {
    const closed = NetNS.open(nameA);
    closed.close();
    await expect(closed.socket('inet', 'stream')).rejects.toMatchObject({ code: 'ERR_NETNS_CLOSED' });
    expect(() => closed.spawn('true')).toThrow(expect.objectContaining({ code: 'ERR_NETNS_CLOSED' }));
    for (const host of ['example.com', '10.0.0.256', '', 'localhost']) {
      await expect(a.connect({ host, port: 80 })).rejects.toMatchObject({ code: 'ERR_NETNS_INVALID_ARG' });
      await expect(a.listen(net.createServer(), { host })).rejects.toMatchObject({ code: 'ERR_NETNS_INVALID_ARG' });
    }
    await expect(a.connect({ host: '127.0.0.1', port: 70000 })).rejects.toMatchObject({ code: 'ERR_NETNS_INVALID_ARG' });
    await expect(a.createSocket('udp6', { address: '127.0.0.1' })).rejects.toMatchObject({ code: 'ERR_NETNS_INVALID_ARG' });
    expect(() => a.spawn('true', 'not-an-array' as unknown as string[])).toThrow(expect.objectContaining({ code: 'ERR_NETNS_INVALID_ARG' }));
  });

  it('works from a user Worker too, whose I/O threads are joined when it exits', async () => {
    const { Worker } = await import('node:worker_threads');
    const { threadCount } = await import('../helpers/process-state.js');
    const before = threadCount();
    const worker = new Worker(
      `const { parentPort, workerData } = require('node:worker_threads');
       import(workerData.index).then(async ({ NetNS }) => {
         const ns = NetNS.open(workerData.path);
         const fd = await ns.socket('inet', 'dgram');
         require('node:fs').closeSync(fd);
         const { stdout } = await ns.execFile('readlink', ['/proc/self/ns/net']);
         parentPort.postMessage({ created: NetNS.current().inode !== ns.inode, seen: stdout.trim() });
       });`,
      { eval: true, workerData: { index: new URL('../../dist/index.js', import.meta.url).href, path: a.path } },
    );
    const message = await new Promise((resolve) => worker.once('message', resolve));
    expect(message).toEqual({ created: true, seen: `net:[${a.inode}]` });
    expect(await new Promise((resolve) => worker.once('exit', resolve))).toBe(0);
    expect(threadCount()).toBe(before);
  });

  it('refuses the I/O methods inside withNetNS, where fn is already in the namespace', async () => {
    const error = await withNetNS(a, async (path: string) => {
      const { NetNS } = await import('netns');
      return NetNS.open(path)
        .socket('inet', 'stream')
        .then(
          () => null,
          (e: { code: string }) => e.code,
        );
    }, a.path);
    expect(error).toBe('ERR_NETNS_SWITCHED_THREAD');
  });
});

const RTM_GETLINK = 18;
const RTM_NEWLINK = 16;
const NLMSG_DONE = 3;
const NLMSG_ERROR = 2;
const NLM_F_REQUEST_DUMP = 0x1 | 0x300;
const IFLA_IFNAME = 3;

/** Link names from an RTM_GETLINK dump on a blocking NETLINK_ROUTE socket (rtnetlink message layout: nlmsghdr, ifinfomsg, rtattrs). */
function dumpLinkNames(fd: number): string[] {
  const request = Buffer.alloc(32);
  request.writeUInt32LE(32, 0);
  request.writeUInt16LE(RTM_GETLINK, 4);
  request.writeUInt16LE(NLM_F_REQUEST_DUMP, 6);
  request.writeUInt32LE(1, 8);
  request.writeUInt8(0, 16); // ifi_family AF_UNSPEC
  writeSync(fd, request);
  const names: string[] = [];
  const buffer = Buffer.alloc(1 << 16);
  for (;;) {
    const length = readSync(fd, buffer);
    for (let offset = 0; offset + 16 <= length; ) {
      const messageLength = buffer.readUInt32LE(offset);
      const type = buffer.readUInt16LE(offset + 4);
      if (type === NLMSG_DONE) return names.sort();
      if (type === NLMSG_ERROR) throw new Error(`netlink error ${buffer.readInt32LE(offset + 16)}`);
      if (type === RTM_NEWLINK) {
        for (let at = offset + 32; at + 4 <= offset + messageLength; ) {
          const attrLength = buffer.readUInt16LE(at);
          if (attrLength < 4) break;
          if (buffer.readUInt16LE(at + 2) === IFLA_IFNAME) names.push(buffer.toString('utf8', at + 4, at + attrLength).replace(/\0+$/, ''));
          at += (attrLength + 3) & ~3;
        }
      }
      offset += (messageLength + 3) & ~3;
    }
  }
}

function readAll(socket: net.Socket): Promise<string> {
  return new Promise((resolve, reject) => {
    let data = '';
    socket.setEncoding('utf8').on('data', (chunk) => (data += chunk)).on('end', () => resolve(data)).on('error', reject);
  });
}

function connectFromHost(port: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => resolve(socket)).on('error', reject);
  });
}

function once(emitter: NodeJS.EventEmitter, event: string): Promise<unknown[]> {
  return new Promise((resolve) => emitter.once(event, (...args: unknown[]) => resolve(args)));
}
