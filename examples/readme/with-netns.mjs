import { NetNS, withNetNS } from 'netns';

const ns = await NetNS.create(`nsdoc-${process.pid}-run`);
try {
  // fn is sent as source text: it sees its arguments, globals, require and import(), never this scope.
  const inside = await withNetNS(ns, (inode) => require('node:fs').statSync('/proc/thread-self/ns/net').ino === inode, ns.inode);
  console.log('fn ran in the namespace:', inside); // true; arguments and result are structured-cloned

  const error = await withNetNS(ns, () => require('node:fs').readFileSync('/proc/sys/net/nope')).catch((e) => e);
  console.log('error code:', error.code); // ENOENT: errors come back with name, message, stack and code

  const aborted = await withNetNS(ns, { signal: AbortSignal.timeout(200) }, () => new Promise(() => {})).catch((e) => e);
  console.log('aborted:', aborted.name); // AbortError: the stuck worker is terminated
} finally {
  await ns.delete();
}
