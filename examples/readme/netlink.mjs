import { NetNS } from 'netns';
import { openNetlink } from 'netns/netlink';

const name = `nsdoc-${process.pid}-nl`;
const ns = await NetNS.create(name);
const nl = await openNetlink(ns); // as Go's netlink.NewHandleAt(ns); openNetlink(): this thread's namespace
try {
  const events = await nl.watch({ links: true }); // this namespace's changes, as `ip monitor link`
  const bridge = await nl.links.add({ kind: 'bridge', name: 'br0', up: true }); // the link, read back
  await nl.links.add({ kind: 'veth', name: 'veth0', master: 'br0', up: true, peer: { name: 'veth1' } });
  await nl.addresses.add({ link: bridge.index, address: '10.1.0.1/24' }); // a link by index or name
  await nl.routes.add({ destination: '10.2.0.0/16', gateway: '10.1.0.254', metric: 10 });
  for (const route of await nl.routes.list({ family: 4 })) console.log('route:', route.destination, route.gateway ?? 'link');
  console.log((await nl.links.get('veth0')).master === bridge.index); // true: enslaved to br0
  const refused = await nl.addresses.add({ link: 'br0', address: '10.1.0.1/24' }).catch((e) => e);
  console.log(refused.code, '-', refused.extack); // EEXIST - ipv4: Address already assigned
  for await (const { action, link } of events) {
    if (link.name === 'veth0') { console.log('event:', action, link.name); break; } // leaving closes the watcher
  }
} finally {
  nl.close(); // sync, idempotent: only this process's socket goes
  ns.close();
  await NetNS.delete(name);
}
