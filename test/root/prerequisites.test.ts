// A missing `nft` (a real PATH without it) is reported once by the nft
// backend, with a coded error naming the Debian package (the netlink default
// needs no nft: addrset-without-nft.test.ts). Fixtures and the demo do not need
// `ip` at all (netlink). The root suite refuses to start without its
// prerequisites (its tests still use `ip` and `nft`).
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestNetwork, type TestNetwork } from '../../dist/testing.js';
import { pathWithout, type BarePath } from '../helpers/path-without.js';
import { inUserNamespace, privileged } from '../helpers/privileges.js';
import { CLI_PATH } from '../helpers/cli-path.js';
import { assertNobodyCanReach } from '../helpers/nobody-access.js';

const dist = fileURLToPath(new URL('../../dist', import.meta.url));
const launcher = fileURLToPath(new URL('../../scripts/test-isolated.mjs', import.meta.url));

interface Run {
  code: number;
  stdout: string;
  stderr: string;
  /** The child's pid: the demo names its namespaces nsdemo-<pid>-… (another demo may run beside it). */
  pid: number;
}

function run(argv: string[], env: NodeJS.ProcessEnv): Promise<Run> {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, argv, { encoding: 'utf8', env }, (error, stdout, stderr) =>
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr, pid: child.pid! }),
    );
  });
}

function script(source: string, path: string): Promise<Run> {
  return run(['--input-type=module', '-e', source], { ...process.env, PATH: path });
}

const leftovers = (prefix: string) => (existsSync('/run/netns') ? readdirSync('/run/netns').filter((name) => name.startsWith(prefix)) : []);

describe.skipIf(!privileged)('missing prerequisites', () => {
  let network: TestNetwork<'a'>;
  let noNft: BarePath;
  let noIp: BarePath;

  beforeAll(async () => {
    network = await createTestNetwork({ hosts: { a: {} } });
    noNft = pathWithout('nft');
    noIp = pathWithout('ip');
  });

  afterAll(async () => {
    noNft?.dispose();
    noIp?.dispose();
    await network?.delete();
  });

  it("AddressSets.open with backend 'nft' without nft rejects once with ERR_NETNS_NFT_MISSING naming nftables", async () => {
    const result = await script(
      `const { AddressSets } = await import(${JSON.stringify(`${dist}/addrset/index.js`)});
       try { await AddressSets.open({ netns: ${JSON.stringify(network.names.a)}, table: 'nonft', backend: 'nft' }); console.log('opened'); }
       catch (error) { console.log(JSON.stringify({ name: error.name, code: error.code, message: error.message })); }`,
      noNft.path,
    );
    expect(result.stderr).toBe('');
    expect(JSON.parse(result.stdout)).toEqual({ name: 'NetnsError', code: 'ERR_NETNS_NFT_MISSING', message: expect.stringMatching(/nft .*Debian package nftables/) });
  });

  it('createTestNetwork without ip builds hosts, veths, addresses and lo, carries TCP, and leaves nothing', async () => {
    const prefix = `nsfixp${randomBytes(2).toString('hex')}-`;
    const result = await script(
      `const { createTestNetwork } = await import(${JSON.stringify(`${dist}/testing.js`)});
       const net = await import('node:net');
       const network = await createTestNetwork({ prefix: ${JSON.stringify(prefix)}, hosts: { a: { addr: '10.30.0.1/24' }, b: { addr: 'fd30::2/64' } }, links: [['a', 'b', { b: '10.30.0.2/24' }]] });
       const lo = await network.hosts.a.connect({ host: '127.0.0.1', port: 9 }).then(() => 'open', (e) => e.code);
       const server = await network.hosts.a.listen(net.createServer((s) => s.end('no ip')), { port: 8080 });
       const socket = await network.hosts.b.connect({ host: network.address('a'), port: 8080 });
       let text = '';
       await new Promise((resolve) => socket.setEncoding('utf8').on('data', (c) => (text += c)).on('end', resolve));
       server.close();
       const ip = await network.ip('a', 'link').catch((e) => e.code);
       await network.delete();
       console.log(JSON.stringify({ text, lo, b: network.address('b'), ip }));`,
      noIp.path,
    );
    expect(result.stderr).toBe('');
    // lo is up (a refused connection, not ENETUNREACH); network.ip() is the one thing that wants ip
    expect(JSON.parse(result.stdout)).toEqual({ text: 'no ip', lo: 'ECONNREFUSED', b: '10.30.0.2', ip: 'ERR_NETNS_IP_MISSING' });
    expect(leftovers(prefix)).toEqual([]);
  });

  it('without ip, a test process that dies still leaves no namespace (exit hook)', async () => {
    const prefix = `nsfixp${randomBytes(2).toString('hex')}-`;
    const result = await script(
      `const { createTestNetwork } = await import(${JSON.stringify(`${dist}/testing.js`)});
       const network = await createTestNetwork({ prefix: ${JSON.stringify(prefix)}, hosts: { a: {}, b: {} }, links: [['a', 'b']] });
       console.log(JSON.stringify(Object.values(network.names)));
       throw new Error('the test failed');`,
      noIp.path,
    );
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout)).toHaveLength(2);
    expect(leftovers(prefix)).toEqual([]);
  });

  it('the CLI with --backend nft without nft prints the code and the package, and exits 1', async () => {
    const result = await run([CLI_PATH, 'addrset', 'list', network.names.a, '--table', 'nonft', '--backend', 'nft'], { ...process.env, PATH: noNft.path });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^netns: ERR_NETNS_NFT_MISSING: .*nftables/);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('the demo without ip runs every step (it makes links over netlink) and exits 0', async () => {
    const result = await run([CLI_PATH, 'demo', '--json'], { ...process.env, PATH: noIp.path });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout) as { ok: boolean; steps: { step: string; ok: boolean }[] };
    expect(report.ok).toBe(true);
    expect(report.steps.map((step) => step.step).join('\n')).toMatch(/veth[\s\S]*withNetNS[\s\S]*server[\s\S]*race[\s\S]*gc[\s\S]*removed/);
    for (const step of report.steps) expect(step, step.step).toMatchObject({ ok: true });
    expect(leftovers(`nsdemo-${result.pid}-`)).toEqual([]);
  });

  for (const [command, pkg] of [['nft', 'nftables'], ['ip', 'iproute2']] as const) {
    it(`a root run of the suite without ${command} fails at once, naming ${pkg}`, async () => {
      const bare = command === 'nft' ? noNft : noIp;
      const result = await run([launcher, 'run', 'test/unit/addrset-encoding.test.ts'], { ...process.env, PATH: bare.path });
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(new RegExp(`cannot run: missing ${command} \\(install the Debian package ${pkg}`));
      expect(result.stdout).toBe(''); // vitest never started
    });
  }

  /** `launcher --version` run by `prefix`, without CI in its environment unless `ci`. */
  const launch = (prefix: string[], ci: boolean) => {
    const { CI: _ci, ...env } = process.env;
    return new Promise<Omit<Run, 'pid'>>((resolve) =>
      execFile(prefix[0]!, [...prefix.slice(1), process.execPath, launcher, '--version'], { encoding: 'utf8', env: ci ? { ...env, CI: '1' } : env }, (error, stdout, stderr) =>
        resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
      ),
    );
  };

  // In a user namespace: setpriv --reuid=65534 fails, for the namespace maps only its caller (no uid 65534 to become).
  it.skipIf(inUserNamespace)('an unprivileged run goes into a rootless sandbox, under CI too', async () => {
    assertNobodyCanReach(launcher);
    const asNobody = ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', '--inh-caps=-all'];
    for (const ci of [false, true]) {
      const result = await launch(asNobody, ci);
      expect(result.code, result.stderr).toBe(0);
      expect(result.stderr).toContain('not root: running the whole suite in a rootless sandbox');
    }
  });

  it('a run with neither CAP_SYS_ADMIN nor a rootless sandbox says the root suite is skipped; under CI it fails instead', async () => {
    // A user namespace of its own that may make no other (user.max_user_namespaces=0 there), and no capability left.
    const forbidden = `echo 0 > /proc/sys/user/max_user_namespaces && exec setpriv --inh-caps=-all --bounding-set=-all "$@"`;
    const noSandbox = ['unshare', '--user', '--map-root-user', '--', 'sh', '-c', forbidden, 'sh'];
    const local = await launch(noSandbox, false);
    expect(local.code, local.stderr).toBe(0);
    expect(local.stderr).toContain('the root suite is SKIPPED');
    const ci = await launch(noSandbox, true);
    expect(ci.code).toBe(1);
    expect(ci.stderr).toContain('CI must run the root suite');
  });
});
