// A describe block's CNI harness on scratch namespaces: a `host` namespace
// that stands for the node (the plugins are spawned there) and containers,
// a scratch folder for the result cache and the plugins' state, and every
// attachment added through `add` deleted after each test, passed or failed.
// Everything goes in afterAll.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll } from 'vitest';
import type { NetNS } from '../../dist/index.js';
import { CniHarness, type NetworkConfigList, type RuntimeConf } from '../../dist/cni/testing/index.js';
import { createTestNetwork, type TestNetwork } from '../../dist/testing.js';

export interface HarnessFixture<H extends string> {
  hosts: Record<'host' | H, NetNS>;
  scratch: string;
  harness: CniHarness;
  /** ADD through the harness, remembered for the cleanup. */
  add(list: NetworkConfigList, rt: RuntimeConf): ReturnType<CniHarness['add']>;
}

/** `pathOf(scratch)`: the CNI_PATH directories (a test may make one in the scratch folder first). */
export function useHarness<H extends string>(prefix: string, containers: readonly H[], pathOf: (scratch: string) => string[]): HarnessFixture<H> {
  let network: TestNetwork<'host' | H> | undefined;
  const added: [NetworkConfigList, RuntimeConf][] = [];
  const fixture = {
    add(list: NetworkConfigList, rt: RuntimeConf) {
      added.push([list, rt]);
      return fixture.harness.add(list, rt);
    },
  } as HarnessFixture<H>;

  beforeAll(async () => {
    fixture.scratch = mkdtempSync(join(tmpdir(), `${prefix}scratch-`));
    const hosts = Object.fromEntries(['host', ...containers].map((name) => [name, {}])) as Record<'host' | H, object>;
    network = await createTestNetwork<'host' | H>({ prefix, hosts });
    fixture.hosts = network.hosts;
    await fixture.hosts.host.execFile('ip', ['link', 'set', 'lo', 'up']);
    fixture.harness = new CniHarness({
      path: pathOf(fixture.scratch),
      cacheDir: join(fixture.scratch, 'cache'),
      env: { PATH: process.env.PATH },
      spawn: (command, args, options) => fixture.hosts.host.spawn(command, args, options),
    });
  });

  afterEach(async () => {
    for (const [list, rt] of added.splice(0)) await fixture.harness.del(list, rt).catch(() => {});
  });

  afterAll(async () => {
    await network?.delete();
    if (fixture.scratch) rmSync(fixture.scratch, { recursive: true, force: true });
  });

  return fixture;
}
