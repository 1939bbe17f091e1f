import { createLab } from 'netns/testing';

const lab = await createLab({
  prefix: 'nsdoc-',
  hosts: { a: {}, b: {}, c: {} },
  switches: { s1: {}, s2: {} },
  routers: { r1: {}, r2: {} },
  links: [['a', 's1'], ['b', 's1'], ['r1', 's1'], ['r1', 'r2', { impair: { r1: { rate: '10mbit', loss: 1 } } }], ['r2', 's2'], ['c', 's2']],
});
try {
  console.log(String(await lab.connectivity())); // who reaches whom, as pingAll: … dropped: 0 of 20 (0%)
  const capture = await lab.capture('c', 's2', { file: `/tmp/lab-${process.pid}.pcap` }); // c's end of c–s2
  await lab.nodes.a.execFile('ping', ['-c', '3', '-i', '0.2', lab.address('c')]); // one reply is enough: r1→r2 loses 1%
  console.log('captured', (await capture.stop()).packets, 'packets'); // `tcpdump -r FILE` reads it
  const cut = await lab.partition(['a'], ['c']); // both ways, until healed
  console.log((await lab.connectivity()).dropped); // { pairs: 2, of: 20 }: a's and c's own drops, at once
  await lab.heal(cut);
  await lab.impair('c', 's2', { delay: '20ms' }).catch((e) => console.log(e.code)); // no sch_netem: ERR_NETNS_UNSUPPORTED
  console.log(lab.picture()); // Mermaid; lab.picture('dot') for Graphviz
} finally {
  await lab.delete(); // every namespace, link, qdisc and table it made
}
