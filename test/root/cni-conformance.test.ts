// The conformance and stress runner (netns/cni/testing's checkPlugin, and
// `netns cni check`) on real plugins: Debian's Go ptp, the cni-ptp example,
// and a plugin that leaks on purpose, so each verdict is one a user can trust:
// a real leak is caught (Go ptp 1.1.1 leaves its masquerade rules when DEL
// comes after the namespace is gone), and a clean plugin passes.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NetNS } from '../../dist/index.js';
import { checkPlugin, type ScenarioReport } from '../../dist/cni/testing/index.js';
import { runCli } from '../helpers/cli.js';
import { CLI_PATH } from '../helpers/cli-path.js';
import { GO_PLUGINS, haveGoPlugins, OURS } from '../helpers/cni-ptp.js';
import { privileged } from '../helpers/privileges.js';

const conf = (type: string, extra: Record<string, unknown> = {}) => ({
  cniVersion: '1.0.0',
  name: 'replaced-by-the-runner',
  type,
  ipMasq: true,
  ipam: { type: 'host-local', subnet: '10.79.0.0/24', routes: [{ dst: '0.0.0.0/0' }] },
  ...extra,
});

// A plugin that makes a veth on the host at ADD and forgets it at DEL.
const LEAKY = `#!${process.execPath}
const { execFileSync } = require('node:child_process');
const env = process.env;
const input = require('node:fs').readFileSync(0, 'utf8');
if (env.CNI_COMMAND === 'VERSION') { console.log(JSON.stringify({ cniVersion: '1.0.0', supportedVersions: ['1.0.0'] })); process.exit(0); }
const fail = (code, msg) => { console.log(JSON.stringify({ cniVersion: '1.0.0', code, msg })); process.exit(1); };
let config; try { config = JSON.parse(input); } catch { fail(6, 'not JSON'); }
if (config.cniVersion !== '1.0.0') fail(1, 'unknown version');
if (!env.CNI_CONTAINERID || !env.CNI_IFNAME) fail(4, 'missing variables');
if (env.CNI_COMMAND === 'ADD') {
  execFileSync('ip', ['link', 'add', 'lk' + require('node:crypto').createHash('sha256').update(env.CNI_CONTAINERID).digest('hex').slice(0, 10), 'type', 'veth']);
  console.log(JSON.stringify({ cniVersion: '1.0.0', interfaces: [], ips: [] }));
}
`;

// A plugin whose ADD, killed at the wrong moment, leaves what host-local
// leaves when it is killed between creating a reservation file and writing
// the container's id into it: an empty file no DEL can match. It makes the
// file, and removes it only if it lives 300 ms longer.
const KILLED_WHILE_RESERVING = `#!${process.execPath}
const fs = require('node:fs');
const env = process.env;
const config = JSON.parse(fs.readFileSync(0, 'utf8'));
const ok = (value) => { console.log(JSON.stringify({ cniVersion: '1.0.0', ...value })); process.exit(0); };
if (env.CNI_COMMAND === 'VERSION') ok({ supportedVersions: ['1.0.0'] });
if (env.CNI_COMMAND !== 'ADD') ok({});
const dir = require('node:path').join(config.ipam.dataDir, config.name);
const reservation = dir + '/reservation-' + env.CNI_CONTAINERID;
if (fs.existsSync(reservation)) ok({ interfaces: [], ips: [] });
fs.mkdirSync(dir, { recursive: true });
fs.writeFileSync(reservation, '');
setTimeout(() => { fs.rmSync(reservation); ok({ interfaces: [], ips: [] }); }, 300);
`;

const rowsByName = (rows: ScenarioReport[]) => Object.fromEntries(rows.map((row) => [row.scenario, row]));

describe.skipIf(!privileged || !haveGoPlugins)('the CNI conformance runner', () => {
  let dir: string;
  let leaky: string;
  let ours: string;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'netns-cni-check-test-'));
    chmodSync(dir, 0o755);
    leaky = join(dir, 'leaky');
    writeFileSync(leaky, LEAKY, { mode: 0o755 });
    ours = join(dir, 'cni-ptp');
    symlinkSync(OURS, ours);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  let confs = 0;
  const writeConf = (value: object): string => {
    const file = join(dir, `conf-${++confs}.json`);
    writeFileSync(file, JSON.stringify(value));
    return file;
  };

  it('passes Go ptp where it is clean and catches the masquerade rules it leaves when DEL comes after the namespace is gone', async () => {
    const rows = rowsByName(await checkPlugin({ plugin: `${GO_PLUGINS}/ptp`, conf: conf('ptp'), parallel: 3, only: ['version', 'warm-up', 'errors', 'lifecycle', 'netns-gone', 'parallel'] }));
    expect(Object.keys(rows)).toEqual(['version', 'warm-up', 'errors', 'lifecycle', 'netns-gone', 'parallel']);
    for (const name of ['version', 'warm-up', 'errors', 'lifecycle', 'parallel']) expect(rows[name], name).toMatchObject({ result: 'pass' });
    expect(rows['netns-gone']!.result).toBe('FAIL');
    expect(rows['netns-gone']!.detail).toMatch(/left: iptables-save nat: -A .*MASQUERADE/);
    // the runner's namespaces are gone (others, of tests running beside this one, may come and go)
    expect((await NetNS.list()).filter(({ name }) => name.startsWith(`cnichk-${process.pid}-`))).toEqual([]);
  }, 120_000);

  // abandoned-add failed before the plugin's delegates died with it (PR_SET_PDEATHSIG): the killed ADD's IPAM allocated after DEL
  it('passes the cni-ptp example (run per process) in every scenario', async () => {
    const rows = await checkPlugin({ plugin: ours, conf: conf('cni-ptp', { addressSets: { deleteDelayMs: 0 }, dataDir: join(dir, 'records') }), parallel: 4, rounds: 3 });
    expect(rows.filter((row) => row.result !== 'pass')).toEqual([]);
    expect(rows.map((row) => row.scenario)).toEqual(['version', 'warm-up', 'errors', 'lifecycle', 'netns-gone', 'parallel', 'killed-add', 'abandoned-add']);
  }, 180_000);

  it('fails a plugin that leaves a link behind, naming the link, and the CLI exits 1 with its table', async () => {
    const cli = await runCli('cni', 'check', leaky, '--conf', writeConf(conf('leaky')), '--only', 'version,errors,lifecycle', '--markdown');
    expect(cli.stdout).toMatch(/^\| scenario \| result \| detail \|$/m);
    expect(cli.stdout).toMatch(/^\| version \| pass \|/m);
    expect(cli.stdout).toMatch(/^\| errors \| pass \|/m);
    expect(cli.stdout).toMatch(/^\| lifecycle \| FAIL \| after DEL, host: left: link lk[0-9a-f]{10} veth/m);
    expect(cli.code).toBe(1);
  }, 60_000);

  it('counts an empty reservation left by an IPAM killed while writing it as host-local\'s, not the plugin\'s', async () => {
    const plugin = join(dir, 'killed-while-reserving');
    writeFileSync(plugin, KILLED_WHILE_RESERVING, { mode: 0o755 });
    const [row] = await checkPlugin({ plugin, conf: conf('killed-while-reserving'), only: ['killed-add'], rounds: 10 });
    expect(row).toMatchObject({ scenario: 'killed-add', result: 'pass' });
    expect(row!.detail).toMatch(/; in \d+, host-local was killed while writing a reservation and left it empty \(its own leak: no DEL can match it\)/);
  }, 60_000);

  it('deletes its namespaces when the CLI is interrupted (^C) mid-run', async () => {
    const watch = NetNS.watch();
    const cli = spawn(process.execPath, [CLI_PATH, 'cni', 'check', `${GO_PLUGINS}/ptp`, '--conf', writeConf(conf('ptp')), '--only', 'parallel', '--parallel', '20'], { stdio: 'ignore' });
    const prefix = `cnichk-${cli.pid}-`;
    try {
      for await (const event of watch) if (event.type === 'add' && event.name.startsWith(prefix)) break;
    } finally {
      watch.close();
    }
    cli.kill('SIGINT');
    expect(await once(cli, 'close')).toEqual([null, 'SIGINT']); // it dies by the signal, as a shell expects, once it has cleaned up
    expect((await NetNS.list()).filter(({ name }) => name.startsWith(prefix))).toEqual([]);
  }, 60_000);

  it('refuses bad input before making anything', async () => {
    await expect(checkPlugin({ plugin: join(dir, 'none'), conf: conf('ptp') })).rejects.toMatchObject({ code: 'ERR_NETNS_INVALID_ARG' });
    await expect(checkPlugin({ plugin: leaky, conf: conf('leaky'), only: ['nope' as never] })).rejects.toThrow(/no scenario nope/);
    await expect(checkPlugin({ plugin: leaky, conf: conf('leaky'), parallel: 0 })).rejects.toThrow(/parallel must be/);
    const usage = await runCli('cni', 'check', leaky);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toMatch(/--conf/);
  });
});
