// One transaction is a list of these operations on our table; backends render
// them (nft text or JSON) or apply them to a model.
import type { Entry, Family } from './addresses.js';

/**
 * One change in a backend transaction (AddrsetBackend.apply gets a list of
 * them, to apply all or none): the table, the registry set, an owner's set,
 * its elements, or a registry record. For writing a backend; AddressSets
 * users never build them.
 */
export type Op =
  | { op: 'addTable' }
  | { op: 'addRegistry'; name: string }
  /** Makes the set exist and be empty, whatever a crashed writer left under its name. */
  | { op: 'createSet'; name: string; family: Family }
  | { op: 'deleteSet'; name: string }
  | { op: 'flushSet'; name: string }
  /** Elements as parsed and checked by the manager (their text canonical, as nft lists it). */
  | { op: 'addElements'; name: string; elements: Entry[] }
  | { op: 'deleteElements'; name: string; elements: Entry[] }
  /** Registry entry: key is a set name, comment the encoded owner record; replaces any entry there. */
  | { op: 'putRecord'; registry: string; key: string; comment: string }
  | { op: 'deleteRecord'; registry: string; key: string };

export interface TableRef {
  family: 'inet';
  table: string;
}
