// Runs one job on the addon's I/O threads against a NetNS handle: the addon
// duplicates the namespace descriptor synchronously, so the handle is only
// held for the call itself. Errors come back as NetnsError.
import { fromNative } from '../errors.js';
import { native } from '../native.js';
import type { NetNS } from '../netns.js';

let discardsSeen = 0;

export async function runIo<T>(ns: NetNS, start: (nsFd: number) => Promise<T>): Promise<T> {
  const fd = ns.acquire();
  let pending: Promise<T>;
  try {
    pending = start(fd);
  } catch (error) {
    throw fromNative(error);
  } finally {
    ns.release();
  }
  try {
    return await pending;
  } catch (error) {
    throw fromNative(error);
  } finally {
    warnAboutDiscardedThreads();
  }
}

function warnAboutDiscardedThreads(): void {
  const { threadsDiscarded } = native.ioStats();
  if (threadsDiscarded === discardsSeen) return;
  discardsSeen = threadsDiscarded;
  process.emitWarning('a netns I/O thread could not return to its own network namespace; it was replaced', {
    code: 'NETNS_RESTORE_FAILED',
  });
}
