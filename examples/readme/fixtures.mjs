import http from 'node:http';
import { withNetNS } from 'netns';
import { createTestNetwork, sweep } from 'netns/testing';

await sweep('nsdoc-'); // removes what crashed runs left: namespaces of dead processes only

const net = await createTestNetwork({
  prefix: 'nsdoc-', // default 'nsfix-'; names are PREFIX<pid>-t<start>-p<pidns>-<random>-<host>
  hosts: { a: { addr: '10.10.0.1/24' }, b: { addr: '10.10.0.2/24' } },
  links: [['a', 'b']], // a veth pair (eth0 on each), both ends up; lo is up in every host
});
try {
  const server = await net.hosts.a.listen(http.createServer((req, res) => res.end('hi from a')), { port: 8080 });
  const body = await withNetNS(net.hosts.b, async (url) => (await fetch(url)).text(), `http://${net.address('a')}:8080/`);
  console.log('b fetched:', body); // b fetched: hi from a
  server.close();
} finally {
  await net.delete(); // removes everything (TypeScript: `await using net = …`)
}
