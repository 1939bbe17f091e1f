/**
 * Network namespaces for Node.js: make, name and find them as `ip netns` does
 * ({@link NetNS}), run a function inside one on a thread this package owns
 * ({@link withNetNS}), and create servers, sockets and child processes in one.
 *
 * Errors are {@link NetnsError}s with a stable `code` ({@link ErrorCode}):
 * one of {@link ErrorCodes}, or the errno name of a refused system call
 * (`ENOENT`, `EPERM`, ...). Guides: [design and limits](../docs/design.md),
 * [named namespaces](../docs/namespaces.md), [toolchains](../docs/toolchains.md).
 *
 * @module netns
 */
export { ErrorCodes, NetnsError } from './core/errors.js';
export type { ErrorCode, NetnsErrorCode } from './core/errors.js';
export { ioStats } from './io/run-io.js';
export { NetNS } from './netns.js';
export type { PoolStats } from './run/with-netns.js';
export { closePool, configurePool, poolIdle, poolStats, withNetNS } from './run/with-netns.js';
export type { NetnsTarget, PoolOptions, WithNetNSOptions } from './run/with-netns.js';
export { workerModule } from './run/worker-module.js';
export type { ModuleExport, WorkerModule } from './run/worker-module.js';
export type { CommandFailedError, ExecFileOptions, ExecFileResult, NetnsSpawnOptions } from './io/spawn.js';
export type { ConnectOptions, ListenOptions, SocketDomain, SocketType, UdpOptions } from './io/sockets.js';
export type { Sysctl } from './io/sysctl.js';
export type { NamespaceEntry } from './lifecycle.js';
export type { RunDirOption } from './core/names.js';
export type { NamespaceEvent, NamespaceWatch, NamespaceWatchOptions } from './namespace-watch.js';
