// Every error the package raises is a NetnsError with a code: what the addon
// throws, what Node raises about a socket or spawn of ours, and aborts.
import { describe, expect, it } from 'vitest';
import { abortError, AbortError, fromNative, fromNodeError, NetnsError } from '../../dist/core/errors.js';

describe('errors are NetnsErrors with a code', () => {
  it('fromNative: system errors in Node wording, argument checks as INVALID_ARG, anything else UNKNOWN, cause kept', () => {
    const system = Object.assign(new Error('x'), { code: 'ENOENT', errno: 2, syscall: 'open', path: '/nope' });
    expect(fromNative(system)).toMatchObject({ code: 'ENOENT', errno: -2, syscall: 'open', path: '/nope' });
    const typeError = new TypeError('fd must be a number');
    expect(fromNative(typeError)).toMatchObject({ code: 'ERR_NETNS_INVALID_ARG', message: 'fd must be a number', cause: typeError });
    const plain = new Error('the watch cannot start again');
    expect(fromNative(plain)).toMatchObject({ code: 'ERR_NETNS_UNKNOWN', cause: plain });
    expect(fromNative('thrown string')).toMatchObject({ code: 'ERR_NETNS_UNKNOWN', message: 'thrown string' });
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

  it('AbortError is a NetnsError with code ABORT_ERR, as Node names it', () => {
    const reason = 'changed my mind';
    const error = abortError(AbortSignal.abort(reason));
    expect(error).toBeInstanceOf(AbortError);
    expect(error).toBeInstanceOf(NetnsError);
    expect(error).toMatchObject({ name: 'AbortError', code: 'ABORT_ERR', cause: reason });
  });
});
