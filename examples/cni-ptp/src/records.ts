// A record per attachment of what its ADD asked IPAM for, so that GC can
// release an allocation nothing on the host points to any more: the host
// veth's alias names its attachment, but an ADD killed between IPAM and the
// veth leaves none, and a container namespace deleted before any DEL takes
// the pair with it. ADD writes the record before IPAM ADD; DEL removes it
// after IPAM DEL succeeded; GC releases each record's allocation whose
// attachment the runtime no longer lists, and removes the record.
//
// One JSON file per attachment in the configuration's `dataDir`, named by the
// attachment key (two hex hashes: no container id or ifname ever reaches a
// path). Written to a temporary file and renamed into place, so a reader sees
// the whole record or none. Not fsynced, as host-local's own files are not:
// after a power loss the record and the allocation may both be gone.
// node:fs's sync calls: a record is a few hundred bytes, and node:fs/promises
// (with the file watchers it loads) costs a one-command plugin more than its writes.
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Attachment } from 'netns/cni';
import { attachmentKey, networkTagPrefix } from 'netns/cni/plumbing';
import { randomHex } from './random-hex.js';

/** What an attachment's ADD gave IPAM: enough for the IPAM DEL that releases it. */
export interface AttachmentRecord extends Attachment {
  network: string;
  /** The ADD's configuration as IPAM received it on stdin (UTF-8). */
  config: string;
}

const KIND = 'cni-ptp-attachment/1';

const pathOf = (dir: string, network: string, attachment: Attachment): string => join(dir, `${attachmentKey(network, attachment)}.json`);

/** Writes (or replaces) the attachment's record; returns whether one was there already (an earlier ADD of it may hold an allocation). */
export function writeRecord(dir: string, record: AttachmentRecord): boolean {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const path = pathOf(dir, record.network, record);
  const there = existsSync(path);
  const temp = `${path}.${process.pid}.${randomHex(4)}.tmp`;
  const { network, containerID, ifname, config } = record;
  try {
    writeFileSync(temp, JSON.stringify({ kind: KIND, network, containerID, ifname, config }), { mode: 0o600, flag: 'wx' });
    renameSync(temp, path);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
  return there;
}

/** No record can be there: nothing at the path, or a file where the directory should be (then DEL must still succeed). */
const noRecord = (error: unknown): boolean => ['ENOENT', 'ENOTDIR'].includes((error as NodeJS.ErrnoException).code ?? '');

/** Gone already is fine: a repeated DEL, or an ADD from before records were kept. */
export function removeRecord(dir: string, network: string, attachment: Attachment): void {
  try {
    rmSync(pathOf(dir, network, attachment));
  } catch (error) {
    if (!noRecord(error)) throw error;
  }
}

/** A file's record, if it is one whose content matches its name (anything else in the directory is not ours to judge). */
function parse(name: string, text: string): AttachmentRecord | undefined {
  let value: Partial<AttachmentRecord> & { kind?: unknown };
  try {
    value = JSON.parse(text) as typeof value;
  } catch {
    return undefined;
  }
  const { kind, network, containerID, ifname, config } = value ?? {};
  if (kind !== KIND || ![network, containerID, ifname, config].every((field) => typeof field === 'string' && field !== '')) return undefined;
  const record = { network, containerID, ifname, config } as AttachmentRecord;
  return name === `${attachmentKey(record.network, record)}.json` ? record : undefined;
}

/** The records of `network` (another network's names start with another hash). */
export function listRecords(dir: string, network: string): AttachmentRecord[] {
  const prefix = networkTagPrefix(network);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (error) {
    if (!noRecord(error)) throw error;
    names = [];
  }
  const records: AttachmentRecord[] = [];
  for (const name of names.filter((file) => file.startsWith(prefix) && file.endsWith('.json'))) {
    // Removed meanwhile (a DEL of another attachment): not a record any more.
    const text = readOrNothing(join(dir, name));
    const record = text === undefined ? undefined : parse(name, text);
    if (record?.network === network) records.push(record);
  }
  return records;
}

function readOrNothing(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}
