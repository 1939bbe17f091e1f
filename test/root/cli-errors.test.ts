// The failure paths of the `netns` command that need privileges: each is one
// line on stderr and a stable exit code ("netns: CODE: message" for our own
// commands; iproute2's words and statuses for the verbs of ip netns).
import { execFile } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { LOCK_DIR } from '../../dist/addrset/table-lock.js';
import { runCli } from '../helpers/cli.js';
import { CLI_PATH as cli } from '../helpers/cli-path.js';
import { assertNobodyCanReach } from '../helpers/nobody-access.js';
import { inUserNamespace, privileged } from '../helpers/privileges.js';

const CODED = /^netns: (ERR_NETNS_[A-Z_]+|E[A-Z0-9]+): \S/;

function run(file: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(file, args, { encoding: 'utf8' }, (error, stdout, stderr) =>
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
    );
  });
}

describe.skipIf(!privileged)('CLI failures that need privileges are coded', () => {
  it('a namespace that is not there: one line and the status ip gives (addrset list and gc: coded, 1)', async () => {
    for (const [args, code, stderr] of [
      [['addrset', 'list', 'no-such-ns-here', '-t', 't'], 1, /^netns: ENOENT: /],
      [['addrset', 'gc', 'no-such-ns-here', '-t', 't', '--all'], 1, /^netns: ENOENT: /],
      [['exec', 'no-such-ns-here', 'true'], 255, /^Cannot open network namespace "no-such-ns-here": No such file or directory$/],
      [['pids', 'no-such-ns-here'], 1, /^Cannot open network namespace: No such file or directory$/],
      [['del', 'no-such-ns-here'], 1, /^Cannot remove namespace file "\/run\/netns\/no-such-ns-here": No such file or directory$/],
    ] as const) {
      const result = await runCli(...args);
      expect(result.code, args.join(' ')).toBe(code);
      expect(result.stderr.trim(), args.join(' ')).toMatch(stderr);
      expect(result.stderr.trim().split('\n'), args.join(' ')).toHaveLength(1);
    }
  });

  it('identify of a process that is not there: exit 1, as ip', async () => {
    const result = await runCli('identify', '999999999');
    expect(result).toMatchObject({ code: 1, stdout: '', stderr: 'Cannot open network namespace: No such file or directory\n' });
  });

  // In a user namespace: setpriv --reuid=65534; a user namespace maps only its caller, so there is no uid 65534 to become.
  it.skipIf(inUserNamespace)('the demo without privileges: exit 2, coded, with what to do', async () => {
    assertNobodyCanReach(cli);
    const result = await run('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', '--inh-caps=-all', process.execPath, cli, 'demo']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^netns: EPERM: the demo cannot run here:\n {2}- CAP_SYS_ADMIN is missing/);
  });

  it('a demo step that fails: exit 1, the step and stderr say the code', async () => {
    // The address-set lock folder read-only (a tmpfs, in a mount namespace of the demo's own): the demo needs
    // no tool that could be broken, so the failure is the kernel's.
    mkdirSync(LOCK_DIR, { recursive: true, mode: 0o700 });
    const result = await run('unshare', ['-m', '--propagation', 'private', 'sh', '-c', `mount -t tmpfs -o ro tmpfs ${LOCK_DIR} && exec "$@"`, 'sh', process.execPath, cli, 'demo', '--json']);
    expect(result.code).toBe(1);
    const said = `EROFS: read-only file system, open '${LOCK_DIR}/net-`;
    expect(result.stderr.startsWith(`netns: ${said}`) && result.stderr.endsWith("-demo_policy.lock'\n")).toBe(true);
    expect(result.stderr.split('\n')).toHaveLength(2); // one line
    expect(result.stderr).toMatch(CODED);
    const report = JSON.parse(result.stdout) as { ok: boolean; steps: { step: string; ok: boolean; error?: string }[] };
    expect(report.ok).toBe(false);
    expect(report.steps.at(-1)).toMatchObject({ step: expect.stringMatching(/^Address sets/), ok: false, error: expect.stringContaining(said) });
    expect(report.steps.at(-1)!.error!.startsWith(said)).toBe(true);
  });
});
