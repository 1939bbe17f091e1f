// Kernel names and ownership records. Set names are short and derived from the
// owner (a hash), so they are deterministic; the owner itself is recorded as
// the comment of an element in the registry set, keyed by the set name, and so
// is a pending-delete deadline. Owner strings are arbitrary: they only ever
// appear base64url-encoded (or hashed), never as nft syntax.
import { ErrorCodes, netnsError } from '../core/errors.js';
import { sha256Hex } from '../core/hashes.js';
import type { Family } from './addresses.js';

/** Registry keys are nft `ifname` values: at most 15 bytes, so set names are too. */
const MAX_SET_NAME = 15;
const MAX_COMMENT = 128;
const MAX_OWNER_BYTES = 1024;
const PREFIX = /^[a-z][a-z0-9]{0,4}$/;
const COMMENT = /^v1 (?:o=([A-Za-z0-9_-]*)|h=([0-9a-f]{64}))(?: d=(\d{1,16}))?$/;

export interface OwnerRecord {
  /** Null when the owner was too long to record and only its hash is kept. */
  owner: string | null;
  ownerHash: string;
  /** Epoch ms after which a deleted owner's sets may be destroyed. */
  deadline?: number;
}

export function checkPrefix(prefix: unknown): string {
  if (typeof prefix !== 'string' || !PREFIX.test(prefix)) {
    throw netnsError(ErrorCodes.ADDRSET_INVALID_OPTION, `prefix must match ${PREFIX} (it leaves room for the hash in 15 bytes)`);
  }
  return prefix;
}

export function checkOwner(owner: unknown): string {
  if (typeof owner !== 'string' || owner === '') throw netnsError(ErrorCodes.ADDRSET_INVALID_OWNER, 'owner must be a non-empty string');
  if (!owner.isWellFormed()) throw netnsError(ErrorCodes.ADDRSET_INVALID_OWNER, 'owner must be well-formed Unicode (no lone surrogates)');
  if (Buffer.byteLength(owner) > MAX_OWNER_BYTES) throw netnsError(ErrorCodes.ADDRSET_INVALID_OWNER, `owner must be at most ${MAX_OWNER_BYTES} bytes`);
  return owner;
}

export function ownerHash(owner: string): string {
  return sha256Hex(owner);
}

export function setName(prefix: string, family: Family, hash: string): string {
  const head = `${prefix}${family}_`;
  return head + hash.slice(0, MAX_SET_NAME - head.length);
}

export function registryName(prefix: string): string {
  return `${prefix}_owners`;
}

// One per prefix (checked by checkPrefix: letters and digits only), made once: gc and open test every set name.
const setNamePatterns = new Map<string, RegExp>();

/** Whether a set name has the shape of one of ours (prefix, family, hex hash). */
export function familyOfSetName(prefix: string, name: string): Family | undefined {
  let pattern = setNamePatterns.get(prefix);
  // Stryker disable next-line ConditionalExpression: making the pattern again each time changes only the time taken
  if (!pattern) setNamePatterns.set(prefix, (pattern = new RegExp(`^${prefix}([46])_[0-9a-f]+$`)));
  const match = name.length === MAX_SET_NAME ? pattern.exec(name) : null;
  return match ? (Number(match[1]) as Family) : undefined;
}

export function encodeRecord(owner: string, deadline?: number): string {
  const tail = deadline === undefined ? '' : ` d=${Math.ceil(deadline)}`;
  const encoded = `v1 o=${Buffer.from(owner, 'utf8').toString('base64url')}${tail}`;
  return encoded.length <= MAX_COMMENT ? encoded : `v1 h=${ownerHash(owner)}${tail}`;
}

export function decodeRecord(comment: unknown): OwnerRecord | undefined {
  if (typeof comment !== 'string') return undefined;
  const match = COMMENT.exec(comment);
  if (!match) return undefined;
  const [, encoded, hash, deadline] = match;
  const owner = encoded === undefined ? null : Buffer.from(encoded, 'base64url').toString('utf8');
  const record: OwnerRecord = { owner, ownerHash: owner === null ? hash! : ownerHash(owner) };
  if (deadline !== undefined) record.deadline = Number(deadline);
  return record;
}
