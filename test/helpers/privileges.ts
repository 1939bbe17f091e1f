import { readFileSync } from 'node:fs';
import { hasEffectiveCapability } from '../../dist/testing.js';

/** Whether the root suite can run here; in CI its absence is an error, never a skip. */
export const privileged = hasEffectiveCapability('CAP_SYS_ADMIN');

if (!privileged) {
  if (process.env.CI) throw new Error('CI must run the root suite: CAP_SYS_ADMIN is missing');
  console.warn('netns tests: no CAP_SYS_ADMIN, so the root suite is skipped (run as root to include it)');
}

/**
 * Whether the suite runs in a user namespace (the rootless run through
 * `netns sandbox`): root there, with every capability, but only one uid
 * mapped and none of real root's powers over the host.
 */
export const inUserNamespace = !/^\s*0\s+0\s+4294967295\s*$/.test(readFileSync('/proc/self/uid_map', 'utf8'));

/** Why a test skips in a user namespace: it needs a privilege only the machine's real root has. */
export const realRootOnly =
  'this is a user namespace (a rootless sandbox), where only the caller is mapped and capabilities stop at the namespace: the few tests that need the real root are skipped';

if (privileged && inUserNamespace) console.warn(`netns tests: ${realRootOnly}`);
