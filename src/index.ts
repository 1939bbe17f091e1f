export { ErrorCodes, NetnsError } from './errors.js';
export { NetNS } from './netns.js';
export type { PoolStats } from './pool.js';
export { closePool, configurePool, poolStats, withNetNS } from './run.js';
export type { NetnsTarget, PoolOptions, WithNetNSOptions } from './run.js';
