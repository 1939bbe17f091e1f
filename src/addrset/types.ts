// The public shapes of netns/addrset: options, results, reports, events.
import type { NetNS } from '../netns.js';
import type { Family } from './addresses.js';
import type { AddrsetBackend } from './backend.js';
import type { Clock } from './clock.js';

export interface AddressSetsOptions {
  /** The namespace holding the sets: a NetNS, a name or a path. */
  netns: NetNS | string;
  /** An inet table; created if missing, shared with your own chains, never flushed or deleted. */
  table: string;
  /** How long a deleted owner's (emptied) sets live before they are destroyed. Default 20,000; any length, days included. */
  deleteDelayMs?: number;
  /** First retry after a failed destroy (e.g. EBUSY); doubles up to maxRetryIntervalMs. Default 1,000. */
  retryIntervalMs?: number;
  maxRetryIntervalMs?: number;
  /** Set-name prefix marking the sets this instance owns. Default 'as'. */
  prefix?: string;
  /**
   * Only look: take no writer lock, create nothing, destroy nothing (e.g. listing
   * while an agent owns the table). Every change is refused. Default false.
   */
  readOnly?: boolean;
  /** How long open() waits for another writer of the table to finish. Default 10,000. */
  lockTimeoutMs?: number;
  /**
   * How the sets reach the kernel: 'netlink' (the default: nf_tables netlink from
   * a socket made in the namespace, no nft needed), 'nft' (runs the nft binary,
   * one process per transaction), or a backend object (tests pass MemoryBackend
   * from netns/testing). A backend object stays the caller's to close.
   */
  backend?: AddrsetBackendChoice;
  clock?: Clock;
}

export type AddrsetBackendChoice = 'netlink' | 'nft' | AddrsetBackend;

export interface SetRefs {
  v4: string;
  v6: string;
}

export type SetState = 'live' | 'pending' | 'orphan';

export interface SetInfo {
  /** Null when the owner was too long to record (only its hash is kept) or the set is unregistered. */
  owner: string | null;
  family: Family;
  name: string;
  elements: number;
  /** As this process sees it: 'live' only for owners it ensured; a set held by another process shows as 'orphan'. */
  state: SetState;
  /** For pending: when the set may be destroyed (epoch ms). */
  deadline?: number;
}

export interface OwnerDetails {
  owner: string;
  state: SetState | 'absent';
  deadline?: number;
  v4: { name: string; elements: string[] };
  v6: { name: string; elements: string[] };
}

export interface GcOptions {
  /** Owners that are live: required, so that forgetting it cannot remove everything. [] means none besides this process's own. */
  live: Iterable<string>;
  dryRun?: boolean;
}

export interface GcEntry {
  owner: string | null;
  family: Family;
  name: string;
  reason?: string;
  deadline?: number;
}

export interface GcReport {
  dryRun: boolean;
  removed: GcEntry[];
  kept: GcEntry[];
}

export interface AddressSetsStats {
  live: number;
  pending: number;
  orphan: number;
  transactions: number;
  failedTransactions: number;
  destroyed: number;
  destroyFailures: number;
}

export interface AddressSetsEvents {
  deleteDeferred: [{ owner: string; names: SetRefs; deadline: number }];
  deleteCancelled: [{ owner: string; names: SetRefs }];
  destroyed: [{ owner: string; names: SetRefs }];
  destroyFailed: [{ owner: string; names: SetRefs; error: Error; retryInMs: number }];
}
