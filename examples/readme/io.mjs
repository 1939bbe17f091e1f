import { once } from 'node:events';
import { closeSync } from 'node:fs';
import net from 'node:net';
import { NetNS } from 'netns';
import { openNetlink } from 'netns/netlink';

const name = `nsdoc-${process.pid}-io`;
const ns = await NetNS.create(name);
try {
  const nl = await openNetlink(ns);
  await nl.links.up('lo'); // a new namespace's lo is down
  nl.close();
  // Sockets created inside ns, used from this thread: net.Server, net.Socket, dgram.Socket, a raw fd.
  const server = await ns.listen(net.createServer((s) => s.end(`hi from ${name}`)), { host: '127.0.0.1', port: 0 });
  const client = await ns.connect({ host: '127.0.0.1', port: server.address().port, timeout: 5_000 });
  for await (const chunk of client) console.log('got:', String(chunk)); // got: hi from nsdoc-…-io
  server.close();
  (await ns.createSocket('udp4', { address: '127.0.0.1', port: 0 })).close();
  closeSync(await ns.socket('netlink', 'raw', 0)); // an O_CLOEXEC fd, e.g. for another netlink library
  await ns.sysctl.set('net.ipv4.ip_forward', '1'); // this namespace only: the host is untouched
  console.log('forwards:', await ns.sysctl.get('net.ipv4.ip_forward')); // 1
  console.log('has lo:', String(await ns.readFile('/proc/net/dev')).includes('lo:')); // true
  const child = ns.spawn('cat', ['/proc/net/if_inet6'], { stdio: 'inherit' }); // a real ChildProcess
  console.log('cat exited with', (await once(child, 'close'))[0]); // 0
  const { stdout } = await ns.execFile('ls', ['/sys/class/net'], { etc: true }); // as `ip netns exec`
  console.log('/sys/class/net:', stdout.split('\n').filter(Boolean)); // [ 'lo' ]
} finally {
  ns.close();
  await NetNS.delete(name);
}
