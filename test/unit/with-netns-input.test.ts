// withNetNS and the pool's settings refuse bad input with a coded error, before
// any thread or descriptor is touched; a script run with --input-type still gets working threads.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { configurePool, withNetNS } from '../../dist/index.js';

const packageRoot = fileURLToPath(new URL('../..', import.meta.url));

describe('withNetNS input', () => {
  it.each([
    ['a signal that is not an AbortSignal', () => withNetNS('/proc/self/ns/net', { signal: 'x' } as never, () => 1)],
    ['null options', () => withNetNS('/proc/self/ns/net', null as never, () => 1)],
    ['a target that is neither a NetNS nor a string', () => withNetNS(42 as never, () => 1)],
    ['a fn that is not a function', () => withNetNS('/proc/self/ns/net', {}, 'x' as never)],
  ])('rejects %s with ERR_NETNS_INVALID_ARG', async (_what, call) => {
    await expect(call()).rejects.toMatchObject({ name: 'NetnsError', code: 'ERR_NETNS_INVALID_ARG' });
  });

  it.each([0, -1, 1.5, '2', Number.NaN])('configurePool refuses maxWorkers %s', (maxWorkers) => {
    expect(() => configurePool({ maxWorkers: maxWorkers as number })).toThrow(expect.objectContaining({ code: 'ERR_NETNS_INVALID_ARG' }));
  });

  it('works from a script run with --input-type=module -e (its workers do not inherit that option)', async () => {
    const script = `import('netns').then((m) => m.withNetNS('/proc/self/ns/net', () => 1)).then(
      (v) => console.log(JSON.stringify({ v })),
      (e) => console.log(JSON.stringify({ code: e.code, message: e.message })))`;
    const stdout = await new Promise<string>((resolve, reject) =>
      execFile(process.execPath, ['--input-type=module', '-e', script], { cwd: packageRoot }, (error, out) => (error ? reject(error) : resolve(out))),
    );
    // Unprivileged, setns fails (EPERM) in a worker that did start; as root it runs.
    expect(JSON.parse(stdout)).toEqual(process.getuid?.() === 0 ? { v: 1 } : { code: 'EPERM', message: expect.stringContaining('setns') });
  });
});
