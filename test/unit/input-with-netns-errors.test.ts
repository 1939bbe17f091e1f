// What withNetNS rejects with when fn's side goes wrong in ways that are not
// fn's own Error: a worker module Node cannot import, and a thrown non-Error.
// Both must be NetnsErrors with a code; an Error fn throws still passes as is.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { closePool, NetnsError, withNetNS, workerModule } from '../../dist/index.js';
import { deserializeError, serializeError } from '../../dist/run/wire.js';
import { privileged } from '../helpers/privileges.js';

// What crosses back from a pool thread is what serializeError made of it.
const roundTrip = (thrown: unknown) => deserializeError(structuredClone(serializeError(thrown)));

describe('withNetNS errors that are not fn\'s own Error', () => {
  afterAll(() => closePool());

  // The import runs before the worker enters the namespace: no privileges needed.
  it('a worker module Node cannot find rejects with a NetnsError keeping Node\'s code, Node\'s error as cause', async () => {
    const missing = workerModule(new URL('file:///nonexistent/netns-input-test.mjs'));
    const error = await withNetNS('/proc/self/ns/net', missing.names!).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NetnsError);
    expect(error).toMatchObject({ code: 'ERR_MODULE_NOT_FOUND', message: expect.stringContaining('file:///nonexistent/netns-input-test.mjs') });
    expect((error as Error).cause).toMatchObject({ code: 'ERR_MODULE_NOT_FOUND' });
  });

  it("a module's own error at import passes through as fn's do, coded or not (here a file it reads is missing)", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'netns-module-throws-'));
    try {
      const file = join(dir, 'throws.mjs');
      writeFileSync(file, "import { readFileSync } from 'node:fs';\nconst e = new Error('cfg'); e.code = 'MY_CONFIG';\nif (process.argv) throw e;\nexport const run = () => readFileSync('/nonexistent');\n");
      const own = await withNetNS('/proc/self/ns/net', workerModule(pathToFileURL(file)).run!).catch((e: unknown) => e);
      expect(own).not.toBeInstanceOf(NetnsError);
      expect(own).toMatchObject({ code: 'MY_CONFIG', message: 'cfg' });
      const reads = join(dir, 'reads.mjs');
      writeFileSync(reads, "import { readFileSync } from 'node:fs';\nreadFileSync('/nonexistent/netns-config');\nexport const run = () => 1;\n");
      const enoent = await withNetNS('/proc/self/ns/net', workerModule(pathToFileURL(reads)).run!).catch((e: unknown) => e);
      expect(enoent).not.toBeInstanceOf(NetnsError);
      expect(enoent).toMatchObject({ code: 'ENOENT', path: '/nonexistent/netns-config' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it.each([
    ['a string', 'str', 'str'],
    ['a number', 42, 42],
    ['undefined', undefined, undefined],
    ['an object', { a: [1] }, { a: [1] }],
  ])('a thrown %s becomes ERR_NETNS_NON_ERROR_THROWN with the value', (_what, thrown, value) => {
    const error = roundTrip(thrown);
    expect(error).toBeInstanceOf(NetnsError);
    expect(error).toMatchObject({ code: 'ERR_NETNS_NON_ERROR_THROWN', value });
    expect(error.message).toContain(thrown === 'str' ? '"str"' : String(thrown));
  });

  it('a thrown value that cannot be cloned is named in the message, with no value', () => {
    const error = roundTrip(Symbol('odd'));
    expect(error).toMatchObject({ code: 'ERR_NETNS_NON_ERROR_THROWN', message: expect.stringContaining('Symbol(odd)') });
    expect('value' in error).toBe(false);
  });

  it('an Error passes as it is, now with its cause', () => {
    const error = roundTrip(Object.assign(new RangeError('mine', { cause: new Error('under') }), { code: 'MY_CODE' }));
    expect(error).not.toBeInstanceOf(NetnsError);
    expect(error).toBeInstanceOf(RangeError);
    expect(error).toMatchObject({ message: 'mine', code: 'MY_CODE', cause: expect.objectContaining({ message: 'under' }) });
  });

  it.runIf(privileged).each([['a string', 'str'], ['undefined', undefined]])('fn throwing %s rejects with ERR_NETNS_NON_ERROR_THROWN', async (_what, thrown) => {
    const error = await withNetNS('/proc/self/ns/net', (t: unknown) => { throw t; }, thrown).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NetnsError);
    expect(error).toMatchObject({ code: 'ERR_NETNS_NON_ERROR_THROWN', value: thrown });
  });
});
