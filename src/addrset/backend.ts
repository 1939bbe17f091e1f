// The small interface the address-set manager drives. A backend applies a
// list of operations as one atomic transaction and reports the kernel's view
// of our table. Errors carry Node-style codes: EBUSY (a set still referenced
// by a rule), ENOENT, EEXIST, or ERR_NETNS_NFT with nft's own words.
import type { Family } from './addresses.js';
import type { Op } from './ops.js';

export interface KernelSet {
  name: string;
  family: Family | 'other';
  /** Elements in nft's canonical text; null when read without elements. */
  elements: string[] | null;
}

export interface KernelView {
  tableExists: boolean;
  sets: Map<string, KernelSet>;
  /** Registry elements: key (a set name) -> comment. */
  records: Map<string, string>;
}

export interface AddrsetBackend {
  /** Applies all operations atomically, or none. */
  apply(ops: Op[]): Promise<void>;
  /** The table as the kernel has it; `registry` names the set whose element comments are read. */
  read(options: { elements: boolean; registry: string }): Promise<KernelView>;
}

export function emptyView(): KernelView {
  return { tableExists: false, sets: new Map(), records: new Map() };
}
