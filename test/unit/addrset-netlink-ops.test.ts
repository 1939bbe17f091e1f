// How one transaction's address-set ops become nf_tables messages: which op
// each message came from (so that a failure names it), what each says it
// does, empty element lists sending nothing, element messages naming a set
// made in the same batch by its batch id, and an op mixing families refused.
// The root tests compare the bytes with what nft sends and the kernel takes;
// these run anywhere. Found by the mutation pass over netlink-ops.ts (issue 34).
import { describe, expect, it } from 'vitest';
import { parseEntries } from '../../dist/addrset/addresses.js';
import { encodeOps } from '../../dist/addrset/netlink-ops.js';
import type { Op } from '../../dist/addrset/ops.js';
import type { TableName } from '../../dist/nftables/messages.js';
import { NFPROTO_INET, NFT_MSG_DELSETELEM, NFT_MSG_NEWSETELEM, NFTA_SET_ELEM_LIST_SET_ID } from '../../dist/nftables/constants.js';

const TABLE: TableName = { family: NFPROTO_INET, table: 'policy' };
const entries = (...texts: string[]) => parseEntries(texts);
const messageType = (type: number) => type & 0xff;
const setId = (request: { attributes?: readonly { type: number; value?: Buffer }[] }) => {
  const found = request.attributes?.find((attribute) => attribute.type === NFTA_SET_ELEM_LIST_SET_ID);
  return found?.value?.readUInt32BE(0);
};

describe('encodeOps', () => {
  const ops: Op[] = [
    { op: 'addTable' },
    { op: 'addRegistry', name: 'as_owners' },
    { op: 'createSet', name: 'as4', family: 4 },
    { op: 'addElements', name: 'as4', elements: entries('10.0.0.1') },
    { op: 'addElements', name: 'as4', elements: [] },
    { op: 'deleteElements', name: 'as4', elements: [] },
    { op: 'putRecord', registry: 'as_owners', key: 'as4', comment: 'owner' },
    { op: 'deleteRecord', registry: 'as_owners', key: 'as4' },
    { op: 'deleteElements', name: 'old4', elements: entries('10.0.0.2') },
    { op: 'addElements', name: 'old4', elements: entries('10.0.0.3') },
    { op: 'flushSet', name: 'old4' },
    { op: 'deleteSet', name: 'old4' },
  ];
  // Encoded in each test, not when the file is collected: the mutation tool switches a mutant on per test.
  const encoded = () => encodeOps(TABLE, ops);

  it('says of each message what it does and which op it came from; empty element lists send nothing', () => {
    const { requests, opOf } = encoded();
    const whats = requests.map((request, i) => [opOf[i], request.what]);
    expect(whats.filter(([op]) => op === 3 || op === 6 || op === 7 || op === 8 || op === 9)).toEqual([
      [3, 'add element inet policy as4'],
      [6, 'put record as4 in set inet policy as_owners'],
      [6, 'put record as4 in set inet policy as_owners'],
      [6, 'put record as4 in set inet policy as_owners'],
      [7, 'delete record as4 from set inet policy as_owners'],
      [8, 'delete element inet policy old4'],
      [9, 'add element inet policy old4'],
    ]);
    expect(opOf.filter((op) => op === 4 || op === 5)).toEqual([]);
    expect(new Set(opOf)).toEqual(new Set([0, 1, 2, 3, 6, 7, 8, 9, 10, 11]));
    expect([...opOf].sort((a, b) => a - b)).toEqual(opOf); // in the order of the ops
  });

  it('adds and deletes elements and records with the kernel messages for each', () => {
    const { requests, opOf } = encoded();
    const typeOf = (op: number) => requests.filter((_, i) => opOf[i] === op).map((request) => messageType(request.type));
    expect(typeOf(3)).toEqual([NFT_MSG_NEWSETELEM]);
    expect(typeOf(6)).toEqual([NFT_MSG_NEWSETELEM, NFT_MSG_DELSETELEM, NFT_MSG_NEWSETELEM]);
    expect(typeOf(7)).toEqual([NFT_MSG_DELSETELEM]);
    expect(typeOf(8)).toEqual([NFT_MSG_DELSETELEM]);
  });

  it('names a set made in this batch by its batch id (the registry 1, the next set 2), and others by name alone', () => {
    const { requests, opOf } = encoded();
    const ids = (op: number) => requests.filter((_, i) => opOf[i] === op).map(setId);
    expect(ids(3)).toEqual([2]);
    expect(ids(6)).toEqual([1, undefined, 1]); // a delete names the set by name only, as nft does
    expect(ids(9)).toEqual([undefined]);
  });

  it('refuses an op that mixes IPv4 and IPv6 elements', () => {
    expect(() => encodeOps(TABLE, [{ op: 'addElements', name: 'as4', elements: entries('10.0.0.1', 'fd00::1') }])).toThrow(
      expect.objectContaining({ code: 'ERR_NETNS_ADDRSET_INVALID_ADDRESS', message: 'one operation mixes IPv4 and IPv6 elements' }),
    );
    expect(() => encodeOps(TABLE, [{ op: 'deleteElements', name: 'as6', elements: entries('fd00::1', '10.0.0.1') }])).toThrow(
      expect.objectContaining({ message: 'one operation mixes IPv4 and IPv6 elements' }),
    );
  });
});
