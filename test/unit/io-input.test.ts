import net from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { NetNS } from '../../dist/index.js';

// Everything here is refused before any system call, so it needs no privileges:
// the namespace is the test's own.
const invalid = expect.objectContaining({ code: 'ERR_NETNS_INVALID_ARG' });

describe('bad input to the I/O and lifecycle functions gets coded errors', () => {
  const ns = NetNS.current();
  afterAll(() => ns.close());

  it('NetNS.identify takes exactly one of { pid } or { inode }', () => {
    for (const target of [null, undefined, 42, 'x', {}, { pid: 1, inode: 2 }, { inode: -1 }, { inode: 1.5 }, { inode: '7' }, { pid: '1' }]) {
      expect(() => NetNS.identify(target as { pid: number })).toThrow(invalid);
    }
  });

  it('ns.socket refuses a protocol outside what socket(2) takes instead of wrapping it', async () => {
    for (const protocol of [2 ** 32 + 1, 2 ** 31, -1, 1.5, Number.NaN, '6']) {
      await expect(ns.socket('inet', 'raw', protocol as number)).rejects.toEqual(invalid);
    }
  });

  it('listen, connect and createSocket check their options, ports, hosts, backlog and timeout', async () => {
    for (const options of [null, 'x', 5] as unknown[]) {
      await expect(ns.listen(net.createServer(), options as object)).rejects.toEqual(invalid);
      await expect(ns.connect(options as object)).rejects.toEqual(invalid);
      await expect(ns.createSocket('udp4', options as object)).rejects.toEqual(invalid);
    }
    for (const backlog of [-1, 2 ** 32, '10', 1.5]) {
      await expect(ns.listen(net.createServer(), { host: '127.0.0.1', backlog: backlog as number })).rejects.toEqual(invalid);
    }
    for (const timeout of [0, -5, Number.NaN, Number.POSITIVE_INFINITY, '100', 2 ** 31]) {
      await expect(ns.connect({ host: '127.0.0.1', port: 80, timeout: timeout as number })).rejects.toEqual(invalid);
    }
    for (const port of [undefined, 0, -1, 65536, '80', 1.5]) {
      await expect(ns.connect({ host: '127.0.0.1', port: port as number })).rejects.toEqual(invalid);
    }
    for (const host of [undefined, 5, '::1%', 'fe80::1%a/b']) {
      await expect(ns.connect({ host: host as string, port: 80 })).rejects.toEqual(invalid);
    }
    await expect(ns.createSocket('udp5' as 'udp4')).rejects.toEqual(invalid);
    for (const path of ['', 5, '/tmp/nsio-a\0b', 'x'.repeat(108)]) {
      await expect(ns.listen(net.createServer(), { path: path as string })).rejects.toEqual(invalid);
      await expect(ns.connect({ path: path as string })).rejects.toEqual(invalid);
    }
  });

  it('spawn and execFile check their options, stdio and input', async () => {
    for (const options of [null, 'x', 5, []] as unknown[]) {
      expect(() => ns.spawn('true', [], options as object)).toThrow(invalid);
      await expect(ns.execFile('true', [], options as object)).rejects.toEqual(invalid);
    }
    for (const stdio of ['bogus', 5, { 0: 'pipe' }]) expect(() => ns.spawn('true', [], { stdio } as object)).toThrow(invalid);
    expect(() => ns.spawn('true', [], { cwd: 5 } as object)).toThrow(invalid);
    expect(() => ns.spawn('true', [], { env: 'PATH=/bin' } as object)).toThrow(invalid);
    expect(() => ns.spawn('true', [], { etc: 'yes' } as object)).toThrow(invalid);
    // named as the caller numbers them, not by the helper's argv
    expect(() => ns.spawn('ec\0ho')).toThrow(expect.objectContaining({ code: 'ERR_NETNS_INVALID_ARG', message: expect.stringMatching(/^command must not hold a NUL byte/) }));
    expect(() => ns.spawn('echo', ['a', 'b\0c'])).toThrow(expect.objectContaining({ message: expect.stringMatching(/^args\[1\] must not hold a NUL byte/) }));
    await expect(ns.execFile('cat', [], { input: 42 } as object)).rejects.toEqual(invalid);
    await expect(ns.execFile('cat', [], { stdio: 'inherit' } as object)).rejects.toEqual(invalid);
    // options Node takes but that cannot work, or would be silently ignored, here
    for (const options of [{ uid: 65534 }, { gid: 65534 }, { killSignal: 'SIGNOPE' }]) {
      expect(() => ns.spawn('true', [], options as object)).toThrow(invalid);
      await expect(ns.execFile('true', [], options as object)).rejects.toEqual(invalid);
    }
    for (const options of [{ maxBuffer: 10 }, { encoding: 'buffer' }]) {
      await expect(ns.execFile('true', [], options as object)).rejects.toEqual(invalid);
    }
  });

  it('sysctl.set refuses values that would be written as [object Object] or cut at their first line', async () => {
    for (const value of [{}, [], null, undefined, Number.NaN, Symbol.iterator, '7\n8', '1\0']) {
      await expect(ns.sysctl.set('net.ipv4.ip_forward', value as string)).rejects.toMatchObject({ code: 'ERR_NETNS_INVALID_SYSCTL' });
    }
  });
});
