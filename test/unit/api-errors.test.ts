// Every error the package raises is a NetnsError with a code: what the addon
// throws, what Node raises about a socket or spawn of ours, and aborts.
import { describe, expect, it } from 'vitest';
import { abortError, AbortError, fromNative, fromNodeError, kindOf, NetnsError, systemError, toolMissing } from '../../dist/core/errors.js';

describe('errors are NetnsErrors with a code', () => {
  it('fromNative: system errors in Node wording, argument checks as INVALID_ARG, anything else UNKNOWN, cause kept', () => {
    const system = Object.assign(new Error('x'), { code: 'ENOENT', errno: 2, syscall: 'open', path: '/nope' });
    expect(fromNative(system)).toMatchObject({ code: 'ENOENT', errno: -2, syscall: 'open', path: '/nope' });
    const typeError = new TypeError('fd must be a number');
    expect(fromNative(typeError)).toMatchObject({ code: 'ERR_NETNS_INVALID_ARG', message: 'fd must be a number', cause: typeError });
    const plain = new Error('the watch cannot start again');
    expect(fromNative(plain)).toMatchObject({ code: 'ERR_NETNS_UNKNOWN', cause: plain });
    expect(fromNative('thrown string')).toMatchObject({ code: 'ERR_NETNS_UNKNOWN', message: 'thrown string', cause: 'thrown string' });
    const ours = new NetnsError('ERR_NETNS_CLOSED', 'closed', { extack: 'kept' });
    expect(fromNative(ours)).toBe(ours);
  });

  it("fromNodeError: Node's code, errno, syscall, address and port kept, Node's error the cause, the namespace in the message", () => {
    const node = Object.assign(new Error('connect ECONNREFUSED 10.0.0.1:80'), {
      code: 'ECONNREFUSED',
      errno: -111,
      syscall: 'connect',
      address: '10.0.0.1',
      port: 80,
    });
    const wrapped = fromNodeError(node, '(in the namespace /run/netns/a)');
    expect(wrapped).toBeInstanceOf(NetnsError);
    expect(wrapped).toMatchObject({ code: 'ECONNREFUSED', errno: -111, syscall: 'connect', address: '10.0.0.1', port: 80, cause: node });
    expect(wrapped.message).toBe('connect ECONNREFUSED 10.0.0.1:80 (in the namespace /run/netns/a)');
    expect(fromNodeError(new Error('no code'), '(x)')).toMatchObject({ code: 'ERR_NETNS_UNKNOWN' });
    const ours = new NetnsError('EADDRINUSE', 'bind EADDRINUSE');
    expect(fromNodeError(ours, '(x)')).toBe(ours);
    expect(fromNodeError(ours, '(x)').message).toBe('bind EADDRINUSE (x)'); // added once
  });

  it('has own properties only for the fields it was given, as Node errors do (console.log and spread show nothing else)', () => {
    expect(Object.keys(new NetnsError('ERR_NETNS_CLOSED', 'closed'))).toEqual(['name', 'code']);
    const system = new NetnsError('ENOENT', 'gone', { errno: -2, syscall: 'open', path: '/x' });
    expect(Object.keys(system).sort()).toEqual(['code', 'errno', 'name', 'path', 'syscall']);
  });

  it('fromNative: a coded error without a syscall keeps its own code and message, with no path unless it had one', () => {
    const coded = Object.assign(new Error('the namespace is not ours'), { code: 'ERR_NETNS_NOT_NETNS', errno: 22 });
    const converted = fromNative(coded);
    expect(converted).toMatchObject({ code: 'ERR_NETNS_NOT_NETNS', message: 'the namespace is not ours' });
    expect(Object.keys(converted).sort()).toEqual(['code', 'name']);
    expect(fromNative(Object.assign(new Error('m'), { code: 'ERR_NETNS_NOT_NETNS', path: '/p' }))).toMatchObject({ path: '/p' });
    // Only a numeric errno with a syscall makes a system error.
    expect(fromNative(Object.assign(new Error('m'), { code: 'ERR_NETNS_NOT_NETNS', errno: 'EINVAL', syscall: 'open' }))).toMatchObject({ code: 'ERR_NETNS_NOT_NETNS', message: 'm' });
  });

  it("fromNodeError: a thrown non-Error is UNKNOWN with the namespace in its message; fields Node did not give are absent, not undefined", () => {
    expect(fromNodeError('gone', '(in x)')).toMatchObject({ code: 'ERR_NETNS_UNKNOWN', message: 'gone (in x)', cause: 'gone' });
    const bare = fromNodeError(Object.assign(new Error('spawn failed'), { code: 'EAGAIN' }), '(in x)');
    expect(Object.keys(bare).sort()).toEqual(['code', 'name']);
    const pathOnly = fromNodeError(Object.assign(new Error('open'), { code: 'ENOENT', path: '/x' }), '(in x)');
    expect(Object.keys(pathOnly).sort()).toEqual(['code', 'name', 'path']);
    const mistyped = fromNodeError(Object.assign(new Error('odd'), { code: 'EIO', errno: 'x', syscall: 5, path: 7 }), '(in x)');
    expect(Object.keys(mistyped).sort()).toEqual(['code', 'name']);
  });

  it("systemError names an errno libuv does not know as the system does, and one unknown to both E<n>", () => {
    // ECHILD (10) is in os.constants.errno but not in util.getSystemErrorMap().
    expect(systemError(10, 'waitid')).toMatchObject({ code: 'ECHILD', errno: -10, message: 'ECHILD: unknown system error, waitid' });
    expect(systemError(-4000, 'ioctl', '/dev/x')).toMatchObject({ code: 'E4000', errno: -4000, path: '/dev/x', message: "E4000: unknown system error, ioctl '/dev/x'" });
  });

  it('kindOf says what a refused value is, telling arrays and null from objects', () => {
    expect([null, [], {}, 'x', 1, undefined].map(kindOf)).toEqual(['null', 'an array', 'object', 'string', 'number', 'undefined']);
  });

  it('toolMissing names the Debian package, and keeps the cause when there is one', () => {
    const cause = new Error('spawn nft ENOENT');
    const missing = toolMissing('ERR_NETNS_NFT_MISSING', 'nft', 'nftables', cause);
    expect(missing).toMatchObject({ code: 'ERR_NETNS_NFT_MISSING', cause, message: 'nft is not installed: install the Debian package nftables (apt-get install nftables)' });
    expect('cause' in toolMissing('ERR_NETNS_NFT_MISSING', 'nft', 'nftables')).toBe(false);
  });

  it('AbortError is a NetnsError with code ABORT_ERR, as Node names it', () => {
    const reason = 'changed my mind';
    const error = abortError(AbortSignal.abort(reason));
    expect(error).toBeInstanceOf(AbortError);
    expect(error).toBeInstanceOf(NetnsError);
    expect(error).toMatchObject({ name: 'AbortError', code: 'ABORT_ERR', cause: reason, message: 'The operation was aborted' });
    expect('cause' in new AbortError('stopped')).toBe(false);
  });
});
