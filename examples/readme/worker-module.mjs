import { NetNS, withNetNS, workerModule } from 'netns';

// In TypeScript: workerModule<typeof import('./link-probe.js')>(…) checks each call's arguments.
const probe = workerModule(new URL('./link-probe.mjs', import.meta.url));
const name = `nsdoc-${process.pid}-mod`;
const ns = await NetNS.create(name);
try {
  console.log(await withNetNS(ns, probe.interfaces, 'l')); // [ 'lo' ]: run inside the namespace
  console.log(typeof (await withNetNS(ns, probe.threadAgeMs))); // number: the module stays loaded
} finally {
  ns.close();
  await NetNS.delete(name);
}
