// Before any root test file runs: clear what crashed runs of this suite left,
// and make /run/netns a mount once, so that test files creating namespaces in
// parallel (some with `ip netns add`, which takes no lock) cannot race to
// stack it.
import { readFileSync } from 'node:fs';

function privileged(): boolean {
  const capEff = /^CapEff:\s*([0-9a-f]+)$/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1];
  return capEff !== undefined && ((BigInt(`0x${capEff}`) >> 21n) & 1n) === 1n;
}

export default async function setup(): Promise<void> {
  if (!privileged()) return;
  const { sweep } = await import('../dist/testing.js');
  const { NetNS } = await import('../dist/index.js');
  for (const prefix of ['nsfix-', 'nsdemo-']) await sweep(prefix);
  const name = `nsprep-${process.pid}`;
  (await NetNS.create(name)).close();
  await NetNS.delete(name);
}
