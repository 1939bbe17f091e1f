// What a refused namespace name, run directory or options object says
// (src/core/names.ts, own.ts): the value as given and the rule it broke, so
// a caller can fix the call from the message alone.
import { describe, expect, it } from 'vitest';
import { assertValidName, checkRunDir, mountableRunDir, nameInRunDir, resolveNamespacePath } from '../../dist/core/names.js';
import { ownOptions } from '../../dist/core/own.js';

function refusal(fn: () => unknown): { code?: string; message: string } {
  try {
    fn();
  } catch (error) {
    return error as { code?: string; message: string };
  }
  throw new Error('expected a refusal');
}

describe('refused names say why', () => {
  it.each([
    [42, 'invalid namespace name 42: must be a string'],
    ['', 'invalid namespace name "": reserved or empty'],
    ['..', 'invalid namespace name "..": reserved or empty'],
    ['a/b', `invalid namespace name "a/b": must not contain '/'`],
    ['a\0b', 'invalid namespace name "a\\u0000b": must not contain a NUL byte'],
    ['a\nb', 'invalid namespace name "a\\nb": must not contain control characters (0x00-0x1f, 0x7f)'],
    ['a\ud800', 'invalid namespace name "a\\ud800": must be well-formed Unicode (a lone surrogate would be written as U+FFFD)'],
    ['é'.repeat(128), `invalid namespace name "${'é'.repeat(128)}": longer than 255 bytes`],
  ])('%j', (name, message) => {
    expect(refusal(() => assertValidName(name))).toEqual(expect.objectContaining({ code: 'ERR_NETNS_INVALID_NAME', message }));
  });

  it('a bare name means the run directory, anything with a slash a path, and an empty one is refused', () => {
    expect(resolveNamespacePath('a')).toBe('/run/netns/a');
    expect(resolveNamespacePath('a', '/tmp/ns')).toBe('/tmp/ns/a');
    expect(resolveNamespacePath('/proc/1/ns/net')).toBe('/proc/1/ns/net');
    expect(refusal(() => resolveNamespacePath(''))).toMatchObject({ code: 'ERR_NETNS_INVALID_ARG', message: 'a namespace path or name must be a non-empty string' });
  });

  it('names a path directly in the run directory, and nothing else', () => {
    expect(nameInRunDir('/run/netns/a', '/run/netns')).toBe('a');
    for (const path of ['/run/netns', '/run/netns/', '/run/netns/a/b', '/run/netnsx/a', '/tmp/other/a']) expect(nameInRunDir(path, '/run/netns')).toBeUndefined();
  });
});

describe('refused run directories say why', () => {
  it('must be absolute, without NUL, and not / itself', () => {
    expect(checkRunDir(undefined)).toBe('/run/netns');
    expect(checkRunDir('/tmp//ns/./x/')).toBe('/tmp/ns/x');
    for (const given of ['relative', '/', '/tmp/..', '/a\0b', 7]) {
      expect(refusal(() => checkRunDir(given))).toMatchObject({
        code: 'ERR_NETNS_INVALID_ARG',
        message: `runDir must be an absolute path (not /) without a NUL byte, got ${JSON.stringify(given)}`,
      });
    }
  });

  it('may not lead to / through a symlink, for a create or attach that mounts on it', () => {
    expect(mountableRunDir('/nonexistent/run/dir')).toBe('/nonexistent/run/dir');
    expect(refusal(() => mountableRunDir('/proc/self/root'))).toMatchObject({
      code: 'ERR_NETNS_INVALID_ARG',
      message: 'runDir "/proc/self/root" is / itself: it would become a shared mount',
    });
  });
});

describe('options objects', () => {
  it('must be objects, the message naming what was given', () => {
    expect(ownOptions(undefined)).toEqual({});
    for (const [given, kind] of [
      [null, 'null'],
      [[1], 'an array'],
      ['x', 'string'],
    ] as const) {
      expect(refusal(() => ownOptions(given as never))).toMatchObject({ code: 'ERR_NETNS_INVALID_ARG', message: `options must be an object, got ${kind}` });
    }
  });
});
