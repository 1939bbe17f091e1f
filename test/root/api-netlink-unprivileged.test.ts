// openNetlink() on the caller's own namespace makes its socket right there,
// without a namespace thread or setns: a user without CAP_SYS_ADMIN (nobody)
// can list and watch links, as with `ip link` or pyroute2's IPRoute(), and a change is
// the kernel's EPERM, as a NetnsError.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NetNS } from '../../dist/index.js';
import { distUrl, runNodeScript } from '../helpers/node-child.js';
import { inUserNamespace, privileged } from '../helpers/privileges.js';
import { nsName, scratchNamespaces } from '../helpers/scratch-namespaces.js';

const AS_NOBODY = ['setpriv', '--reuid=nobody', '--regid=nogroup', '--clear-groups'];

// Run as nobody inside `ns`; prints what it saw as JSON.
const script = (target: string) => `
  import { openNetlink, NetnsError } from ${JSON.stringify(distUrl('netlink/index.js'))};
  const nl = await openNetlink(${target});
  const names = (await nl.links.list()).map((link) => link.name);
  const addresses = (await nl.addresses.list()).map((address) => address.address);
  const add = await nl.links.add({ name: 'apinl0', kind: 'dummy' }).then(
    () => 'added',
    (error) => ({ code: error.code, netnsError: error instanceof NetnsError }),
  );
  const watched = [];
  const watcher = await nl.watch({ links: true, existing: true });
  for await (const event of watcher) {
    if (event.type === 'synced') break;
    watched.push(event.link.name);
  }
  nl.close();
  await nl.close(); // awaiting the synchronous close is harmless
  console.log(JSON.stringify({ names, addresses, add, watched }));
`;

describe.skipIf(!privileged)("openNetlink() on the caller's own namespace, unprivileged", () => {
  const scratch = scratchNamespaces('apinl-');
  let ns: NetNS;

  beforeAll(async () => {
    ns = await scratch.create();
    await ns.execFile('ip', ['link', 'set', 'lo', 'up']);
  });

  afterAll(() => scratch.removeAll());

  for (const [how, target] of [
    ['with no target', ''],
    ['naming its own namespace by path', JSON.stringify('/proc/thread-self/ns/net')],
  ] as const) {
    // In a user namespace: setpriv --reuid=nobody; a user namespace maps only its caller, so there is no nobody to become.
    it.skipIf(inUserNamespace)(`lists links as nobody ${how}, and a link add is EPERM`, async () => {
      const result = await runNodeScript(script(target), { prefix: ['ip', 'netns', 'exec', nsName(ns), ...AS_NOBODY] });
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      const seen = JSON.parse(result.stdout);
      expect(seen.names).toContain('lo');
      expect(seen.addresses).toContain('127.0.0.1');
      expect(seen.add).toEqual({ code: 'EPERM', netnsError: true });
      expect(seen.watched).toContain('lo'); // a watcher's socket is made the same way
    });
  }
});
