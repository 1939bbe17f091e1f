// The failure paths of the `netns` command that need privileges: each is one
// line "netns: CODE: message" on stderr and a stable exit code.
import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { privileged } from '../helpers/privileges.js';

const cli = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
const CODED = /^netns: (ERR_NETNS_[A-Z_]+|E[A-Z0-9]+): \S/;

function run(file: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(file, args, { encoding: 'utf8', env }, (error, stdout, stderr) =>
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
    );
  });
}

describe.skipIf(!privileged)('CLI failures that need privileges are coded', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'netns-cli-errors-'));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it('a namespace that is not there: exit 1 (list, show, gc, exec, pids, del)', async () => {
    for (const args of [
      ['addrset', 'list', 'no-such-ns-here', '-t', 't'],
      ['addrset', 'gc', 'no-such-ns-here', '-t', 't', '--all'],
      ['exec', 'no-such-ns-here', 'true'],
      ['pids', 'no-such-ns-here'],
      ['del', 'no-such-ns-here'],
    ]) {
      const result = await runCli(...args);
      expect(result.code, args.join(' ')).toBe(1);
      expect(result.stderr, args.join(' ')).toMatch(/^netns: ENOENT: /);
      expect(result.stderr.trim().split('\n'), args.join(' ')).toHaveLength(1);
    }
  });

  it('identify of a process that is not there: exit 1, coded', async () => {
    const result = await runCli('identify', '999999999');
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^netns: ENOENT: /);
  });

  it('the demo without privileges: exit 2, coded, with what to do', async () => {
    const result = await run('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', '--inh-caps=-all', process.execPath, cli, 'demo']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^netns: EPERM: the demo cannot run here:\n {2}- CAP_SYS_ADMIN is missing/);
  });

  it('a demo step that fails: exit 1, the step and stderr say the code', async () => {
    // a real nft that is broken, first on PATH
    const dir = mkdtempSync(join(scratch, 'broken-nft-'));
    writeFileSync(join(dir, 'nft'), '#!/bin/sh\necho "Error: this nft is broken" >&2\nexit 1\n');
    chmodSync(join(dir, 'nft'), 0o755);
    const result = await run(process.execPath, [cli, 'demo', '--json'], { ...process.env, PATH: `${dir}${delimiter}${process.env.PATH}` });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^netns: ERR_NETNS_NFT: nft --version: this nft is broken\n$/);
    expect(result.stderr).toMatch(CODED);
    const report = JSON.parse(result.stdout) as { ok: boolean; steps: { ok: boolean; error?: string }[] };
    expect(report.ok).toBe(false);
    expect(report.steps.at(-1)).toMatchObject({ ok: false, error: 'ERR_NETNS_NFT: nft --version: this nft is broken' });
  });
});
