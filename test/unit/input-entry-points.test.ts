// Every entry point of package.json's exports: each exported function, public
// class constructor and static method, called with no arguments and with
// numbers where objects and strings go, either returns normally (where that
// is a valid call) or throws/rejects with a coded error: a NetnsError, or a
// CniError (PluginError) in netns/cni where the CNI protocol judges the value.
// A TypeError from inside, or a silent success on nonsense, fails here.
import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { closePool, NetnsError } from '../../dist/index.js';
import { CniError } from '../../dist/cni/index.js';

const packageJson = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  exports: Record<string, { default?: string } | string>;
};
const entryPoints = Object.entries(packageJson.exports)
  .filter(([, target]) => typeof target === 'object' && target.default?.endsWith('.js'))
  .map(([name, target]) => [name, new URL(`../../${(target as { default: string }).default}`, import.meta.url).href] as const);

// TypeScript-private constructors: the static open()/create()/parse() make these; never called directly.
const PRIVATE_CONSTRUCTORS = new Set(['NetNS', 'AddressSets', 'NetlinkHandle', 'AttributeMap', 'NetlinkWatcher']);

// Calls that are valid as made here and return normally. `sweep()` is not made
// at all: it deletes other runs' leftovers, which a unit test must not touch.
const VALID: Record<string, (args: unknown[]) => boolean> = {
  closePool: () => true,
  poolIdle: () => true,
  poolStats: () => true,
  ioStats: () => true,
  shimPath: () => true,
  toCniError: () => true, // turns anything into a CniError: that is its job
  masqueradeLayout: () => true,
  threadNetns: () => true,
  openNetlink: (args) => args.length === 0, // the caller's own namespace
  'NetNS.current': () => true, // takes no argument; extra ones are ignored as JavaScript does
  'NetNS.list': (args) => args.length === 0,
  'NetNS.watch': (args) => args.length === 0,
  'NetNS.create': (args) => args.length === 0, // an anonymous namespace (root only)
  'NetNS.fromPid': (args) => args[0] === 42, // a pid; valid when that process exists
  'NetlinkHandle.open': (args) => args.length === 0,
  NetnsError: () => true, // error classes take what they are given
  AbortError: () => true,
  CniError: (args) => args.length > 0,
  ManualClock: (args) => args.length === 0 || typeof args[0] === 'number',
  MemoryBackend: () => true,
  SharedAddressSets: (args) => args.length === 0, // default hold and hand-off times
};

type Call = { label: string; entry: string; isCni: boolean; run: () => unknown; valid: boolean };

async function callsOf(entry: string, href: string): Promise<Call[]> {
  const module = (await import(href)) as Record<string, unknown>;
  const calls: Call[] = [];
  const isCni = entry.startsWith('./cni');
  const add = (label: string, key: string, make: (args: unknown[]) => unknown) => {
    for (const args of [[], [42], [42, 42, 42]]) {
      if (label === 'sweep' && args.length === 0) continue;
      calls.push({ label: `${label}(${args.join(', ')})`, entry, isCni, run: () => make(args), valid: VALID[key]?.(args) ?? false });
    }
  };
  for (const [name, value] of Object.entries(module)) {
    if (typeof value !== 'function') continue;
    const fn = value as ((...args: unknown[]) => unknown) & Record<string, unknown>;
    if (!/^class\b/.test(Function.prototype.toString.call(fn))) {
      add(name, name, (args) => fn(...args));
      continue;
    }
    if (!PRIVATE_CONSTRUCTORS.has(name)) add(`new ${name}`, name, (args) => new (fn as unknown as new (...a: unknown[]) => unknown)(...args));
    for (const key of Object.getOwnPropertyNames(fn)) {
      if (['length', 'name', 'prototype'].includes(key) || typeof fn[key] !== 'function') continue;
      add(`${name}.${key}`, `${name}.${key}`, (args) => (fn[key] as (...a: unknown[]) => unknown).apply(fn, args));
    }
  }
  return calls;
}

/** Lets go of whatever a valid call returned (a handle, socket or watcher). */
function release(value: unknown): void {
  const target = value as { close?: () => void; destroy?: () => void } | null;
  if (typeof target?.close === 'function') target.close();
  else if (typeof target?.destroy === 'function') target.destroy();
}

const calls = (await Promise.all(entryPoints.map(([entry, href]) => callsOf(entry, href)))).flat();

describe('every export refuses nonsense with a coded error', () => {
  afterAll(() => closePool());

  it('found the entry points and their exports', () => {
    expect(entryPoints.map(([entry]) => entry)).toEqual(expect.arrayContaining(['.', './addrset', './testing', './netlink', './cni', './cni/plumbing', './cni/testing']));
    expect(calls.length).toBeGreaterThan(200);
  });

  it.each(calls.map((call) => [`${call.entry} ${call.label}`, call] as const))('%s', async (_name, call) => {
    let returned: unknown;
    try {
      returned = await call.run();
    } catch (error) {
      const coded = (error instanceof NetnsError && typeof error.code === 'string') || (call.isCni && error instanceof CniError && typeof error.code === 'number');
      expect(coded, `threw ${String(error)} (${(error as Error)?.constructor?.name})`).toBe(true);
      return;
    }
    release(returned);
    expect(call.valid, 'returned normally, though not listed as a valid call').toBe(true);
  });
});
