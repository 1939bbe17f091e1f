import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AddressSets } from '../../dist/addrset/index.js';
import { createTestNetwork, type TestNetwork } from '../../dist/testing.js';
import { runCli } from '../helpers/cli.js';
import { expectTableOnlyIn, hostRuleset } from '../helpers/placement.js';
import { privileged } from '../helpers/privileges.js';

describe.skipIf(!privileged)('netns addrset', () => {
  let network: TestNetwork<'a'>;
  let ns: string;
  const scratch = mkdtempSync(join(tmpdir(), 'netns-cli-'));
  let hostBefore: string;

  beforeAll(async () => {
    network = await createTestNetwork({ hosts: { a: {} } });
    hostBefore = await hostRuleset();
    ns = network.names.a;
    const sets = await AddressSets.open({ netns: ns, table: 'policy' });
    await sets.ensure('ns/keep', ['10.1.0.1', 'fd00::1']);
    await sets.ensure('ns/leak "quoted"', ['10.1.0.2']);
    await sets.ensure('ns/pending', ['10.1.0.3']);
    await sets.delete('ns/pending');
    await sets.close();
  });

  afterAll(async () => {
    rmSync(scratch, { recursive: true, force: true });
    await network?.delete();
    expect(await hostRuleset(), "the tests' host ruleset").toBe(hostBefore);
  });

  it('lists the owned sets with owner, state and size', async () => {
    const result = await runCli('addrset', 'list', ns, '--table', 'policy', '--json');
    expect(result).toMatchObject({ code: 0, stderr: '' });
    const rows = JSON.parse(result.stdout) as { owner: string; family: number; state: string; elements: number }[];
    expect(rows).toHaveLength(6);
    await expectTableOnlyIn(network.hosts.a, 'policy');
    expect(rows).toContainEqual(expect.objectContaining({ owner: 'ns/keep', family: 6, elements: 1, state: 'orphan' }));
    expect(rows).toContainEqual(expect.objectContaining({ owner: 'ns/pending', family: 4, elements: 0, state: 'pending' }));
    const text = await runCli('addrset', 'list', ns, '-t', 'policy');
    expect(text.stdout).toContain('"ns/leak \\"quoted\\""');
  });

  it("shows one owner's addresses", async () => {
    const result = await runCli('addrset', 'show', ns, 'ns/keep', '--table', 'policy', '--json');
    expect(JSON.parse(result.stdout)).toMatchObject({ owner: 'ns/keep', v4: { elements: ['10.1.0.1'] }, v6: { elements: ['fd00::1'] } });
    const text = await runCli('addrset', 'show', ns, 'ns/keep', '--table', 'policy');
    expect(text.stdout).toMatch(/10\.1\.0\.1/);
  });

  it('collects what is not live, dry run first, and keeps pending deadlines', async () => {
    const dry = await runCli('addrset', 'gc', ns, '--table', 'policy', '--live', 'ns/keep', '--dry-run', '--json');
    const dryReport = JSON.parse(dry.stdout) as { dryRun: boolean; removed: { owner: string }[]; kept: { owner: string; reason: string }[] };
    expect(dryReport.dryRun).toBe(true);
    expect(dryReport.removed.map((e) => e.owner)).toEqual(['ns/leak "quoted"', 'ns/leak "quoted"']);
    expect(dryReport.kept.map((e) => [e.owner, e.reason]).sort()).toEqual(
      [['ns/keep', 'live'], ['ns/keep', 'live'], ['ns/pending', 'pending delete'], ['ns/pending', 'pending delete']].sort(),
    );
    const liveFile = join(scratch, 'live.json');
    writeFileSync(liveFile, JSON.stringify(['ns/keep']));
    const real = await runCli('addrset', 'gc', ns, '--table', 'policy', '--live-file', liveFile);
    expect(real.code).toBe(0);
    expect(real.stdout).toMatch(/^removed as4_[0-9a-f]+ \("ns\/leak \\"quoted\\""\)$/m);
    const rows = JSON.parse((await runCli('addrset', 'list', ns, '--table', 'policy', '--json')).stdout) as { owner: string }[];
    expect(new Set(rows.map((row) => row.owner))).toEqual(new Set(['ns/keep', 'ns/pending']));
  });

  it('gc refuses to run without an explicit live list, and reads CRLF live files with comments', async () => {
    const sets = await AddressSets.open({ netns: ns, table: 'agent' });
    try {
      await sets.ensure('live-1', ['10.2.0.1']);
      await sets.ensure('live-2', ['10.2.0.2']);
      const bare = await runCli('addrset', 'gc', ns, '--table', 'agent');
      expect(bare.code).toBe(2);
      expect(bare.stderr).toMatch(/^netns: ERR_NETNS_ADDRSET_LIVE_REQUIRED: /);
      const emptyFile = join(scratch, 'empty.txt');
      writeFileSync(emptyFile, '# nothing live\r\n\r\n');
      expect((await runCli('addrset', 'gc', ns, '--table', 'agent', '--live-file', emptyFile)).stderr).toMatch(/LIVE_REQUIRED: .*names no owner/);
      expect((await runCli('addrset', 'gc', ns, '--table', 'agent', '--all', '--live', 'x')).code).toBe(2);
      // the agent holds the table: a gc from another process is refused, naming it
      const busy = await runCli('addrset', 'gc', ns, '--table', 'agent', '--all');
      expect(busy.code).toBe(1);
      expect(busy.stderr).toMatch(new RegExp(`^netns: ERR_NETNS_ADDRSET_LOCKED: .*pid ${process.pid}`));
      expect((await runCli('addrset', 'list', ns, '--table', 'agent', '--json')).code).toBe(0); // looking is fine
    } finally {
      await sets.close();
    }
    const crlf = join(scratch, 'live.txt');
    writeFileSync(crlf, '# owners the runtime knows\r\nlive-1\r\n\r\n  live-2  \r\n');
    const kept = await runCli('addrset', 'gc', ns, '--table', 'agent', '--live-file', crlf, '--json');
    expect(kept.code).toBe(0);
    expect(JSON.parse(kept.stdout)).toMatchObject({ removed: [], kept: expect.arrayContaining([expect.objectContaining({ owner: 'live-1', reason: 'live' })]) });
    const all = await runCli('addrset', 'gc', ns, '--table', 'agent', '--all', '--json');
    expect((JSON.parse(all.stdout) as { removed: unknown[] }).removed).toHaveLength(4);
  });

  it('gc refuses a live file that is not a list of owners, or names none the table records', async () => {
    const sets = await AddressSets.open({ netns: ns, table: 'mangled' });
    await sets.ensure('real-owner', ['10.3.0.1']);
    await sets.close();
    const cases: [string, string | Buffer][] = [
      ['object.json', '{"live":["real-owner"]}\n'],
      ['quoted.txt', '"real-owner"\n'],
      ['binary.bin', Buffer.from([0x00, 0xff, 0x61])],
      ['yaml.yml', '- real-owner\n'],
      ['csv.txt', 'real-owner,other\n'],
    ];
    for (const [name, content] of cases) {
      const file = join(scratch, name);
      writeFileSync(file, content);
      const run = await runCli('addrset', 'gc', ns, '--table', 'mangled', '--live-file', file);
      expect({ name, code: run.code }).toEqual({ name, code: 2 });
      expect(run.stderr).toMatch(/^netns: ERR_NETNS_ADDRSET_(INVALID_OPTION|LIVE_REQUIRED): /);
    }
    const bom = join(scratch, 'bom.json');
    writeFileSync(bom, '\uFEFF["real-owner"]');
    expect((await runCli('addrset', 'gc', ns, '--table', 'mangled', '--live-file', bom)).code).toBe(0);
    const rows = JSON.parse((await runCli('addrset', 'list', ns, '--table', 'mangled', '--json')).stdout) as { owner: string }[];
    expect(rows.map((row) => row.owner)).toEqual(['real-owner', 'real-owner']);
    expect((await runCli('addrset', 'gc', ns, '--table', 'mangled', '--all', '--wait', 'abc')).code).toBe(2);
    expect((await runCli('addrset', 'gc', ns, '--table', 'mangled', '--all')).code).toBe(0);
  });

  // An owner too long for its record is recorded by its hash only and listed with no name: a live list
  // naming none of the table's owners must still be caught, or gc removes every one of them.
  it('gc refuses a live list that names none of the owners recorded only by hash, and keeps the one it names', async () => {
    const long = `ns/${'a-long-namespace-name-'.repeat(5)}`;
    const sets = await AddressSets.open({ netns: ns, table: 'hashed' });
    const refs = await sets.ensure(long, ['10.4.0.1']);
    await sets.close();
    const typo = await runCli('addrset', 'gc', ns, '--table', 'hashed', '--live', 'ns/typo');
    expect(typo.code).toBe(2);
    expect(typo.stderr).toMatch(/^netns: ERR_NETNS_ADDRSET_LIVE_REQUIRED: none of the 1 live owners given has sets in table hashed: gc would remove all 1 recorded owners/);
    const named = await runCli('addrset', 'gc', ns, '--table', 'hashed', '--live', long, '--json');
    expect(named.code).toBe(0);
    expect(JSON.parse(named.stdout)).toMatchObject({ removed: [] });
    const rows = JSON.parse((await runCli('addrset', 'list', ns, '--table', 'hashed', '--json')).stdout) as { name: string; elements: number }[];
    expect(rows.map((row) => [row.name, row.elements])).toEqual([[refs.v4, 1], [refs.v6, 0]]);
  });

  // A line cannot name an owner that starts with #, has spaces around it or a line break: a file that
  // seems to name one (a comment, trimmed, split) leaves it out of the live list, and gc removes its sets.
  it('gc refuses a line-per-owner live file while the table records an owner no line can name, and takes the same list as JSON', async () => {
    const owners = ['#frontend', ' padded ', 'two\nlines', 'plain'];
    const sets = await AddressSets.open({ netns: ns, table: 'unsayable' });
    for (const owner of owners) await sets.ensure(owner, ['10.5.0.1']);
    await sets.close();
    const lines = join(scratch, 'unsayable.txt');
    writeFileSync(lines, `${owners.join('\n')}\n`);
    const refused = await runCli('addrset', 'gc', ns, '--table', 'unsayable', '--live-file', lines);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/^netns: ERR_NETNS_ADDRSET_INVALID_OPTION: .*no line can name .*"#frontend".*JSON array/);
    const json = join(scratch, 'unsayable.json');
    writeFileSync(json, JSON.stringify(owners));
    const kept = await runCli('addrset', 'gc', ns, '--table', 'unsayable', '--live-file', json, '--json');
    expect(kept.code).toBe(0);
    expect(JSON.parse(kept.stdout)).toMatchObject({ removed: [] });
    const rows = JSON.parse((await runCli('addrset', 'list', ns, '--table', 'unsayable', '--json')).stdout) as { owner: string }[];
    expect(new Set(rows.map((row) => row.owner))).toEqual(new Set(owners));
  });

  it('reports errors with codes', async () => {
    const missing = await runCli('addrset', 'list', 'no-such-namespace-here', '--table', 'policy');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^netns: ENOENT: /);
    const badTable = await runCli('addrset', 'list', ns, '--table', 'bad table;');
    expect(badTable.stderr).toMatch(/^netns: ERR_NETNS_ADDRSET_INVALID_OPTION: /);
    expect((await runCli('addrset', 'list', ns)).code).toBe(2); // --table is required
    const absent = await runCli('addrset', 'list', ns, '--table', 'nothing_here', '--json');
    expect(JSON.parse(absent.stdout)).toEqual([]);
  });
});
