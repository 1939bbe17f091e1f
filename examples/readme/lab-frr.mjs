import { createLab } from 'netns/testing';

const ospf = { frr: { ospf: {} } }; // zebra + ospfd; hello 1 s, dead 4 s: { ospf: { hello, dead } }
const lab = await createLab({
  prefix: 'nsdoc-',
  ipv6: false, // OSPFv2 routes IPv4; FRR routers keep the lab's IPv6 routes
  hosts: { h1: { dirs: { '/var/log': 'empty' } }, h2: {}, h3: {} }, // h1 has a /var/log of its own
  routers: { r1: ospf, r2: ospf, r3: ospf, gw: { nat: {} } }, // gw: the lab's way out, to this machine
  links: [['h1', 'r1'], ['h2', 'r2'], ['h3', 'r3'], ['r1', 'r2'], ['r2', 'r3'], ['r1', 'r3'], ['r2', 'gw']],
});
const toH3 = async () => (await lab.execFile('r1', 'ip', ['route', 'get', lab.address('h3')])).stdout.match(/dev (\S+)/)[1];
try {
  await lab.waitConverged({ timeoutMs: 30_000 }); // every router routes every subnet the shortest way
  console.log('r1 to h3 through', await toH3(), '(r3)');
  await lab.execFile('h1', 'sh', ['-c', 'ping -c 1 h3 > /var/log/ping.log']); // by name: /etc/hosts names every node
  const machine = lab.plan.nat.machineAddress.split('/')[0]; // this machine's end of gw's uplink
  await lab.execFile('h1', 'ping', ['-c', '1', machine]); // out through r2 and gw, masqueraded
  console.log('h1 reaches this machine through gw');
  await lab.linkDown('r1', 'r3');
  await lab.waitConverged({ timeoutMs: 30_000 }); // ETIMEDOUT says which router lacks which prefix
  console.log('r1 to h3 through', await toH3(), '(r2)');
  await lab.execFile('h1', 'ping', ['-c', '1', 'h3']);
} catch (error) {
  console.log(await lab.daemonLogs('r1')); // { zebra, ospfd }: their logs, kept after delete() too
  throw error;
} finally {
  await lab.delete(); // stops the daemons (SIGTERM, awaited), then the namespaces
}
