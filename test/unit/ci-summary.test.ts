// CI's count line per run (.ci/summary.cjs): the counts a truncated log still
// shows at its end, and the names of the failures beside them. A report it
// cannot read, or a failure it cannot describe, must never lower the count.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const SCRIPT = fileURLToPath(new URL('../../.ci/summary.cjs', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'ci-summary-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let reports = 0;
function summary(report: object | string | undefined, status = '0'): { lines: string[]; counts: string } {
  const path = join(dir, `report-${++reports}.json`);
  if (report !== undefined) writeFileSync(path, typeof report === 'string' ? report : JSON.stringify(report));
  const run = spawnSync(process.execPath, [SCRIPT, path, status, 'as root, Node vX'], { stdio: ['ignore', 'pipe', 'pipe', 'pipe'], encoding: 'utf8' });
  expect(run.stderr).toBe('');
  expect(run.status).toBe(0);
  return { lines: run.stdout.trimEnd().split('\n'), counts: String(run.output[3]) };
}

const counts = { numPassedTests: 3, numFailedTests: 1, numPendingTests: 1, numTodoTests: 1 };
const file = (name: string, extra: object) => ({ name, status: 'failed', assertionResults: [], ...extra });

describe('the CI summary of one run', () => {
  it('names each failed test after the count line, from the checkout root, in one plain line', () => {
    const report = {
      ...counts,
      testResults: [
        file('/tmp/netns-ci-rootless.x/checkout/test/root/a.test.ts', {
          assertionResults: [
            { status: 'passed', fullName: 'fine' },
            { status: 'failed', fullName: 'a\nb', failureMessages: ['\u001b[31mAssertionError\u001b[39m: expected 1\n    at x.ts:1'] },
          ],
        }),
      ],
    };
    expect(summary(report, '1')).toEqual({
      lines: ['as root, Node vX: 3 passed, 1 failed, 2 skipped', '  FAILED test/root/a.test.ts > a: AssertionError: expected 1'],
      counts: '3 1 2\n',
    });
  });

  it('names a failed test with no message, and a file that failed outside its tests (a hook, an import)', () => {
    const report = {
      ...counts,
      testResults: [
        file('/w/main/test/unit/b.test.ts', { assertionResults: [{ status: 'failed', fullName: 'quiet', failureMessages: [] }] }),
        file('/w/main/test/unit/c.test.ts', { assertionResults: [{ status: 'passed', fullName: 'ok' }], message: 'afterAll failed\nstack' }),
        file('/w/main/test/unit/d.test.ts', { message: "Cannot find module '../x.js'" }),
      ],
    };
    expect(summary(report, '1').lines.slice(1)).toEqual([
      '  FAILED test/unit/b.test.ts > quiet: ',
      '  FAILED test/unit/c.test.ts: afterAll failed',
      "  FAILED test/unit/d.test.ts: Cannot find module '../x.js'",
    ]);
  });

  it('counts a failure when there is no report, or one cut short, and when a run failed with every test passed', () => {
    for (const report of [undefined, '{"numPassedTests": 12, "numFa']) {
      const { lines, counts: missing } = summary(report, '124');
      expect(lines).toEqual(['as root, Node vX: no report (the run ended before its tests)', 'as root, Node vX: 0 passed, 1 failed, 0 skipped']);
      expect(missing).toBe('0 1 0\n');
    }
    const passed = summary({ numPassedTests: 5, numFailedTests: 0, numPendingTests: 0, numTodoTests: 0, testResults: [] }, '1');
    expect(passed.lines[1]).toMatch(/the run FAILED outside the tests/);
    expect(passed.counts).toBe('5 1 0\n');
  });
});
