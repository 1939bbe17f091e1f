// A backend that speaks nf_tables over netlink from a socket made inside the
// namespace: no nft process, no nft binary. What it writes is what nft 1.0.6
// would write for the same operations (the same messages, the same set
// userdata and element comments), so `nft list` shows it as the NftBackend
// would have written it, and either backend reads the other's table.
// Names travel as netlink attributes, never as nft syntax.
import { ErrorCodes, netnsError, type NetnsError } from '../core/errors.js';
import type { NetlinkHandle } from '../netlink/handle.js';
import type { NetlinkTransport } from '../netlink/transport.js';
import type { NetNS } from '../netns.js';
import { commit, type BatchError } from '../nftables/batch.js';
import { NFPROTO_INET, NFT_SET_ANONYMOUS, NFT_SET_INTERVAL, NFT_SET_MAP, NFT_SET_OBJECT, TYPE_IP6ADDR, TYPE_IPADDR } from '../nftables/constants.js';
import { TableReader } from '../nftables/dump.js';
import { DUMP_ATTEMPTS } from '../netlink/handle.js';
import { own } from '../netlink/validate.js';
import { rangesOf } from '../nftables/elements.js';
import { deleteTable, type TableName } from '../nftables/messages.js';
import { openNftables } from '../nftables/socket.js';
import { entryFromRange, type Family } from './addresses.js';
import { emptyView, wantsElements, type AddrsetBackend, type KernelSet, type KernelView, type ReadOptions, type WriterLock } from './backend.js';
import { encodeOps } from './netlink-ops.js';
import type { Op, TableRef } from './ops.js';
import { lockTable } from './table-lock.js';

/** nf_tables' answer to a batch planned at a generation that has passed. */
const ERESTART = 85;

export class NetlinkBackend implements AddrsetBackend, Disposable {
  readonly #ns: NetNS;
  readonly #ref: TableRef;
  readonly #table: TableName;
  readonly #handle: NetlinkHandle;

  private constructor(ns: NetNS, ref: TableRef, handle: NetlinkHandle) {
    this.#ns = ns;
    this.#ref = ref;
    this.#table = { family: NFPROTO_INET, table: ref.table };
    this.#handle = handle;
  }

  /** Opens the backend's nfnetlink socket inside `ns`; close() closes it. */
  static async create(ns: NetNS, ref: TableRef, options: { transport?: NetlinkTransport } = {}): Promise<NetlinkBackend> {
    return new NetlinkBackend(ns, ref, await openNftables(ns, options));
  }

  /** Idempotent. */
  close(): void {
    this.#handle.close();
  }

  [Symbol.dispose](): void {
    this.close();
  }

  // `lock` needs no passing on: the transaction lands or fails inside this
  // process's sendmsg, so no process outlives its holder with it in flight.
  async apply(ops: Op[], _lock: WriterLock): Promise<void> {
    const { requests, opOf } = encodeOps(this.#table, ops);
    try {
      commit(this.#handle, requests);
    } catch (error) {
      const index = (error as BatchError).requestIndex;
      throw describe(error as NetnsError, index === undefined ? undefined : ops[opOf[index]!]);
    }
  }

  // The check and the delete are one step for the kernel: the delete carries
  // the generation the check was read at, and nf_tables refuses the batch
  // (ERESTART) if any transaction landed in between, a hand-made chain that
  // uses a set included. Then it looks again, a few times, before leaving the
  // table for a later call.
  async removeTableIfEmpty(registry: string, _lock: WriterLock): Promise<boolean> {
    for (let attempt = 1; attempt <= DUMP_ATTEMPTS; attempt++) {
      const seen = await this.#emptyAt(registry);
      if (seen === undefined) return false;
      try {
        commit(this.#handle, [deleteTable(this.#table)], seen);
        return true;
      } catch (error) {
        if ((error as NetnsError).errno === -ERESTART) continue;
        if ((error as NetnsError).code === 'ENOENT') return false; // removed by hand meanwhile
        throw error;
      }
    }
    return false;
  }

  /** The generation at which the table held only an empty registry; undefined if it held more, or is not there. */
  async #emptyAt(registry: string): Promise<number | undefined> {
    try {
      return await new TableReader(this.#handle, this.#table).consistent(async (reader) => {
        if ((await reader.tableUse()) !== 1) return undefined;
        const sets = await reader.sets();
        if (sets.length !== 1 || sets[0]!.name !== registry || (await reader.elements(registry)).length > 0) return undefined;
        return reader.generation;
      });
    } catch (error) {
      if ((error as NetnsError).code === ErrorCodes.NETLINK_DUMP_INTERRUPTED) return undefined; // busy: a later call removes it
      throw error;
    }
  }

  lock({ timeoutMs }: { timeoutMs: number }): Promise<WriterLock> {
    return lockTable({ inode: this.#ns.inode, path: this.#ns.path, table: this.#ref.table }, timeoutMs);
  }

  async read(options: ReadOptions): Promise<KernelView> {
    // Own properties: a polluted Object.prototype must not make a reader a sole writer (or pick its sets).
    const { elements, registry, soleWriter } = own(options);
    return new TableReader(this.#handle, this.#table).consistent(async (reader) => {
      if (!(await reader.tableExists())) return emptyView();
      const view: KernelView = { tableExists: true, sets: new Map(), records: new Map() };
      for (const set of await reader.sets()) {
        // Maps (verdict, data or object maps) and a rule's anonymous sets are no sets of ours whatever
        // their names, as `nft list` (and so the nft backend) does not show them as sets: gc must never
        // take one for debris. Nor is a set of another shape than ours (an interval set, no other flag).
        if ((set.flags & (NFT_SET_MAP | NFT_SET_OBJECT | NFT_SET_ANONYMOUS)) !== 0) continue;
        if (set.name === registry) {
          const records = await reader.elements(registry);
          for (let i = 0; i < records.length; i++) view.records.set(keyText(records.key(i)), records.comment(i) ?? '');
          continue;
        }
        const family: Family | 'other' = set.flags !== NFT_SET_INTERVAL ? 'other' : set.keyType === TYPE_IPADDR ? 4 : set.keyType === TYPE_IP6ADDR ? 6 : 'other';
        const kernelSet: KernelSet = { name: set.name, family, elements: null };
        if (family !== 'other' && wantsElements(elements, set.name)) {
          const ranges = rangesOf(await reader.elements(set.name));
          kernelSet.elements = ranges.map((range) => entryFromRange(family, range.first, range.last));
        }
        view.sets.set(set.name, kernelSet);
      }
      return view;
    }, { soleWriter });
  }
}

/** A registry key (type ifname) back as text: the bytes up to the first NUL. */
function keyText(key: Buffer): string {
  const nul = key.indexOf(0);
  return key.toString('utf8', 0, nul < 0 ? key.length : nul);
}

/** The kernel's error, named by the op that failed; an EEXIST on adding to an interval set is an overlap, as nft reports it. */
function describe(error: NetnsError, op: Op | undefined): NetnsError {
  if (op?.op === 'addElements' && error.code === 'EEXIST') {
    return netnsError(ErrorCodes.ADDRSET_OVERLAP, `${error.message} (an element overlaps one in set ${op.name})`, { cause: error }) as NetnsError;
  }
  return error;
}
