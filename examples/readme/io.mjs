import { once } from 'node:events';
import { closeSync } from 'node:fs';
import net from 'node:net';
import { NetNS } from 'netns';

const [blueName, redName] = [`nsdoc-${process.pid}-blue`, `nsdoc-${process.pid}-red`];
const [blue, red] = [await NetNS.create(blueName), await NetNS.create(redName)];
try {
  // Child processes started inside a namespace: here, joining blue and red with a veth pair.
  await blue.execFile('ip', ['link', 'add', 'eth0', 'type', 'veth', 'peer', 'name', 'eth0', 'netns', redName]);
  await blue.execFile('ip', ['addr', 'add', '10.0.0.1/24', 'dev', 'eth0']);
  await red.execFile('ip', ['addr', 'add', '10.0.0.2/24', 'dev', 'eth0']);
  for (const ns of [blue, red]) await ns.execFile('ip', ['link', 'set', 'eth0', 'up']);

  // A net.Server inside blue and a net.Socket from inside red, both used from this thread.
  const server = await blue.listen(net.createServer((s) => s.end('hi from blue')), { host: '10.0.0.1', port: 0 });
  const client = await red.connect({ host: '10.0.0.1', port: server.address().port, timeout: 5_000 });
  for await (const chunk of client) console.log('red got:', String(chunk)); // red got: hi from blue
  server.close();
  (await blue.createSocket('udp4', { address: '10.0.0.1', port: 0 })).close(); // a dgram.Socket
  closeSync(await blue.socket('netlink', 'raw', 0)); // a raw O_CLOEXEC fd, e.g. for a netlink library

  await red.sysctl.set('net.ipv4.ip_forward', '1'); // red only: the host is untouched
  console.log('red forwards:', await red.sysctl.get('net.ipv4.ip_forward')); // 1
  console.log('red has eth0:', String(await red.readFile('/proc/net/dev')).includes('eth0:')); // true
  const child = red.spawn('ip', ['-brief', 'address', 'show', 'dev', 'eth0'], { stdio: 'inherit' });
  console.log('ip exited with', (await once(child, 'close'))[0]); // a real ChildProcess
  const { stdout } = await red.execFile('ls', ['/sys/class/net'], { etc: true }); // as `ip netns exec`
  console.log('/sys/class/net in red:', stdout.split('\n').filter(Boolean)); // [ 'eth0', 'lo' ]
} finally {
  for (const ns of [blue, red]) ns.close();
  for (const name of [blueName, redName]) await NetNS.delete(name);
}
