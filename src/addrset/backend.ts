// The small interface the address-set manager drives. A backend applies a
// list of operations as one atomic transaction and reports the kernel's view
// of our table. Errors carry Node-style codes: EBUSY (a set still referenced
// by a rule), ENOENT, EEXIST, ERR_NETNS_ADDRSET_OVERLAP, or the kernel's or
// nft's own words (ERR_NETNS_NFT from the nft backend).
import type { Entry, Family } from './addresses.js';
import type { Op } from './ops.js';

/** One set of the table, as a backend reads it. */
export interface KernelSet {
  /** The set's name. */
  name: string;
  /** 4 or 6 for an address set of our shape (an interval set, no other flag); 'other' for any other set. */
  family: Family | 'other';
  /** Elements, their text as nft lists them; null when read without elements. */
  elements: Entry[] | null;
}

/** The table as AddrsetBackend.read found it. */
export interface KernelView {
  /** False when the table is not there (sets and records are then empty). */
  tableExists: boolean;
  /** Every set of the table but the registry, by name. */
  sets: Map<string, KernelSet>;
  /** Registry elements: key (a set name) -> comment. */
  records: Map<string, string>;
}

/**
 * The right to write the table: one holder at a time, across processes. A
 * transaction started under it keeps it held until that transaction has
 * landed or failed, even if the holder's process dies meanwhile.
 */
export interface WriterLock {
  /** A descriptor every process applying a transaction inherits (null where no process is involved). */
  readonly fd: number | null;
  /** Lets the next writer in (once this holder's transactions have landed); idempotent. */
  release(): void;
}

/** What AddrsetBackend.read is asked for. */
export interface ReadOptions {
  /** Whose elements to read: every set's, none, or the named sets' only. */
  elements: boolean | ReadonlySet<string>;
  /** The registry set's name (owner records are its elements): read as records, not listed as a set. */
  registry: string;
  /** The caller holds the writer lock with no transaction in flight (see AddrsetBackend.read). */
  soleWriter?: boolean;
}

/**
 * How AddressSets reaches the kernel: the `backend` option takes 'netlink',
 * 'nft' or an object of this shape (MemoryBackend from netns/testing, or your
 * own). A backend applies lists of Op atomically, reads the table back, and
 * provides the writer lock. Its errors carry codes AddressSets acts on:
 * EBUSY, ENOENT, EEXIST, ERR_NETNS_ADDRSET_OVERLAP, ERR_NETNS_ADDRSET_LOCKED.
 */
export interface AddrsetBackend {
  /** Applies all operations atomically, or none, as the holder of `lock`. */
  apply(ops: Op[], lock: WriterLock): Promise<void>;
  /**
   * The table as the kernel has it; `registry` names the set whose element
   * comments are read. With elements it is one consistent snapshot; without,
   * it is consistent only while nobody writes (the caller holds the writer
   * lock and has no transaction in flight). `soleWriter`: the caller holds the
   * writer lock and has no transaction in flight, so changes elsewhere in the
   * namespace (which a backend may not tell apart from changes to this table)
   * must not make the read fail.
   */
  read(options: ReadOptions): Promise<KernelView>;
  /** Waits up to timeoutMs for the writer lock (ERR_NETNS_ADDRSET_LOCKED after that). */
  lock(options: { timeoutMs: number }): Promise<WriterLock>;
  /**
   * As the holder of `lock`: deletes the table if nothing is in it but the
   * registry, with no record (no set, chain, map or object of anyone), in a
   * transaction the kernel refuses if anything changed since that was seen.
   * Resolves whether it went. A backend without it keeps the table.
   */
  removeTableIfEmpty?(registry: string, lock: WriterLock): Promise<boolean>;
  /** Gives up what the backend holds open (the netlink backend's socket); idempotent. */
  close?(): void;
}

/** Whether a read with these options wants the elements of `set`. */
export function wantsElements(elements: ReadOptions['elements'], set: string): boolean {
  return elements === true || (elements !== false && elements.has(set));
}

export function emptyView(): KernelView {
  return { tableExists: false, sets: new Map(), records: new Map() };
}
