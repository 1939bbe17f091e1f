// Before any root test file runs: clear what crashed runs of this suite left,
// and make /run/netns a mount once, so that test files creating namespaces in
// parallel (some with `ip netns add`, which takes no lock) cannot race to
// stack it.
export default async function setup(): Promise<void> {
  const { hasEffectiveCapability, sweep } = await import('../dist/testing.js');
  if (!hasEffectiveCapability('CAP_SYS_ADMIN')) return;
  const { NetNS } = await import('../dist/index.js');
  for (const prefix of ['nsfix-', 'nsdemo-']) await sweep(prefix);
  const name = `nsprep-${process.pid}`;
  (await NetNS.create(name)).close();
  await NetNS.delete(name);
}
