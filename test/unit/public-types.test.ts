// The types public signatures use can be named from the entry points that
// expose those signatures (checked by `npm run typecheck`, which compiles this
// file; at run time the assertions are no-ops).
import { describe, expectTypeOf, it } from 'vitest';
import type { AddrsetBackend, Entry, Family, ReadOptions } from '../../dist/addrset/index.js';
import type { Handler, NetConf, PluginFunctions } from '../../dist/cni/index.js';
import type { ChainRef, DumpedRule, MasqueradeRule, MASQUERADE_CHAIN } from '../../dist/cni/plumbing.js';
import type { CapabilityName, dropThreadCapability, hasEffectiveCapability } from '../../dist/testing.js';

describe('types named by the entry points', () => {
  it('netns/addrset: Family, Entry and ReadOptions are what a backend reads and writes', () => {
    expectTypeOf<Family>().toEqualTypeOf<4 | 6>();
    expectTypeOf<Entry['family']>().toEqualTypeOf<Family>();
    expectTypeOf<Parameters<AddrsetBackend['read']>[0]>().toEqualTypeOf<ReadOptions>();
  });

  it('netns/cni: Handler is the type of each PluginFunctions command', () => {
    expectTypeOf<PluginFunctions['del']>().toEqualTypeOf<Handler<NetConf, void>>();
  });

  it('netns/cni/plumbing: ChainRef and DumpedRule', () => {
    expectTypeOf<typeof MASQUERADE_CHAIN>().toEqualTypeOf<ChainRef>();
    expectTypeOf<MasqueradeRule>().toExtend<DumpedRule>();
  });

  it('netns/testing: CapabilityName', () => {
    expectTypeOf<Parameters<typeof hasEffectiveCapability>[0]>().toEqualTypeOf<CapabilityName>();
    expectTypeOf<Parameters<typeof dropThreadCapability>[0]>().toEqualTypeOf<CapabilityName>();
  });
});
