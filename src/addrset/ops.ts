// One transaction is a list of these operations on our table; backends render
// them (nft text or JSON) or apply them to a model.
import { ErrorCodes, netnsError } from '../core/errors.js';
import type { Entry, Family } from './addresses.js';

/**
 * One change in a backend transaction (AddrsetBackend.apply gets a list of
 * them, to apply all or none): the table, the registry set, an owner's set,
 * its elements, or a registry record. For writing a backend; AddressSets
 * users never build them.
 */
export type Op =
  | {
      /** Makes our table exist (kept if it does). */
      op: 'addTable';
    }
  | {
      /** Makes the registry set exist (kept if it does). */
      op: 'addRegistry';
      /** The registry set's name. */
      name: string;
    }
  /** Makes the set exist and be empty, whatever a crashed writer left under its name. */
  | {
      /** Makes an owner's set exist, empty. */
      op: 'createSet';
      /** The set's name. */
      name: string;
      /** The family of its addresses: 4 or 6. */
      family: Family;
    }
  | {
      /** Removes an owner's set. */
      op: 'deleteSet';
      /** The set's name. */
      name: string;
    }
  | {
      /** Empties an owner's set. */
      op: 'flushSet';
      /** The set's name. */
      name: string;
    }
  /** Elements as parsed and checked by the manager (their text canonical, as nft lists it). */
  | {
      /** Adds elements to an owner's set. */
      op: 'addElements';
      /** The set's name. */
      name: string;
      /** What to add, all of the set's family. */
      elements: Entry[];
    }
  | {
      /** Removes elements from an owner's set. */
      op: 'deleteElements';
      /** The set's name. */
      name: string;
      /** What to remove, all of the set's family. */
      elements: Entry[];
    }
  /** Registry entry: key is a set name, comment the encoded owner record; replaces any entry there. */
  | {
      /** Writes one registry record. */
      op: 'putRecord';
      /** The registry set's name. */
      registry: string;
      /** The record's key: an owner's set name. */
      key: string;
      /** The encoded owner record, kept as the element's comment. */
      comment: string;
    }
  | {
      /** Removes one registry record. */
      op: 'deleteRecord';
      /** The registry set's name. */
      registry: string;
      /** The record's key: an owner's set name. */
      key: string;
    };

export interface TableRef {
  family: 'inet';
  table: string;
}

/**
 * The `default` of every backend's switch over Op: an operation it does not
 * know fails its whole transaction rather than being quietly left out of it.
 * The types rule that out; a bug, or a hand-made list, may not.
 */
export function unknownOp(op: never): never {
  throw netnsError(ErrorCodes.INVALID_ARG, `addrset backend: unknown operation ${JSON.stringify(op)}`);
}
