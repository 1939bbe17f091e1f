/**
 * A runtime's side of CNI for a plugin's own tests.
 *
 * It runs plugins as libcni does (environment, stdin, chains with prevResult,
 * the result cache), plus Go's testutils version helpers. It runs executables
 * and never loads the addon, so it works in any test runner.
 *
 * Guide: [Testing a CNI plugin](../../../docs/cni-testing.md).
 *
 * @module netns/cni/testing
 */
export { CniHarness } from './harness.js';
export type { ChainResult, GcArgs, HarnessOptions, RuntimeConf } from './harness.js';
export { loadConfList, parseConfList } from './conflist.js';
export type { NetworkConfigList, PluginConf } from './conflist.js';
export { invokePlugin } from './invocation.js';
export type { AttachmentEnv, CniArgPairs, PluginCall, PluginOutput } from './invocation.js';
export { CACHE_KIND, ResultCache } from './cache.js';
export type { CacheEntry, CacheKey, CachedAttachment } from './cache.js';
export { PluginError } from './plugin-error.js';
export { checkPlugin, formatReport, SCENARIO_NAMES } from './conformance/index.js';
export type { ConformanceOptions, ScenarioName, ScenarioReport } from './conformance/index.js';
export type { SpawnPlugin } from '../invoke.js';
export { hasCheck, hasIpVersion, hasStatus } from '../version.js';
export { SPEC_VERSIONS } from '../types.js';
