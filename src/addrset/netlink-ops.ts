// How the address-set ops of one transaction become nf_tables messages, as
// nft 1.0.6 would send them for the same commands. Each message remembers the
// op it came from, so that a failure names that op.
import { ErrorCodes, netnsError } from '../core/errors.js';
import type { NetlinkRequest } from '../netlink/message.js';
import { IFNAMSIZ } from '../nftables/constants.js';
import { elementMessages, flushSet, intervalElements, stringKey, type ElementList, type ElementTarget, type WireElement } from '../nftables/elements.js';
import { deleteSet, newSet, newTableKeepingFlags, type TableName } from '../nftables/messages.js';
import type { Entry, Family } from './addresses.js';
import { unknownOp, type Op } from './ops.js';

const KEY_BYTES: Record<Family, number> = { 4: 4, 6: 16 };

export interface EncodedOps {
  requests: NetlinkRequest[];
  /** For each request, the index of the op it came from. */
  opOf: number[];
}

export function encodeOps(table: TableName, ops: readonly Op[]): EncodedOps {
  const encoder = new OpEncoder(table);
  ops.forEach((op, index) => encoder.encode(op, index));
  return { requests: encoder.requests, opOf: encoder.opOf };
}

// No object spreads here: a gc's batch makes thousands of targets, and a
// spread costs far more than a literal, in cold code most of all.
class OpEncoder {
  readonly requests: NetlinkRequest[] = [];
  readonly opOf: number[] = [];
  readonly #table: TableName;
  /** Sets made in this batch carry an id later messages may name them by (as nft does). */
  readonly #setIds = new Map<string, number>();
  /** Sets known empty at this point of the batch: nft leads their first ranges with END 0. */
  readonly #empty = new Set<string>();
  #index = 0;

  constructor(table: TableName) {
    this.#table = table;
  }

  encode(op: Op, index: number): void {
    this.#index = index;
    switch (op.op) {
      case 'addTable':
        return this.#add(newTableKeepingFlags(this.#table));
      case 'addRegistry':
        return this.#add(newSet(this.#table, { name: op.name, keyType: 'ifname', interval: false, id: this.#madeHere(op.name) }));
      case 'createSet':
        this.#empty.add(op.name);
        this.#add(newSet(this.#table, { name: op.name, keyType: op.family === 4 ? 'ipv4_addr' : 'ipv6_addr', interval: true, id: this.#madeHere(op.name) }));
        return this.#add(flushSet(this.#set(op.name)));
      case 'deleteSet':
        this.#empty.delete(op.name);
        return this.#add(deleteSet(this.#table, op.name));
      case 'flushSet':
        this.#empty.add(op.name);
        return this.#add(flushSet(this.#set(op.name)));
      case 'addElements': {
        if (op.elements.length === 0) return;
        const wire = addressElements(op.elements, this.#empty.delete(op.name));
        return this.#addAll(elementMessages('add', this.#target(op.name), wire, `add element inet ${this.#table.table} ${op.name}`));
      }
      case 'deleteElements':
        if (op.elements.length === 0) return;
        return this.#addAll(elementMessages('delete', this.#target(op.name), addressElements(op.elements, false), `delete element inet ${this.#table.table} ${op.name}`));
      case 'putRecord': {
        // Add, delete, add with the comment: replaces whatever entry is there (nft 1.0.6 has no "destroy").
        const key = stringKey(op.key, IFNAMSIZ);
        const what = `put record ${op.key} in set inet ${this.#table.table} ${op.registry}`;
        this.#record('add', op.registry, { key }, what);
        this.#record('delete', op.registry, { key }, what);
        return this.#record('add', op.registry, { key, comment: op.comment }, what);
      }
      case 'deleteRecord':
        return this.#record('delete', op.registry, { key: stringKey(op.key, IFNAMSIZ) }, `delete record ${op.key} from set inet ${this.#table.table} ${op.registry}`);
      default:
        return unknownOp(op);
    }
  }

  #madeHere(set: string): number {
    const id = this.#setIds.size + 1;
    this.#setIds.set(set, id);
    return id;
  }

  #set(set: string): TableName & { set: string } {
    return { family: this.#table.family, table: this.#table.table, set };
  }

  #target(set: string): ElementTarget {
    const target: ElementTarget = this.#set(set);
    const setId = this.#setIds.get(set);
    if (setId !== undefined) target.setId = setId;
    return target;
  }

  #record(kind: 'add' | 'delete', registry: string, element: WireElement, what: string): void {
    this.#addAll(elementMessages(kind, this.#target(registry), [element], what));
  }

  #add(request: NetlinkRequest): void {
    this.requests.push(request);
    this.opOf.push(this.#index);
  }

  #addAll(requests: NetlinkRequest[]): void {
    for (const request of requests) this.#add(request);
  }
}

/** Entries (an address, a prefix, a range) as interval-set elements. */
function addressElements(entries: readonly Entry[], intoEmptySet: boolean): ElementList {
  const family = entries[0]!.family;
  if (entries.some((entry) => entry.family !== family)) throw netnsError(ErrorCodes.ADDRSET_INVALID_ADDRESS, 'one operation mixes IPv4 and IPv6 elements');
  return intervalElements(entries, KEY_BYTES[family], intoEmptySet);
}
