// Reading a table by dumps, as one consistent view. nf_tables keeps a
// generation id that every committed transaction bumps; like nft
// (cache.c, mnl.c check_genid): GETGEN, the dumps (every reply's res_id must
// be the generation's low 16 bits), GETGEN again, and the whole read again if
// a transaction landed in between.
//
// The generation is the namespace's: a commit to any table bumps it, so a
// process committing to its own table in a loop would starve every reader of
// a large set. A reader that holds its table's writer lock knows that only a
// hand edit could change *this* table meanwhile; after the strict attempts it
// takes a read whatever the generation did (a set's dump resumes by position,
// which stays right while the set is unchanged).
import { ErrorCodes, netnsError, type NetnsError } from '../core/errors.js';
import { AttributeMap } from '../netlink/attributes.js';
import { DUMP_ATTEMPTS, type NetlinkHandle } from '../netlink/handle.js';
import { own } from '../netlink/validate.js';
import type { NetlinkMessage } from '../netlink/message.js';
import {
  NFGENMSG_SIZE,
  NFTA_GEN_ID,
  NFTA_SET_FLAGS,
  NFTA_SET_KEY_LEN,
  NFTA_SET_KEY_TYPE,
  NFTA_SET_NAME,
  NFTA_SET_USERDATA,
  NFTA_TABLE_USE,
  UDATA_SET_COMMENT,
} from './constants.js';
import { ElementList, parseElements } from './elements.js';
import { getElementsDump, getGeneration, getSetsDump, getTable, type TableName } from './messages.js';
import { parseUserdata, userdataString } from './userdata.js';

export interface DumpedSet {
  name: string;
  keyType: number;
  keyLength: number;
  /** NFTA_SET_FLAGS: NFT_SET_INTERVAL, NFT_SET_MAP... */
  flags: number;
  comment?: string;
}

/** The dumps of one consistent read; `generation` checks each reply. */
export class TableReader {
  readonly #handle: NetlinkHandle;
  readonly #ref: TableName;
  #generation = 0;
  #stale = false;
  /** The last read of a sole writer: dumps taken as they come. */
  #tolerant = false;

  constructor(handle: NetlinkHandle, ref: TableName) {
    this.#handle = handle;
    this.#ref = ref;
  }

  /**
   * Runs `read` until the generation is the same before and after it (and in
   * every reply). `soleWriter`: the caller holds the table's writer lock and has
   * nothing in flight; then one last read is taken as it comes.
   */
  async consistent<T>(read: (reader: TableReader) => Promise<T>, options: { soleWriter?: boolean } = {}): Promise<T> {
    // Own property only: an inherited soleWriter must not loosen a reader's check.
    const soleWriter = own(options).soleWriter === true;
    for (let attempt = 1; attempt <= DUMP_ATTEMPTS; attempt++) {
      this.#generation = await this.#currentGeneration();
      this.#stale = false;
      const result = await read(this).catch(async (error: NetnsError) => {
        // A set listed a moment ago and deleted since: stale if the generation moved on, else a real ENOENT.
        if (error.code !== 'ENOENT' || (await this.#currentGeneration()) === this.#generation) throw error;
        this.#stale = true;
        return undefined;
      });
      if (!this.#stale && (await this.#currentGeneration()) === this.#generation) return result as T;
    }
    if (soleWriter) {
      this.#tolerant = true;
      try {
        return await read(this);
      } finally {
        this.#tolerant = false;
      }
    }
    throw netnsError(
      ErrorCodes.NETLINK_DUMP_INTERRUPTED,
      `nftables: list table inet ${this.#ref.table}: the ruleset changed during the read ${DUMP_ATTEMPTS} times in a row`,
    );
  }

  /** The generation this read is taken at (a batch sent with it lands only if nothing changed since). */
  get generation(): number {
    return this.#generation;
  }

  async tableExists(): Promise<boolean> {
    return (await this.tableUse()) !== undefined;
  }

  /** How many chains, sets, objects and flowtables the table holds (anyone's); undefined when there is no table. */
  async tableUse(): Promise<number | undefined> {
    try {
      const replies = await this.#handle.request([getTable(this.#ref)]);
      this.#check(replies);
      const reply = replies[0]?.[0];
      const use = reply && AttributeMap.parse(reply.payload, NFGENMSG_SIZE).get(NFTA_TABLE_USE);
      if (!use || use.length < 4) throw netnsError(ErrorCodes.NETLINK_MALFORMED, `nftables: table inet ${this.#ref.table} came without its use count`);
      return use.readUInt32BE(0);
    } catch (error) {
      if ((error as NetnsError).code === 'ENOENT') return undefined;
      throw error;
    }
  }

  async sets(): Promise<DumpedSet[]> {
    const { type, header, attributes, what } = getSetsDump(this.#ref);
    const messages = await this.#handle.dump(type, header, attributes, what, { acceptInterrupted: this.#tolerant });
    this.#check([messages]);
    return messages.map(parseSet);
  }

  async elements(set: string): Promise<ElementList> {
    const { type, header, attributes, what } = getElementsDump(this.#ref, set);
    const messages = await this.#handle.dump(type, header, attributes, what, { acceptInterrupted: this.#tolerant });
    this.#check([messages]);
    const list = new ElementList();
    for (const message of messages) parseElements(message.payload, NFGENMSG_SIZE, list);
    return list;
  }

  async #currentGeneration(): Promise<number> {
    const [[reply]] = (await this.#handle.request([getGeneration()])) as [[NetlinkMessage | undefined]];
    const id = reply && AttributeMap.parse(reply.payload, NFGENMSG_SIZE).get(NFTA_GEN_ID);
    if (!id || id.length < 4) throw netnsError(ErrorCodes.NETLINK_MALFORMED, 'nftables: the generation reply has no id');
    return id.readUInt32BE(0);
  }

  // Every reply carries the generation it was made in (res_id, its low 16 bits).
  #check(groups: NetlinkMessage[][]): void {
    for (const message of groups.flat()) {
      if (message.payload.length >= NFGENMSG_SIZE && message.payload.readUInt16BE(2) !== (this.#generation & 0xffff)) this.#stale = true;
    }
  }
}

function parseSet(message: NetlinkMessage): DumpedSet {
  const attributes = AttributeMap.parse(message.payload, NFGENMSG_SIZE);
  const be = (type: number) => {
    const value = attributes.get(type);
    return value && value.length >= 4 ? value.readUInt32BE(0) : 0;
  };
  const set: DumpedSet = {
    name: attributes.string(NFTA_SET_NAME) ?? '',
    keyType: be(NFTA_SET_KEY_TYPE),
    keyLength: be(NFTA_SET_KEY_LEN),
    flags: be(NFTA_SET_FLAGS),
  };
  const comment = userdataString(parseUserdata(attributes.get(NFTA_SET_USERDATA)).get(UDATA_SET_COMMENT));
  if (comment !== undefined) set.comment = comment;
  return set;
}
