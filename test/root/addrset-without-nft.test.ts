// With no `nft` at all: every nft binary on PATH is hidden under an empty,
// non-executable file bind-mounted over it, in a private mount namespace made
// for each child (`unshare -m`), so nothing outside the child changes. There,
// AddressSets (the netlink default), the CLI's addrset commands and the demo
// work fully; only `backend: 'nft'` fails (EACCES, the spawn's error: a hidden
// nft is a file that cannot be run; prerequisites.test.ts has the ENOENT case,
// ERR_NETNS_NFT_MISSING).
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestNetwork, type TestNetwork } from '../../dist/testing.js';
import { privileged } from '../helpers/privileges.js';
import { CLI_PATH } from '../helpers/cli-path.js';

const dist = fileURLToPath(new URL('../../dist', import.meta.url));
const TABLE = 'nonft';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
  /** unshare and sh exec in turn: this is node's pid (the demo names its namespaces nsdemo-<pid>-…). */
  pid: number;
}

/** Every nft a PATH lookup could find, as the files themselves (a bind mount over a symlink would cover its target anyway). */
function nftBinaries(): string[] {
  const found = new Set<string>();
  for (const dir of (process.env.PATH ?? '').split(delimiter).filter(Boolean)) {
    try {
      if (statSync(join(dir, 'nft')).isFile()) found.add(realpathSync(join(dir, 'nft')));
    } catch {
      // not in this directory
    }
  }
  return [...found];
}

let hiding: string;
let empty: string;
let binaries: string[];

/** Runs node with `args` in a mount namespace of its own where no nft can be run. */
function withoutNft(args: string[]): Promise<Run> {
  const mounts = binaries.map((_, i) => `mount --bind "$1" "\${${i + 2}}"`).join(' && ');
  const argv = ['-m', '--propagation', 'private', 'sh', '-c', `${mounts} && shift ${binaries.length + 1} && exec "$@"`, 'sh', empty, ...binaries, process.execPath, ...args];
  return new Promise((resolve) => {
    const child = execFile('unshare', argv, { encoding: 'utf8' }, (error, stdout, stderr) =>
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr, pid: child.pid! }),
    );
  });
}

const script = (source: string) => withoutNft(['--input-type=module', '-e', `const { AddressSets } = await import(${JSON.stringify(`${dist}/addrset/index.js`)});\n${source}`]);
const cli = (...args: string[]) => withoutNft([CLI_PATH, ...args]);

describe.skipIf(!privileged)('address sets without nft', () => {
  let network: TestNetwork<'a'>;
  let ns: string;

  beforeAll(async () => {
    binaries = nftBinaries();
    hiding = mkdtempSync(join(tmpdir(), 'netns-no-nft-'));
    empty = join(hiding, 'nft');
    writeFileSync(empty, '', { mode: 0o644 });
    network = await createTestNetwork({ hosts: { a: {} } });
    ns = network.names.a;
  });

  afterAll(async () => {
    await network?.delete();
    if (hiding) rmSync(hiding, { recursive: true, force: true });
  });

  it('hides nft from the child, and only from it', async () => {
    expect(binaries.length).toBeGreaterThan(0); // the root suite requires nft: the cross-checks use it
    const result = await withoutNft(['-e', `require('node:child_process').execFile('nft', ['--version'], (error) => console.log(error ? error.code : 'ran'))`]);
    expect(result).toMatchObject({ code: 0, stdout: 'EACCES\n', stderr: '' });
    expect((await network.hosts.a.execFile('nft', ['--version'])).stdout).toMatch(/^nftables/);
  });

  it('AddressSets works fully on the netlink default; backend nft says nft is missing', async () => {
    const result = await script(`
      const keepAlive = setInterval(() => {}, 2 ** 30); // the destroy timer is unref'd, as a library's must be
      const sets = await AddressSets.open({ netns: ${JSON.stringify(ns)}, table: ${JSON.stringify(TABLE)}, deleteDelayMs: 0 });
      const destroyed = new Promise((resolve) => sets.once('destroyed', resolve));
      await sets.ensure('ns/gone', ['10.1.0.1']);
      await sets.delete('ns/gone');
      await destroyed;
      clearInterval(keepAlive);
      await sets.ensure('ns/a', ['10.1.0.1', 'fd00::1']);
      await sets.add('ns/a', ['10.2.0.0/24']);
      const overlap = await sets.add('ns/a', ['10.2.0.7']).catch((error) => error.code);
      await sets.replace('ns/a', ['10.3.0.1', '10.3.0.2']);
      await sets.remove('ns/a', ['10.3.0.2']);
      await sets.ensure('ns/leaked', ['10.9.0.1']);
      const a = await sets.inspect('ns/a');
      await sets.close();
      const next = await AddressSets.open({ netns: ${JSON.stringify(ns)}, table: ${JSON.stringify(TABLE)} });
      const gc = await next.gc({ live: ['ns/a'] });
      const list = await next.list();
      await next.close();
      const nft = await AddressSets.open({ netns: ${JSON.stringify(ns)}, table: ${JSON.stringify(TABLE)}, backend: 'nft' }).catch((error) => error.code);
      console.log(JSON.stringify({ overlap, a: [a.v4.elements, a.v6.elements], removed: gc.removed.map((e) => e.owner), list: list.map((row) => [row.owner, row.state, row.elements]), nft }));
    `);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(result.stdout)).toEqual({
      overlap: 'ERR_NETNS_ADDRSET_OVERLAP',
      a: [['10.3.0.1'], []], // replace set the whole content: no IPv6 address is left
      removed: ['ns/leaked', 'ns/leaked'],
      list: [['ns/a', 'orphan', 1], ['ns/a', 'orphan', 0]],
      nft: 'EACCES', // the spawn's own error: nft is there, but cannot be run
    });
  });

  it("the CLI's addrset commands work: list, show, gc", async () => {
    const planted = await script(`
      const sets = await AddressSets.open({ netns: ${JSON.stringify(ns)}, table: 'cli_nonft' });
      await sets.ensure('ns/keep', ['10.5.0.1']);
      await sets.ensure('ns/drop', ['10.6.0.1']);
      await sets.close();
    `);
    expect(planted).toMatchObject({ code: 0, stdout: '', stderr: '' });
    const list = await cli('addrset', 'list', ns, '--table', 'cli_nonft', '--json');
    expect(list.stderr).toBe('');
    expect((JSON.parse(list.stdout) as { owner: string }[]).map((row) => row.owner).sort()).toEqual(['ns/drop', 'ns/drop', 'ns/keep', 'ns/keep']);
    const show = await cli('addrset', 'show', ns, 'ns/keep', '--table', 'cli_nonft');
    expect(show.stderr).toBe('');
    expect(show.stdout).toContain(': 10.5.0.1\n');
    const gc = await cli('addrset', 'gc', ns, '--table', 'cli_nonft', '--live', 'ns/keep', '--json');
    expect(gc.stderr).toBe('');
    expect((JSON.parse(gc.stdout) as { removed: { owner: string }[] }).removed.map((entry) => entry.owner)).toEqual(['ns/drop', 'ns/drop']);
    const nft = await cli('addrset', 'list', ns, '--table', 'cli_nonft', '--backend', 'nft');
    expect(nft.code).toBe(1);
    expect(nft.stderr).toMatch(/^netns: EACCES: permission denied, spawn/);
  });

  it('the demo runs every step and leaves nothing behind', async () => {
    const result = await cli('demo', '--json');
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout) as { ok: boolean; steps: { step: string; ok: boolean }[] };
    expect(report.ok).toBe(true);
    expect(report.steps.map((step) => step.step).join('\n')).toMatch(/veth[\s\S]*withNetNS[\s\S]*server[\s\S]*race[\s\S]*EBUSY[\s\S]*gc[\s\S]*removed/);
    for (const step of report.steps) expect(step, step.step).toMatchObject({ ok: true });
    // The demo's namespaces were mounted in the child's mount namespace; their files are in the shared /run/netns.
    expect(readdirSync('/run/netns').filter((name) => name.startsWith(`nsdemo-${result.pid}-`))).toEqual([]);
  }, 120_000); // a whole program of many steps: minutes on a loaded 2-CPU machine, seconds otherwise
});
