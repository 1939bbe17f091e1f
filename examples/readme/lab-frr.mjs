import { createLab } from 'netns/testing';

const ospf = { frr: { ospf: {} } }; // zebra + ospfd; hello 1 s, dead 4 s: { ospf: { hello, dead } }
const lab = await createLab({
  prefix: 'nsdoc-',
  ipv6: false, // OSPFv2 routes IPv4; FRR routers keep the lab's IPv6 routes
  hosts: { h1: {}, h2: {}, h3: {} },
  routers: { r1: ospf, r2: ospf, r3: ospf },
  links: [['h1', 'r1'], ['h2', 'r2'], ['h3', 'r3'], ['r1', 'r2'], ['r2', 'r3'], ['r1', 'r3']],
});
const toH3 = async () => (await lab.execFile('r1', 'ip', ['route', 'get', lab.address('h3')])).stdout.match(/dev (\S+)/)[1];
try {
  await lab.waitConverged({ timeoutMs: 30_000 }); // every router routes every subnet the shortest way
  console.log('r1 to h3 through', await toH3(), '(r3)');
  await lab.execFile('h1', 'ping', ['-c', '1', lab.address('h3')]);
  await lab.linkDown('r1', 'r3');
  await lab.waitConverged({ timeoutMs: 30_000 }); // ETIMEDOUT says which router lacks which prefix
  console.log('r1 to h3 through', await toH3(), '(r2)');
  await lab.execFile('h1', 'ping', ['-c', '1', lab.address('h3')]);
} catch (error) {
  console.log(await lab.daemonLogs('r1')); // { zebra, ospfd }: their logs, kept after delete() too
  throw error;
} finally {
  await lab.delete(); // stops the daemons (SIGTERM, awaited), then the namespaces
}
