import { closePool, configurePool, NetNS, poolIdle, poolStats, withNetNS } from 'netns';

const name = `nsdoc-${process.pid}-run`;
const ns = await NetNS.create(name);
try {
  // fn is sent as source text: it sees its arguments, globals, require and import(),
  // never this scope. Arguments and result are structured-cloned.
  const inside = await withNetNS(ns, (inode) =>
    require('node:fs').statSync('/proc/thread-self/ns/net').ino === inode, ns.inode);
  console.log('fn ran in the namespace:', inside); // true

  // fn may be async too. Its errors come back with name, message, stack and code.
  const error = await withNetNS(name, () => require('node:fs').readFileSync('/proc/sys/net/nope'))
    .catch((e) => e);
  console.log('error code:', error.code); // ENOENT

  // Give up on a call: it rejects with an AbortError.
  const aborted = await withNetNS(ns, { signal: AbortSignal.timeout(200) }, () => new Promise(() => {}))
    .catch((e) => e);
  console.log('aborted:', aborted.name); // AbortError

  configurePool({ maxWorkers: 2 }); // default: os.availableParallelism()
  console.log('tasks run:', poolStats().tasksRun); // { workers, busy, queued, tasksRun, … }
  await poolIdle(); // no call pending, discarded threads gone
  await closePool(); // optional: an idle pool never keeps the process alive
} finally {
  ns.close();
  await NetNS.delete(name);
}
