// A lab's cleanup waits for every step it started before failing: a step
// still under way when delete() looked would leave a namespace or a link
// behind. So: nothing thrown until all have settled, then the first rejection
// in the order given (not the first in time); nothing thrown when none failed.
import { describe, expect, it } from 'vitest';
import { allSettledOrThrow } from '../../src/testing/lab/all-settled.js';

/** A promise settled by hand. */
function deferred() {
  let resolve!: () => void, reject!: (reason: unknown) => void;
  const promise = new Promise<void>((yes, no) => ((resolve = yes), (reject = no)));
  return { promise, resolve, reject };
}
/** Lets every queued promise callback run. */
const drain = () => new Promise((done) => setImmediate(done));

describe('allSettledOrThrow', () => {
  it('resolves when every step fulfils, and for no step at all', async () => {
    await expect(allSettledOrThrow([Promise.resolve(1), Promise.resolve('two')])).resolves.toBeUndefined();
    await expect(allSettledOrThrow([])).resolves.toBeUndefined();
  });

  it('throws the rejection among fulfilled steps', async () => {
    const failure = new Error('link gone');
    await expect(allSettledOrThrow([Promise.resolve(1), Promise.reject(failure), Promise.resolve(3)])).rejects.toBe(failure);
  });

  it('waits for a step still under way before throwing an earlier failure', async () => {
    const slow = deferred();
    let outcome: unknown = 'pending';
    void allSettledOrThrow([Promise.reject(new Error('first')), slow.promise]).catch((error: Error) => (outcome = error.message));
    await drain();
    expect(outcome).toBe('pending');
    slow.resolve();
    await drain();
    expect(outcome).toBe('first');
  });

  it('throws the first rejection in the order given, whichever came first', async () => {
    const early = deferred();
    const late = deferred();
    const all = allSettledOrThrow([late.promise, early.promise]);
    early.reject('second in order');
    await drain();
    late.reject('first in order');
    await expect(all).rejects.toBe('first in order');
  });
});
