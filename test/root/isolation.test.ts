// The root suite runs in a throwaway network namespace (scripts/test-isolated.mjs),
// and the launcher's before/after comparison of the real namespace sees changes.
import { statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestNetwork, type TestNetwork } from '../../dist/testing.js';
import { privileged } from '../helpers/privileges.js';

const launcher = fileURLToPath(new URL('../../scripts/test-isolated.mjs', import.meta.url));

describe.skipIf(!privileged)('the suite runs isolated from the real network', () => {
  let network: TestNetwork<'a'>;

  beforeAll(async () => {
    network = await createTestNetwork({ hosts: { a: {} } });
  });

  afterAll(async () => {
    await network?.delete();
  });

  it('runs in a namespace of its own, not the real one', () => {
    const here = statSync('/proc/self/ns/net').ino;
    expect(process.env.NETNS_TEST_NETNS).toBe(String(here));
    expect(Number(process.env.NETNS_TEST_REAL_NETNS)).toBeGreaterThan(0);
    expect(here).not.toBe(Number(process.env.NETNS_TEST_REAL_NETNS));
  });

  it("the launcher's snapshot sees a table, a link, an address and a route added", async () => {
    // run in a fixture namespace, so that the tests' host stays as other files expect it
    const script = `
      const { execFileSync } = await import('node:child_process');
      const { snapshot, compare } = await import(${JSON.stringify(launcher)});
      const before = snapshot();
      execFileSync('nft', ['add', 'table', 'inet', 'probe']);
      execFileSync('ip', ['link', 'add', 'probe0', 'type', 'veth', 'peer', 'name', 'probe1']);
      execFileSync('ip', ['addr', 'add', '192.0.2.7/24', 'dev', 'probe0']);
      execFileSync('ip', ['link', 'set', 'probe0', 'up']);
      console.log(JSON.stringify(compare(before, snapshot())));
    `;
    const { stdout } = await network.hosts.a.execFile(process.execPath, ['--input-type=module', '-e', script]);
    const changes = (JSON.parse(stdout) as string[]).join('\n');
    expect(changes).toMatch(/nft ruleset changed[\s\S]*table inet probe/);
    expect(changes).toMatch(/links: added .*probe0/);
    expect(changes).toMatch(/addresses: added .*192\.0\.2\.7\/24/);
    expect(changes).toMatch(/routes: added .*192\.0\.2\.0\/24 dev probe0/);
  });
});
