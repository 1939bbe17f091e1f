import { readFileSync } from 'node:fs';

const CAP_SYS_ADMIN = 21n;

function hasSysAdmin(): boolean {
  const status = readFileSync('/proc/self/status', 'utf8');
  const capEff = /^CapEff:\s*([0-9a-f]+)$/m.exec(status)?.[1];
  return capEff !== undefined && ((BigInt(`0x${capEff}`) >> CAP_SYS_ADMIN) & 1n) === 1n;
}

/** Whether the root suite can run here; in CI its absence is an error, never a skip. */
export const privileged = hasSysAdmin();

if (!privileged) {
  if (process.env.CI) throw new Error('CI must run the root suite: CAP_SYS_ADMIN is missing');
  console.warn('netns tests: no CAP_SYS_ADMIN, so the root suite is skipped (run as root to include it)');
}
