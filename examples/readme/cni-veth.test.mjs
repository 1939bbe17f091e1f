// The plugin's test: CniHarness runs it as a runtime (libcni) would. Run it with `node --test`, as root.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { NetNS } from 'netns';
import { CniHarness, parseConfList } from 'netns/cni/testing';
import { openNetlink } from 'netns/netlink';

test('cni-veth: ADD, CHECK, DEL and DEL again', async () => {
  const [host, container] = [await NetNS.create(`nsdoc-${process.pid}-host`), await NetNS.create(`nsdoc-${process.pid}-ctr`)];
  const cacheDir = mkdtempSync(join(tmpdir(), 'cni-cache-')); // never the node's /var/lib/cni
  const harness = new CniHarness({ path: [import.meta.dirname], cacheDir, // CNI_PATH: where `type` is found
    spawn: (command, args, options) => host.spawn(command, args, options) }); // `host` stands for the host
  const list = parseConfList({ cniVersion: '1.1.0', name: 'demo', plugins: [{ type: 'cni-veth.mjs', address: '10.9.0.2/24' }] });
  const rt = { containerId: 'ctr-1', netns: container.path, ifname: 'eth0' };
  try {
    const { result } = await harness.add(list, rt);
    assert.deepEqual(result.ips, [{ address: '10.9.0.2/24', interface: 1 }]);
    await harness.check(list, rt); // the cached result as prevResult
    await harness.del(list, rt);
    await harness.del(list, rt); // DEL must succeed again
    const nl = await openNetlink(host);
    assert.deepEqual((await nl.links.list()).map((link) => link.name), ['lo']); // the pair is gone
    nl.close();
  } finally {
    for (const ns of [host, container]) await ns.delete();
    rmSync(cacheDir, { recursive: true, force: true });
  }
});
