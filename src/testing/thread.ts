// Per-thread probes for tests: capabilities and namespace identity.
import { capabilityNumber, type CapabilityName } from '../capabilities.js';
import { callNative } from '../core/errors.js';
import { native } from '../core/native.js';

/**
 * Drops a capability from the calling thread's effective set. Capabilities are
 * per thread, so inside withNetNS's fn this makes the pool thread's restore
 * fail for real (setns needs CAP_SYS_ADMIN), without touching other threads.
 * Synchronous; loads the addon.
 */
export function dropThreadCapability(name: CapabilityName): void {
  const bit = capabilityNumber(name);
  callNative(() => native().dropEffectiveCapability(bit));
}

/** The namespace identity (device and inode) of the calling thread, read synchronously through /proc/thread-self: inside withNetNS's fn, the namespace it runs in. */
export function threadNetns(): {
  /** The nsfs device number, as NetNS.dev. */
  dev: number;
  /** The namespace's inode, as NetNS.inode. */
  inode: number;
} {
  const { dev, ino } = callNative(() => native().threadNetns());
  return { dev, inode: ino };
}
