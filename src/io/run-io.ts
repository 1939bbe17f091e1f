// Runs one job on the addon's I/O threads against a namespace handle: the addon
// duplicates the namespace descriptor synchronously, so the handle is only
// held for the call itself. Errors come back as NetnsError.
import { fromNative } from '../core/errors.js';
import { native } from '../core/native.js';
import type { NsHandle } from '../core/handle.js';

let discardsSeen = 0;

export function runIo<T>(ns: NsHandle, start: (nsFd: number) => Promise<T>): Promise<T> {
  let pending: Promise<T>;
  try {
    const fd = ns.acquire();
    try {
      pending = start(fd);
    } finally {
      ns.release();
    }
  } catch (error) {
    return Promise.reject(fromNative(error));
  }
  return pending.then(
    (value) => {
      warnAboutDiscardedThreads();
      return value;
    },
    (error: unknown) => {
      warnAboutDiscardedThreads();
      throw fromNative(error);
    },
  );
}

function warnAboutDiscardedThreads(): void {
  const { threadsDiscarded } = native().ioStats();
  if (threadsDiscarded === discardsSeen) return;
  discardsSeen = threadsDiscarded;
  process.emitWarning('a netns I/O thread could not return to its own network namespace; it was replaced', {
    code: 'NETNS_RESTORE_FAILED',
  });
}

/** The I/O threads of this thread's environment: how many were started and how many were replaced after a failed restore. */
export function ioStats(): {
  /** I/O threads started so far, replacements included. */
  threadsCreated: number;
  /** I/O threads given up because they could not return to their own namespace (each one warned NETNS_RESTORE_FAILED). */
  threadsDiscarded: number;
} {
  return native().ioStats();
}
