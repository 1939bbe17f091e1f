// The one road to the kernel, on a scripted backend: a failed transaction's
// plans are undone last first, its jobs then tried alone; a job that fails on
// drift (ENOENT) is tried again once after a resync, and fails with its own
// error if the resync fails; the counters say what happened.
import { describe, expect, it, vi } from 'vitest';
import type { AddrsetBackend, Op, WriterLock } from '../../dist/addrset/index.js';
import { Pipeline, type Job } from '../../dist/addrset/pipeline.js';
import { netnsError, type ErrorCode } from '../../dist/core/errors.js';

const LOCK: WriterLock = { fd: null, release: () => {} };
const OP: Op = { op: 'addTable' };

/** A backend whose every apply fails with `code` (or succeeds with none), counting the applies. */
function backend(code?: ErrorCode) {
  const calls = { applies: 0 };
  const b: AddrsetBackend = {
    apply: async () => {
      calls.applies++;
      if (code) throw netnsError(code, `refused (${code})`);
    },
    read: async () => ({ tableExists: true, sets: new Map(), records: new Map() }),
    lock: async () => LOCK,
  };
  return { backend: b, calls };
}

/** A job that bumps `model.value` when planned (undo puts it back), settling `outcome`. */
function job(model: { value: number }): { job: Job; outcome: Promise<string> } {
  let settle!: (text: string) => void;
  const outcome = new Promise<string>((resolve) => (settle = resolve));
  return {
    outcome,
    job: {
      plan: () => {
        const previous = model.value;
        model.value = previous + 1;
        return { ops: [OP], undo: [() => (model.value = previous)], outcome: { effect: 'none' } };
      },
      landed: () => settle('landed'),
      failed: (error) => settle(`failed: ${(error as Error).message}`),
    },
  };
}

describe('Pipeline', () => {
  it('undoes a failed transaction last plan first, then tries each job alone: the model ends as it began', async () => {
    const { backend: b, calls } = backend('EBUSY');
    const pipeline = new Pipeline(b, LOCK, async () => {});
    const model = { value: 0 };
    const [first, second] = [job(model), job(model)];
    pipeline.submit(first.job);
    pipeline.submit(second.job);
    expect(await Promise.all([first.outcome, second.outcome])).toEqual(['failed: refused (EBUSY)', 'failed: refused (EBUSY)']);
    expect(model.value).toBe(0);
    expect(calls.applies).toBe(3); // together, then each alone
    expect([pipeline.transactions, pipeline.failedTransactions]).toEqual([3, 3]);
  });

  it('on drift, resyncs once and tries the job once more: a second ENOENT fails it', async () => {
    const { backend: b, calls } = backend('ENOENT');
    let resyncs = 0;
    const pipeline = new Pipeline(b, LOCK, async () => {
      resyncs++;
    });
    const one = job({ value: 0 });
    pipeline.submit(one.job);
    expect(await one.outcome).toBe('failed: refused (ENOENT)');
    expect([resyncs, calls.applies]).toEqual([1, 2]);
  });

  it('when the resync itself fails, the job fails with its own error, not the resync\'s', async () => {
    const { backend: b, calls } = backend('ENOENT');
    const pipeline = new Pipeline(b, LOCK, async () => {
      throw new Error('resync failed');
    });
    const one = job({ value: 0 });
    pipeline.submit(one.job);
    expect(await one.outcome).toBe('failed: refused (ENOENT)');
    expect(calls.applies).toBe(1);
  });

  it('counts a landed transaction and no failure', async () => {
    const { backend: b } = backend();
    const pipeline = new Pipeline(b, LOCK, async () => {});
    const one = job({ value: 0 });
    pipeline.submit(one.job);
    expect(await one.outcome).toBe('landed');
    expect([pipeline.transactions, pipeline.failedTransactions]).toEqual([1, 0]);
  });

  it("reports a listener's throw as an uncaught exception, apart from the pipeline, which goes on to the next job", async () => {
    const { backend: b } = backend();
    const pipeline = new Pipeline(b, LOCK, async () => {});
    const thrown = new Error('a listener failed');
    const rethrows: (() => void)[] = [];
    const microtasks = vi.spyOn(globalThis, 'queueMicrotask').mockImplementation((task) => void rethrows.push(task));
    try {
      const [first, second] = [job({ value: 0 }), job({ value: 0 })];
      pipeline.submit({ ...first.job, landed: () => { throw thrown; } });
      pipeline.submit(second.job);
      expect(await second.outcome).toBe('landed');
      expect(rethrows).toHaveLength(1);
      expect(rethrows[0]!).toThrow(thrown);
    } finally {
      microtasks.mockRestore();
    }
  });
});
