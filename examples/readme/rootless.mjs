// Run without root: netns sandbox -- node rootless.mjs
import net from 'node:net';
import { once } from 'node:events';
import { createTestNetwork } from 'netns/testing';

const lan = await createTestNetwork({
  hosts: { a: { addr: '10.20.0.1/24' }, b: { addr: '10.20.0.2/24' } },
  links: [['a', 'b']],
});
try {
  const server = await lan.hosts.a.listen(net.createServer((socket) => socket.end(`hello from a, uid ${process.getuid()}\n`)), { port: 7000 });
  const client = await lan.hosts.b.connect({ host: lan.address('a'), port: 7000 });
  const [reply] = await once(client.setEncoding('utf8'), 'data');
  console.log('b received:', reply.trim()); // b received: hello from a, uid 0
  server.close();
} finally {
  await lan.delete(); // nothing would outlive the sandbox anyway: it ends with its last process
}
