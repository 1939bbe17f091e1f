// When IPAM cannot release an allocation, cni-ptp says so and forgets
// nothing: a DEL whose IPAM DEL fails exits non-zero with the IPAM's error and
// keeps its attachment's record (what IPAM still holds, for a later DEL or GC
// to release); a GC whose IPAM release fails exits non-zero and keeps the
// stale host veth (its alias is the record of whose allocation it is), so the
// next GC releases it and only then removes it. The IPAM is a fake of this
// file's, which holds one address and refuses DEL while the test says so; no
// Go plugin is needed. The plugin runs as a process in namespaces this file
// creates (deleted, with every veth in them, even when a test fails).
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { NetNS } from '../../dist/index.js';
import { attachmentKey } from '../../dist/cni/identity.js';
import { createTestNetwork, type TestNetwork } from '../../dist/testing.js';
import { execOutcome } from '../helpers/exec-outcome.js';
import { privileged } from '../helpers/privileges.js';

const PLUGIN = fileURLToPath(new URL('../../examples/cni-ptp/dist/cni-ptp.cjs', import.meta.url));
/** The code the fake IPAM refuses a DEL with (a plugin-specific one, so that passing it on shows). */
const REFUSED = 111;

/**
 * An IPAM plugin that gives every ADD the one address and, while
 * STATE/del-fails exists, refuses every DEL. STATE/held-<container id> stands
 * for an allocation it holds. It speaks up to 1.0.0, so GC releases by IPAM DEL.
 */
const fakeIpam = (state: string) => `#!/bin/sh
state='${state}'
case "$CNI_COMMAND" in
VERSION) echo '{"cniVersion":"1.0.0","supportedVersions":["0.3.0","0.3.1","0.4.0","1.0.0"]}' ;;
ADD) cat >/dev/null; : > "$state/held-$CNI_CONTAINERID"
  echo '{"cniVersion":"1.0.0","ips":[{"address":"10.77.0.2/24","gateway":"10.77.0.1"}]}' ;;
DEL) cat >/dev/null
  if [ -e "$state/del-fails" ]; then echo '{"cniVersion":"1.0.0","code":${REFUSED},"msg":"fake IPAM: cannot release"}'; exit 1; fi
  rm -f "$state/held-$CNI_CONTAINERID" ;;
*) cat >/dev/null; echo '{"cniVersion":"1.0.0","code":4,"msg":"fake IPAM: unknown CNI_COMMAND"}'; exit 1 ;;
esac
`;

type Hosts = 'host' | 'c1';

describe.skipIf(!privileged)("cni-ptp when IPAM cannot release", () => {
  const tag = randomBytes(3).toString('hex');
  const network = `ipam-fails-${tag}`;
  let test: TestNetwork<Hosts>;
  let hosts: TestNetwork<Hosts>['hosts'];
  let dir: string;
  let state: string;
  let config: Record<string, unknown> & { dataDir: string };

  beforeAll(async () => {
    test = await createTestNetwork({ prefix: `cniipf-${tag}-`, hosts: { host: {}, c1: {} } });
    hosts = test.hosts;
    dir = mkdtempSync(join(tmpdir(), `netns-cni-ipam-fails-${tag}-`));
    state = join(dir, 'state');
    mkdirSync(state);
    mkdirSync(join(dir, 'bin'));
    writeFileSync(join(dir, 'bin', 'fake-ipam'), fakeIpam(state), { mode: 0o755 });
    config = { cniVersion: '1.0.0', name: network, type: 'ptp', ipMasq: false, addressSets: false, dataDir: join(dir, 'records'), ipam: { type: 'fake-ipam' } };
  });

  afterAll(async () => {
    await test?.delete();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const run = (env: Record<string, string>, conf: object) =>
    execOutcome(hosts.host, process.execPath, [PLUGIN], { env: { PATH: process.env.PATH ?? '', CNI_PATH: join(dir, 'bin'), ...env }, input: JSON.stringify(conf) });
  const attach = (command: string, container: NetNS, containerID: string) => ({ CNI_COMMAND: command, CNI_CONTAINERID: containerID, CNI_NETNS: container.path, CNI_IFNAME: 'eth0' });
  const gc = () => run({ CNI_COMMAND: 'GC' }, { ...config, cniVersion: '1.1.0', 'cni.dev/valid-attachments': [] });
  const refuseDel = (refuse: boolean) => (refuse ? writeFileSync(join(state, 'del-fails'), '') : rmSync(join(state, 'del-fails'), { force: true }));
  const held = () => readdirSync(state).filter((file) => file.startsWith('held-'));
  const recordOf = (containerID: string) => join(config.dataDir, `${attachmentKey(network, { containerID, ifname: 'eth0' })}.json`);
  const hostVeths = async () => {
    const { stdout } = await hosts.host.execFile('ip', ['-j', 'link', 'show', 'type', 'veth']);
    return (JSON.parse(stdout || '[]') as { ifname: string }[]).map((link) => link.ifname);
  };

  // Whatever a test added goes after it, passed or failed, with IPAM willing again.
  const added: string[] = [];
  afterEach(async () => {
    refuseDel(false);
    for (const id of added.splice(0)) await run(attach('DEL', hosts.c1, id), config);
  });
  const add = async (containerID: string) => {
    added.push(containerID);
    expect(await run(attach('ADD', hosts.c1, containerID), config)).toMatchObject({ code: 0 });
    expect(held()).toEqual([`held-${containerID}`]);
    expect(existsSync(recordOf(containerID))).toBe(true);
  };

  it("DEL whose IPAM DEL fails exits non-zero with the IPAM's error and keeps the record; the next DEL releases it", async () => {
    await add('ctr-del');
    refuseDel(true);
    const failed = await run(attach('DEL', hosts.c1, 'ctr-del'), config);
    expect(failed.code).not.toBe(0);
    expect(JSON.parse(failed.stdout)).toMatchObject({ code: REFUSED, msg: expect.stringContaining('fake IPAM: cannot release') });
    expect(held()).toEqual(['held-ctr-del']);
    expect(existsSync(recordOf('ctr-del')), 'the record of what IPAM still holds').toBe(true);

    refuseDel(false);
    expect(await run(attach('DEL', hosts.c1, 'ctr-del'), config)).toMatchObject({ code: 0, stdout: '' });
    expect(held()).toEqual([]);
    expect(existsSync(recordOf('ctr-del'))).toBe(false);
    expect(await hostVeths()).toEqual([]);
  });

  it('GC whose IPAM release fails exits non-zero and keeps the stale veth and record; the next GC releases, then removes them', async () => {
    await add('ctr-gc');
    const [veth] = await hostVeths();
    refuseDel(true);
    const failed = await gc();
    expect(failed.code).not.toBe(0);
    expect(await hostVeths(), 'the stale veth, whose alias says whose allocation is unreleased').toEqual([veth]);
    expect(held()).toEqual(['held-ctr-gc']);
    expect(JSON.parse(failed.stdout)).toMatchObject({ msg: expect.stringContaining('fake IPAM: cannot release') });
    expect(existsSync(recordOf('ctr-gc'))).toBe(true);

    refuseDel(false);
    expect(await gc()).toMatchObject({ code: 0, stdout: '' });
    expect(held()).toEqual([]);
    expect(await hostVeths()).toEqual([]);
    expect(existsSync(recordOf('ctr-gc'))).toBe(false);
  });

  it('GC of a stale veth with no record (an ADD from before records were kept) whose IPAM release fails exits non-zero and keeps the veth', async () => {
    await add('ctr-old');
    rmSync(recordOf('ctr-old'));
    const [veth] = await hostVeths();
    refuseDel(true);
    const failed = await gc();
    expect(failed.code).not.toBe(0);
    expect(await hostVeths(), 'the stale veth, the only record of whose allocation is unreleased').toEqual([veth]);
    expect(held()).toEqual(['held-ctr-old']);
    expect(JSON.parse(failed.stdout)).toMatchObject({ msg: expect.stringContaining('fake IPAM: cannot release') });

    refuseDel(false);
    expect(await gc()).toMatchObject({ code: 0, stdout: '' });
    expect(held()).toEqual([]);
    expect(await hostVeths()).toEqual([]);
  });
});
