/**
 * What Go's skel, types, invoke and ipam packages give a CNI plugin author.
 *
 * Importing it loads neither the addon nor the namespace machinery:
 * a plugin answering VERSION, GC or STATUS starts as fast as Node does, and
 * CNI_NETNS is checked (loading the addon) only for ADD, CHECK and DEL.
 *
 * Guide: [CNI plugins](../../docs/cni.md).
 *
 * @module netns/cni
 */
export { handleCall, pluginMain } from './skel.js';
export type { CallEnvironment, CallOutcome, CmdArgs, Handler, HandleCallOptions, PluginFunctions, PluginInfo } from './skel.js';
export { serveResident, shimPath } from './daemon/index.js';
export type { ResidentOptions, ResidentServer } from './daemon/index.js';
export { CniCode, CniError, toCniError } from './errors.js';
export { CURRENT_VERSION, versionAtLeast } from './version.js';
export { convertResult, parseResult, passThrough, prevResultOf } from './result.js';
export type { IpConfig020, Result020, WireResult } from './result.js';
export { hasCapability, parseCniArgs, runtimeConfig, validAttachments } from './args.js';
export type { ArgKind, ArgSpec, CniArgs, PortMapping, WellKnownRuntimeConfig } from './args.js';
export { delegate, delegateAdd, delegateVersions, execPlugin, findInPath } from './invoke.js';
export type { ConfigBytes, DelegatedCommand, DelegateEnvironment } from './invoke.js';
export { execAdd, execAddThen, execCheck, execDel, execGc, execStatus, ipamType } from './ipam.js';
export type { IpamInput } from './ipam.js';
export { SPEC_VERSIONS } from './types.js';
export type { Attachment, CniCommand, Dns, ErrorObject, Interface, IpConfig, NetConf, Result, Result040, Route, SpecVersion } from './types.js';
