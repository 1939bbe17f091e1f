import net from 'node:net';
import { NetNS, withNetNS } from 'netns';
import { openNetlink } from 'netns/netlink';

const name = (host) => `nsdoc-${process.pid}-${host}`; // unique names: `ip netns list` shows them
const [a, b] = [await NetNS.create(name('a')), await NetNS.create(name('b'))]; // as `ip netns add`
try {
  // Plumbing over netlink from this thread, no `ip` process: each socket is made inside its namespace.
  const [nla, nlb] = [await openNetlink(a), await openNetlink(b)];
  await nla.links.add({ kind: 'veth', name: 'eth0', peer: { name: 'peer0' } }); // both ends in a
  await nla.links.move('peer0', b, { name: 'eth0' }); // one end to b, renamed there
  for (const [nl, address] of [[nla, '10.0.0.1/24'], [nlb, '10.0.0.2/24']]) {
    await nl.addresses.add({ link: 'eth0', address });
    for (const link of ['lo', 'eth0']) await nl.links.up(link);
    nl.close();
  }

  // Objects created inside a namespace, used from this thread with closures intact:
  const server = await a.listen(net.createServer((s) => s.end(`hello from ${name('a')}`)), { host: '10.0.0.1', port: 0 });
  const socket = await b.connect({ host: '10.0.0.1', port: server.address().port });
  for await (const chunk of socket) console.log(String(chunk)); // hello from nsdoc-…-a
  server.close();

  // Or run a function inside b, on a pool thread (arguments and result are copied):
  console.log(await withNetNS(b, () => Object.keys(require('node:os').networkInterfaces()))); // [ 'lo', 'eth0' ]
} finally {
  for (const ns of [a, b]) await ns.delete(); // as `ip netns del`, then the handle is closed
}
