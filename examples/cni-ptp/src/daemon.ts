#!/usr/bin/env node
// cni-ptp's resident entry: serves the same handlers as main.ts to the shim
// (netns's netns-cni-shim) installed as the plugin binary, until SIGTERM.
// usage: daemon.js [SOCKET] (default /run/netns-cni/cni-ptp.sock, where the
// shim installed as `cni-ptp` connects). Each call plumbs in the namespace
// the shim runs in (args.hostNs), wherever the daemon runs. No top-level
// await, so that it can be bundled as CommonJS like main.ts. A deleted
// attachment's address set is destroyed at the end of its delay with no
// later call (address-sets.ts); stopping ends those timers.
import { serveResident } from 'netns/cni';
import { stopDeferredDeletes } from './address-sets.js';
import { handlers, info } from './handlers.js';

const socketPath = process.argv[2];
serveResident(handlers, info, socketPath ? { socketPath } : { name: 'cni-ptp' }).then(
  (server) => {
    void server.closed.then(stopDeferredDeletes);
    process.stderr.write(`cni-ptp: serving on ${server.socketPath}\n`);
  },
  (error: Error) => {
    process.stderr.write(`cni-ptp: cannot start: ${error.message}\n`);
    process.exitCode = 1;
  },
);
