import { NetNS } from 'netns';
import { ErrorCodes, openNetlink } from 'netns/netlink';

const name = `nsdoc-${process.pid}-tc`;
const ns = await NetNS.create(name);
const nl = await openNetlink(ns);
try {
  await nl.links.add({ kind: 'veth', name: 'tc0', up: true, peer: { name: 'tc1' } });
  // Rates in bytes per second (tc's 1mbit is 125000), times in microseconds, sizes in bytes.
  await nl.qdiscs.add({ link: 'tc0', handle: '1:', kind: 'htb', defaultClass: 0x10 }); // tc's `default 10` is hex
  await nl.classes.add({ link: 'tc0', parent: '1:', classid: '1:10', kind: 'htb', rate: 1_250_000 });
  await nl.classes.add({ link: 'tc0', parent: '1:', classid: '1:20', kind: 'htb', rate: 125_000, ceil: 250_000 });
  await nl.filters.add({ link: 'tc0', parent: '1:', kind: 'u32', match: { destination: '10.9.0.0/24' }, classid: '1:20' });
  await nl.qdiscs.add({ link: 'tc1', kind: 'tbf', rate: 125_000, burst: 4096, latency: 400_000 });
  for (const q of await nl.qdiscs.list()) console.log('qdisc:', q.kind, q.handle, q.parent, JSON.stringify(q.options ?? {}));
  console.log((await nl.filters.list({ link: 'tc0', parent: '1:' }))[0].match); // { destination: '10.9.0.0/24' }
  const delay = await nl.qdiscs.replace({ link: 'tc1', kind: 'netem', delay: 20_000, loss: 1 }).catch((e) => e);
  if (delay?.code === ErrorCodes.UNSUPPORTED) console.log('no netem here:', delay.message); // names sch_netem
} finally {
  nl.close();
  ns.close();
  await NetNS.delete(name);
}
