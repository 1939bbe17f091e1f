// lab.waitFor's polling (pollUntil) and waitConverged's report: the first
// truthy value returned, a deadline's ETIMEDOUT saying what was still
// missing, a throwing check's own error, every option refused by message;
// and the "r1 lacks ..." line. The waits here are the product's own (1 ms
// intervals), never the test's.
import { describe, expect, it } from 'vitest';
import { describeMissing, pollUntil } from '../../dist/testing/lab/converge.js';
import { MAX_TIMER_MS } from '../../dist/core/timer-limit.js';

describe('pollUntil', () => {
  it('resolves with the first truthy value, checking again after each falsy one', async () => {
    let calls = 0;
    const value = await pollUntil(async () => (++calls === 3 ? { routes: 3 } : 0), { intervalMs: 1 }, 'lab.waitFor', () => '');
    expect(value).toEqual({ routes: 3 });
    expect(calls).toBe(3);
  });

  it('rejects with ETIMEDOUT at the deadline, saying what the last value lacked', async () => {
    let last = 0;
    const error = await pollUntil(() => (last++, ''), { timeoutMs: 1, intervalMs: 1 }, 'lab.waitConverged', () => `r1 lacks 10.0.3.0/24 (after ${last} looks)`).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'ETIMEDOUT', message: expect.stringMatching(/^lab\.waitConverged: not reached within 1 ms: r1 lacks 10\.0\.3\.0\/24 \(after \d+ looks\)$/) });
    expect(last).toBeGreaterThanOrEqual(1);
  });

  it("passes on a check's own error", async () => {
    const failure = new Error('no such node');
    await expect(pollUntil(() => Promise.reject(failure), undefined, 'lab.waitFor', () => '')).rejects.toBe(failure);
  });

  it('refuses what is not a function, and options out of range or unknown, by message', async () => {
    await expect(pollUntil('ready' as never, undefined, 'lab.waitFor', () => '')).rejects.toMatchObject({ code: 'ERR_NETNS_INVALID_ARG', message: 'lab.waitFor takes a function, got string' });
    for (const [options, name, value] of [[{ timeoutMs: 0 }, 'timeoutMs', '0'], [{ intervalMs: 1.5 }, 'intervalMs', '1.5'], [{ timeoutMs: MAX_TIMER_MS + 1 }, 'timeoutMs', String(MAX_TIMER_MS + 1)], [{ intervalMs: '5' }, 'intervalMs', '5']] as const) {
      await expect(pollUntil(() => true, options as never, 'lab.waitFor', () => ''), name).rejects.toMatchObject({
        code: 'ERR_NETNS_INVALID_ARG',
        message: `lab.waitFor: ${name} must be an integer from 1 to ${MAX_TIMER_MS} ms, got ${value}`,
      });
    }
    await expect(pollUntil(() => true, { timeout: 5 } as never, 'lab.waitFor', () => '')).rejects.toMatchObject({ code: 'ERR_NETNS_INVALID_ARG', message: expect.stringContaining('lab.waitFor options') });
    expect(await pollUntil(() => 'at once', { timeoutMs: MAX_TIMER_MS, intervalMs: 1 }, 'lab.waitFor', () => '')).toBe('at once');
  });
});

describe('describeMissing', () => {
  it("lists each router's missing routes, leaving out those that lack none", () => {
    expect(describeMissing(new Map([['r1', ['10.0.3.0/24', '10.0.4.0/24']], ['r2', []], ['r3', ['10.0.1.0/24 (through 10.0.6.2, not on a shortest way)']]]))).toBe(
      'r1 lacks 10.0.3.0/24, 10.0.4.0/24; r3 lacks 10.0.1.0/24 (through 10.0.6.2, not on a shortest way)',
    );
    expect(describeMissing(new Map([['r1', []]]))).toBe('');
  });
});
