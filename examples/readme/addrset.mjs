import { NetNS } from 'netns';
import { AddressSets } from 'netns/addrset';

const name = `nsdoc-${process.pid}-sets`;
const ns = await NetNS.create(name);
const sets = await AddressSets.open({ netns: ns, table: 'netpol', deleteDelayMs: 20_000 });
try {
  const ref = await sets.ensure('ns/frontend', ['10.1.0.7', 'fd00::7']); // { v4: 'as4_…', v6: 'as6_…' }
  await ns.execFile('nft', ['add chain inet netpol input { type filter hook input priority 0; }']);
  await ns.execFile('nft', [`add rule inet netpol input ip saddr @${ref.v4} accept`]); // your rules
  await sets.add('ns/frontend', ['10.1.0.8', '10.2.0.0/16']);
  await sets.remove('ns/frontend', ['10.1.0.7']);
  await sets.replace('ns/frontend', ['10.1.0.9', 'fd00::9']); // one transaction: never half-filled
  console.log(await sets.inspect('ns/frontend')); // the owner's sets and their addresses
  await sets.delete('ns/frontend'); // emptied now, destroyed after deleteDelayMs
  await sets.ensure('ns/frontend'); // back within the delay: the same sets, the destroy cancelled
  for (const set of await sets.list()) console.log(set.name, set.state, set.elements); // as4_… live 0
  const report = await sets.gc({ live: ['ns/frontend'], dryRun: true }); // { dryRun, removed, kept }
  console.log('gc would remove', report.removed.length, 'sets; stats:', sets.stats().live, 'live');
} finally {
  await sets.close(); // stops timers; a pending deadline stays recorded in the kernel
  ns.close();
  await NetNS.delete(name);
}
