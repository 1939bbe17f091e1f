// The resident daemon's per-attachment gate. A runtime that gives up on an
// ADD (its deadline, a killed shim) sends DEL at once; were the two to run
// side by side, the ADD could finish after the DEL and leave its veth, its
// address and its rules behind with nobody left to remove them. So calls for
// one attachment (network name, CNI_CONTAINERID, CNI_IFNAME) run one after
// another, in the order they came, and a DEL cancels every ADD of its
// attachment that came before it (running or waiting): it aborts their
// signals, then waits for them to have rolled back before it runs.
// Calls of different attachments never wait for each other.
import type { CallEnvironment } from '../skel.js';
import { CniCode, CniError } from '../errors.js';

interface Lane {
  /** Settles when the last call queued on this attachment has. */
  tail: Promise<void>;
  /** The ADDs queued or running: the ones a DEL cancels. */
  adds: Set<AbortController>;
  calls: number;
}

/** What a DEL aborts the ADDs before it with: the ADD's caller (if still there) gets this error. */
const cancelledByDel = (): CniError => new CniError(CniCode.INTERNAL, 'cancelled: a DEL of the same attachment came while this ADD ran');

/**
 * The attachment a call is about, as a map key; undefined for a call about
 * none (VERSION, GC, STATUS) or one that handleCall refuses anyway (no JSON,
 * no name): those pass the gate without waiting.
 */
export function attachmentOf(env: CallEnvironment, stdin: Buffer): string | undefined {
  if (!['ADD', 'DEL', 'CHECK'].includes(env.CNI_COMMAND ?? '')) return undefined;
  let name: unknown;
  try {
    name = (JSON.parse(stdin.toString('utf8')) as { name?: unknown }).name;
  } catch {
    // not JSON, or JSON null: no name
  }
  return typeof name === 'string' ? JSON.stringify([name, env.CNI_CONTAINERID ?? '', env.CNI_IFNAME ?? '']) : undefined;
}

export class AttachmentGate {
  readonly #lanes = new Map<string, Lane>();

  /** The attachments with calls queued or running: a lane goes with its last call, so a long-lived daemon holds none for attachments gone. */
  get busy(): number {
    return this.#lanes.size;
  }

  /**
   * Runs `fn` once every call queued before it on `key` has settled. A DEL
   * first aborts the controllers of the ADDs queued before it; an ADD's
   * `controller` is aborted by any DEL of its attachment that comes while it
   * is queued or running.
   */
  run<T>(key: string | undefined, command: string | undefined, controller: AbortController, fn: () => Promise<T>): Promise<T> {
    if (key === undefined) return fn();
    let lane = this.#lanes.get(key);
    if (lane === undefined) this.#lanes.set(key, (lane = { tail: Promise.resolve(), adds: new Set(), calls: 0 }));
    if (command === 'DEL') for (const add of lane.adds) add.abort(cancelledByDel());
    if (command === 'ADD') lane.adds.add(controller);
    lane.calls++;
    const done = lane.tail.then(fn).finally(() => {
      lane.adds.delete(controller);
      if (--lane.calls === 0) this.#lanes.delete(key);
    });
    lane.tail = done.then(
      () => {},
      () => {}, // the caller has this failure; the next call on the lane only waits for it
    );
    return done;
  }
}
