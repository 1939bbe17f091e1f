export { ErrorCodes, NetnsError } from './errors.js';
export { ioStats } from './io/run-io.js';
export { NetNS } from './netns.js';
export type { PoolStats } from './pool.js';
export { closePool, configurePool, poolIdle, poolStats, withNetNS } from './run.js';
export type { NetnsTarget, PoolOptions, WithNetNSOptions } from './run.js';
export type { ExecFileResult, NetnsSpawnOptions } from './io/spawn.js';
export type { ConnectOptions, ListenOptions, SocketDomain, SocketType, UdpOptions } from './io/sockets.js';
export type { Sysctl } from './io/sysctl.js';
