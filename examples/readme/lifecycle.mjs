import { once } from 'node:events';
import { NetNS } from 'netns';

const name = `nsdoc-${process.pid}-life`;
const events = NetNS.watch(); // names added to and deleted from /run/netns, as `ip netns monitor`
const ns = await NetNS.create(name); // /run/netns/NAME, as `ip netns add` (EEXIST if taken)
const scratch = await NetNS.create(); // anonymous: gone once its handle and everything in it are
const child = ns.spawn('sh', ['-c', 'echo ready; exec sleep 10']);
try {
  console.log(NetNS.list().find((entry) => entry.name === name)); // { name, path, inode, alive: true }
  await once(child.stdout, 'data'); // the child runs inside ns now
  console.log('pids:', NetNS.pids(name).includes(child.pid)); // as `ip netns pids`
  console.log('identify:', NetNS.identify({ pid: child.pid })); // [ 'nsdoc-…-life' ], as `ip netns identify`
  const theirs = NetNS.fromPid(child.pid); // or NetNS.open(name | path), NetNS.current()
  console.log('same namespace:', theirs.equals(ns)); // same dev + inode
  theirs.close();
  (await NetNS.attach(`${name}-b`, child.pid)).close(); // a second name for it, as `ip netns attach`
  await NetNS.delete(`${name}-b`);
  for await (const { type, name: changed } of events) {
    if (changed.startsWith(name)) console.log('watch:', type, changed); // add …-life, add …-life-b, delete …-life-b
    if (changed === `${name}-b` && type === 'delete') break; // ends the watch
  }
} finally {
  child.kill();
  for (const handle of [ns, scratch]) handle.close(); // idempotent; later use: ERR_NETNS_CLOSED
  await NetNS.delete(name); // lazy unmount + unlink, as `ip netns del`
}
