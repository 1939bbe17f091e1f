// netns/cni and netns/cni/plumbing: every exported function, called with
// nothing or with a number where an object or string goes, throws or rejects
// with a coded error before it opens or changes anything: a NetnsError
// (ERR_NETNS_INVALID_ARG for a plugin author's slip), or a CniError where the
// CNI protocol judges the value (a result, a version). No privileges needed.
import { afterAll, describe, expect, it } from 'vitest';
import * as cni from '../../dist/cni/index.js';
import * as plumbing from '../../dist/cni/plumbing.js';
import { NetNS, NetnsError } from '../../dist/index.js';
import { CniError } from '../../dist/cni/index.js';

const invalid = expect.objectContaining({ name: 'NetnsError', code: 'ERR_NETNS_INVALID_ARG' });

/** What a call did: returned, or threw/rejected with what. */
async function outcome(call: () => unknown): Promise<{ threw: unknown } | { returned: unknown }> {
  try {
    return { returned: await call() };
  } catch (threw) {
    return { threw };
  }
}

const coded = (error: unknown) =>
  (error instanceof NetnsError && typeof error.code === 'string') || (error instanceof CniError && typeof error.code === 'number');

// Valid with no argument (or ignoring a number): these return normally.
const RETURN_NORMALLY = new Set(['shimPath', 'toCniError', 'masqueradeLayout']);

describe('every function of netns/cni and netns/cni/plumbing refuses bad arguments with a coded error', () => {
  const functions = [...Object.entries(cni), ...Object.entries(plumbing)].filter(
    ([name, value]) => typeof value === 'function' && !/^[A-Z]/.test(name), // classes: see input-entry-points
  ) as [string, (...args: unknown[]) => unknown][];

  it.each(functions.flatMap(([name, fn]) => [[name, fn, []], [name, fn, [42]], [name, fn, [42, 42, 42]]] as const))('%s(%j)', async (name, fn, args) => {
    const result = await outcome(() => fn(...args));
    if ('returned' in result) {
      expect(RETURN_NORMALLY.has(name) ? 'allowed' : `${name} returned`).toBe('allowed');
    } else {
      expect(coded(result.threw), `${name}(${args.join(', ')}) threw ${String(result.threw)}`).toBe(true);
    }
  });
});

describe('the calls the probe named', () => {
  const ns = NetNS.current();
  afterAll(() => ns.close());

  it('handleCall() with no handlers, env or readStdin rejects instead of answering', async () => {
    await expect(cni.handleCall(undefined as never, undefined as never, undefined as never, undefined as never)).rejects.toEqual(invalid);
    const funcs = { add: () => ({ cniVersion: '1.1.0' }), del: () => {}, check: () => {} };
    const info = { versions: ['1.1.0' as const] };
    await expect(cni.handleCall(funcs, info, undefined as never, async () => Buffer.alloc(0))).rejects.toEqual(invalid);
    await expect(cni.handleCall(funcs, info, {}, undefined as never)).rejects.toEqual(invalid);
    await expect(cni.handleCall(funcs, info, {}, async () => Buffer.alloc(0))).resolves.toMatchObject({ exitCode: 0 }); // no CNI_COMMAND: about
  });

  it('configureInterface() and addMasquerade() with nothing reject naming the argument', async () => {
    await expect(plumbing.configureInterface(undefined as never, undefined as never, undefined as never)).rejects.toThrow(/configureInterface: ns must be a NetNS/);
    await expect(plumbing.configureInterface(ns, 'eth0', 42 as never)).rejects.toThrow(/result must be an object/);
    await expect(plumbing.addMasquerade(undefined as never, undefined as never, undefined as never)).rejects.toThrow(/addMasquerade: hostNs must be a NetNS/);
    await expect(plumbing.addMasquerade(ns, { network: 'n', containerID: 'c', ifname: 'eth0' }, 42 as never)).rejects.toEqual(invalid);
  });

  it('setAlias given a NetNS instead of a Netlink says to open one', async () => {
    await expect(plumbing.setAlias(ns as never, 'x', 'y')).rejects.toThrow(/nl must be a Netlink from openNetlink\(\), got a NetNS/);
    await expect(plumbing.listWithAliases(ns as never)).rejects.toEqual(invalid);
    await expect(plumbing.findHostEnd(ns as never, 'n', 'k')).rejects.toEqual(invalid);
  });

  it('the IPAM calls reject (not throw) for a missing input', async () => {
    for (const call of [cni.execAdd, cni.execDel, cni.execCheck, cni.execGc, cni.execStatus]) {
      const result = call(undefined as never);
      expect(result).toBeInstanceOf(Promise);
      await expect(result).rejects.toEqual(invalid);
    }
  });
});
