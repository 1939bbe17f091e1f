import net from 'node:net';
import { NetNS, withNetNS } from 'netns';

const name = `nsdoc-${process.pid}-quick`; // a unique name: `ip netns list` shows it
const ns = await NetNS.create(name);         // as `ip netns add`
try {
  // Run a function inside it, on a pool thread (arguments and result are copied):
  const links = await withNetNS(name, () =>
    require('node:child_process').execFileSync('ip', ['-brief', 'link'], { encoding: 'utf8' }));
  console.log(links.trim());                 // lo   DOWN   00:00:00:00:00:00 <LOOPBACK>

  // Or create objects inside it that your own thread keeps, closures intact:
  await ns.execFile('ip', ['link', 'set', 'lo', 'up']);
  const server = await ns.listen(net.createServer((s) => s.end(`hello from ${name}`)), { host: '127.0.0.1', port: 0 });
  const socket = await ns.connect({ host: '127.0.0.1', port: server.address().port });
  for await (const chunk of socket) console.log(String(chunk)); // hello from nsdoc-…
  server.close();
} finally {
  ns.close();
  await NetNS.delete(name);                  // as `ip netns del`
}
