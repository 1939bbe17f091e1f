import { createLab } from 'netns/testing';

const lab = await createLab({
  prefix: 'nsdoc-',
  hosts: { h1: {}, h3: {} },
  routers: { r1: {} },
  links: [['h1', 'r1'], ['r1', 'h3']],
});
try {
  // As on a machine named h1: it reaches h3 by name (/etc/netns/NAME/hosts, bound over /etc/hosts)
  const { stdout } = await lab.execFile('h1', 'sh', ['-c', 'hostname && ping -c 1 h3']);
  console.log(stdout); // h1, then PING h3 … 1 packets transmitted, 1 received
} finally {
  await lab.delete(); // the namespaces, and the names with them
}
