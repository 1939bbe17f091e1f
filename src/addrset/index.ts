/**
 * Per-owner address sets kept as nftables sets in a namespace.
 *
 * Guide: [Address sets](../../docs/addrset.md).
 *
 * @module netns/addrset
 */
export { AddressSets, MAX_DELETE_DELAY_MS } from './manager.js';
export { SharedAddressSets, type ShareOptions, type SharedAddressSetsOptions } from './shared.js';
export type {
  AddrsetBackendChoice,
  AddressSetsEvents,
  AddressSetsOptions,
  AddressSetsStats,
  GcEntry,
  GcOptions,
  GcReport,
  OwnerDetails,
  SetInfo,
  SetRefs,
  SetState,
} from './types.js';
export type { AddrsetBackend, KernelSet, KernelView, ReadOptions, WriterLock } from './backend.js';
export type { Entry, Family } from './addresses.js';
export type { Clock } from './clock.js';
export { ErrorCodes, NetnsError } from '../core/errors.js';
export type { Op } from './ops.js';
