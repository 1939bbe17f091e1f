// The public shapes of netns/addrset: options, results, reports, events.
import type { NetNS } from '../netns.js';
import type { Family } from './addresses.js';
import type { AddrsetBackend } from './backend.js';
import type { Clock } from './clock.js';

/** What AddressSets.open and openExisting take; only `netns` and `table` are required. */
export interface AddressSetsOptions {
  /** The namespace holding the sets: a NetNS, a name or a path. */
  netns: NetNS | string;
  /** An inet table; created if missing, shared with your own chains, never flushed or deleted. */
  table: string;
  /** How long a deleted owner's (emptied) sets live before they are destroyed. Default 20,000; any length, days included. */
  deleteDelayMs?: number;
  /** First retry after a failed destroy (e.g. EBUSY); doubles up to maxRetryIntervalMs. Default 1,000. */
  retryIntervalMs?: number;
  /** The longest wait between retries of a failed destroy. Default 30,000 (never below retryIntervalMs). */
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
  /** Where time comes from: tests pass ManualClock from netns/testing. Default: the wall clock, with timers that never keep the process alive. */
  clock?: Clock;
}

/** The `backend` option: 'netlink' (default), 'nft', or a backend object of your own (which you close). */
export type AddrsetBackendChoice = 'netlink' | 'nft' | AddrsetBackend;

/** An owner's two set names, for your rules to reference (`ip saddr @<v4>`, `ip6 saddr @<v6>`). */
export interface SetRefs {
  /** The IPv4 set's name, `<prefix>4_<hash>`. */
  v4: string;
  /** The IPv6 set's name, `<prefix>6_<hash>`. */
  v6: string;
}

/**
 * An owner's sets as this process sees them: 'live' (ensured here and not
 * deleted), 'pending' (deleted, waiting for its deadline) or 'orphan' (owned
 * by this prefix but not live here: another process's, or left by one).
 */
export type SetState = 'live' | 'pending' | 'orphan';

/** One set, as AddressSets.list reports it. */
export interface SetInfo {
  /** Null when the owner was too long to record (only its hash is kept) or the set is unregistered. */
  owner: string | null;
  /** 4 or 6. */
  family: Family;
  /** The set's name in the table. */
  name: string;
  /** How many elements (addresses or prefixes) it holds. */
  elements: number;
  /** As this process sees it: 'live' only for owners it ensured; a set held by another process shows as 'orphan'. */
  state: SetState;
  /** For pending: when the set may be destroyed (epoch ms). */
  deadline?: number;
}

/** One owner's sets with their elements, as AddressSets.inspect reports them. */
export interface OwnerDetails {
  /** The owner asked about. */
  owner: string;
  /** As in SetInfo, or 'absent' when the kernel has no set of this owner. */
  state: SetState | 'absent';
  /** For pending: when the sets may be destroyed (epoch ms). */
  deadline?: number;
  /** The IPv4 set's name and its elements, as nft lists them (empty when absent). */
  v4: {
    /** The set's name in the table. */
    name: string;
    /** Its addresses and prefixes, as nft lists them. */
    elements: string[];
  };
  /** The IPv6 set's name and its elements, as nft lists them (empty when absent). */
  v6: {
    /** The set's name in the table. */
    name: string;
    /** Its addresses and prefixes, as nft lists them. */
    elements: string[];
  };
}

/** What AddressSets.gc takes. */
export interface GcOptions {
  /** Owners that are live: required, so that forgetting it cannot remove everything. [] means none besides this process's own. */
  live: Iterable<string>;
  /** Only report what would go; remove nothing. Default false. */
  dryRun?: boolean;
}

/** A set gc removed or kept. */
export interface GcEntry {
  /** The recorded owner; null when only its hash is known, or the set is debris with no record. */
  owner: string | null;
  /** 4 or 6. */
  family: Family;
  /** The set's name in the table. */
  name: string;
  /** Kept ones only: why, in words ('pending delete', 'live in this process', 'destroy failed: ...'). */
  reason?: string;
  /** For a pending set kept: its deadline (epoch ms). */
  deadline?: number;
}

/** What AddressSets.gc did, or with dryRun would do. */
export interface GcReport {
  /** Whether this was a dry run (nothing removed). */
  dryRun: boolean;
  /** The sets removed (or that would be). */
  removed: GcEntry[];
  /** The sets of this prefix left in place, each with its reason. */
  kept: GcEntry[];
}

/** AddressSets.stats(): how many owners are in each state now, and counts of transactions and destroys since open(). */
export interface AddressSetsStats {
  /** Owners ensured and not deleted. */
  live: number;
  /** Owners deleted, their sets waiting for the deadline. */
  pending: number;
  /** Owners whose sets this process found but does not hold. */
  orphan: number;
  /** Transactions sent to the kernel, failed ones included. */
  transactions: number;
  /** Transactions the kernel refused. */
  failedTransactions: number;
  /** Owners whose sets were destroyed. */
  destroyed: number;
  /** Destroys the kernel refused (each is retried, e.g. after EBUSY). */
  destroyFailures: number;
  /** The earliest deadline of a pending owner (epoch ms), absent when none is pending; already past for a destroy the kernel refused. */
  nextDeadline?: number;
}

/** The events AddressSets emits, each with one object argument. */
export interface AddressSetsEvents {
  /** delete() emptied the owner's sets; they are destroyed at `deadline` (epoch ms). */
  deleteDeferred: [
    {
      /** The owner deleted. */
      owner: string;
      /** Its sets' names. */
      names: SetRefs;
      /** When they are destroyed (epoch ms). */
      deadline: number;
    },
  ];
  /** ensure() brought a pending owner back before its deadline; it keeps the same sets. */
  deleteCancelled: [
    {
      /** The owner brought back. */
      owner: string;
      /** Its sets' names, unchanged. */
      names: SetRefs;
    },
  ];
  /** A pending owner's sets were destroyed. */
  destroyed: [
    {
      /** The owner whose sets went. */
      owner: string;
      /** The names of the sets destroyed. */
      names: SetRefs;
    },
  ];
  /** The kernel refused to destroy them (EBUSY: a rule still references one); retried after `retryInMs`. */
  destroyFailed: [
    {
      /** The owner whose sets stay. */
      owner: string;
      /** The names of the sets that stay. */
      names: SetRefs;
      /** Why the backend failed (`EBUSY` when a rule still references a set). */
      error: Error;
      /** Milliseconds until the next attempt. */
      retryInMs: number;
    },
  ];
}
