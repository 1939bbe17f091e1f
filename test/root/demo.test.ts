import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { inUserNamespace, privileged } from '../helpers/privileges.js';
import { CLI_PATH as cli } from '../helpers/cli-path.js';
import { assertNobodyCanReach } from '../helpers/nobody-access.js';


function run(argv: string[]): Promise<{ code: number; stdout: string; stderr: string; pid: number }> {
  return new Promise((resolve) => {
    const child = execFile(argv[0]!, argv.slice(1), { encoding: 'utf8' }, (error, stdout, stderr) =>
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr, pid: child.pid! }),
    );
  });
}

// The demo names its namespaces nsdemo-<its pid>-…; another demo may be running beside it.
const demoLeftovers = (pid: number) => [
  ...readdirSync('/run/netns').filter((name) => name.startsWith(`nsdemo-${pid}-`)),
  ...readFileSync('/proc/self/mountinfo', 'utf8').split('\n').filter((line) => line.includes(`nsdemo-${pid}-`)),
];

describe.skipIf(!privileged)('npm start / netns demo', () => {
  it('runs every step on real namespaces, reports them as JSON, and leaves nothing behind', async () => {
    const result = await run([process.execPath, cli, 'demo', '--json']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout) as { ok: boolean; totalMs: number; steps: { step: string; ok: boolean; ms: number; details: string[] }[] };
    expect(report.ok).toBe(true);
    expect(report.steps.length).toBeGreaterThanOrEqual(6);
    for (const step of report.steps) expect(step, step.step).toMatchObject({ ok: true, ms: expect.any(Number) });
    expect(report.steps.map((s) => s.step).join('\n')).toMatch(/withNetNS[\s\S]*server[\s\S]*race[\s\S]*EBUSY[\s\S]*gc/);
    expect(report.steps.flatMap((s) => s.details).join('\n')).toContain('ECONNREFUSED');
    expect(demoLeftovers(result.pid)).toEqual([]);
  }, 120_000); // a whole program of many steps: minutes on a loaded 2-CPU machine, seconds otherwise

  // In a user namespace: setpriv --reuid=65534 fails, for the namespace maps only its caller (no uid 65534 to become).
  it.skipIf(inUserNamespace)('tells an unprivileged user what is missing and exits at once', async () => {
    assertNobodyCanReach(cli);
    const result = await run(['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', '--inh-caps=-all', process.execPath, cli, 'demo']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('CAP_SYS_ADMIN is missing');
    expect(result.stderr).toContain('sudo npm start');
    expect(result.stdout).toBe('');
  });
});
