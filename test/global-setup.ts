// Before any root test file runs: make sure the suite runs in the throwaway
// network namespace scripts/test-isolated.mjs made for it (never in the
// machine's real one), clear what crashed runs of this suite left, and make
// /run/netns a mount once, so that test files creating namespaces in parallel
// (some with `ip netns add`, which takes no lock) cannot race to stack it.
import { statSync } from 'node:fs';

export default async function setup(): Promise<void> {
  const { hasEffectiveCapability, sweep } = await import('../dist/testing.js');
  if (!hasEffectiveCapability('CAP_SYS_ADMIN')) return;
  const here = statSync('/proc/self/ns/net').ino;
  const real = Number(process.env.NETNS_TEST_REAL_NETNS);
  if (process.env.NETNS_TEST_NETNS !== String(here) || here === real) {
    throw new Error(
      `the root suite runs only inside a throwaway network namespace (this is net:[${here}]): ` +
        'run it with `npm test` or `node scripts/test-isolated.mjs run [files...]`, not vitest directly',
    );
  }
  const { NetNS } = await import('../dist/index.js');
  for (const prefix of ['nsfix-', 'nsdemo-']) await sweep(prefix);
  const name = `nsprep-${process.pid}`;
  (await NetNS.create(name)).close();
  await NetNS.delete(name);
}
