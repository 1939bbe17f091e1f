// Native errors reach JavaScript in one shape: `code` plus a plain message,
// never prefixed by the code; errno errors also carry errno, syscall, path.
import { describe, expect, it } from 'vitest';
import { native } from '../../dist/core/native.js';

const SOCK_STREAM = 1;

function thrown(call: () => unknown): Error & Record<string, unknown> {
  try {
    call();
  } catch (error) {
    return error as Error & Record<string, unknown>;
  }
  throw new Error('did not throw');
}

describe('native error shape', () => {
  it('gives our own errors their code and a plain message', () => {
    const error = thrown(() => native().openNetns('/proc/self/ns/uts'));
    expect(error).toMatchObject({ code: 'ERR_NETNS_NOT_NETNS', path: '/proc/self/ns/uts' });
    expect(error.message).toBe("'/proc/self/ns/uts' is a uts namespace, not a network namespace");
  });

  it('gives errno errors their code, errno, syscall and path, and a plain message', () => {
    const error = thrown(() => native().openNetns('/nonexistent/nsnat-errors'));
    expect(error).toMatchObject({ code: 'ENOENT', errno: -2, syscall: 'open', path: '/nonexistent/nsnat-errors' });
    expect(error.message).toBe('No such file or directory');
  });

  it('gives the same shape to errors of I/O jobs', async () => {
    const { fd } = native().openNetns('/proc/self/ns/net');
    try {
      const missing = await native().ioReadFile(fd, '/nonexistent/nsnat-errors').catch((error: Error) => error);
      expect(missing).toMatchObject({ code: 'ENOENT', syscall: 'open', message: 'No such file or directory' });
      const invalid = await native().ioBind(fd, SOCK_STREAM, 'not-an-address', 0, false, -1).catch((error: Error) => error);
      expect(invalid).toMatchObject({
        code: 'ERR_NETNS_INVALID_ARG',
        message: 'not a numeric address in this namespace: not-an-address',
      });
    } finally {
      native().closeFd(fd);
    }
  });
});
