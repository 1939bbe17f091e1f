// A pool worker judges what a call left behind before it takes the next task:
// anything still able to run would run later inside another call's
// namespace. The tracking runs in the worker's thread; here it runs in the
// test's own, with real timers, streams and file handles.
import { open, type FileHandle } from 'node:fs/promises';
import { createGzip } from 'node:zlib';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  countAlsoAlive,
  mayHaveLeftovers,
  settledDown,
  somethingAlive,
  startWatchingLeftovers,
  stopWatching,
  watchCall,
} from '../../dist/run/leftovers.js';

beforeAll(() => startWatchingLeftovers());

// The test runner makes timers and messages of its own around a test: a
// test watches only its own body, as the worker watches only fn.
async function asACall(body: () => unknown): Promise<void> {
  watchCall();
  try {
    await body();
  } finally {
    stopWatching();
  }
}

afterEach(async () => {
  countAlsoAlive(() => false);
  expect(await settledDown()).toBe(true); // each test clears what it made
});

describe('what a call leaves behind', () => {
  it('finds nothing after a call that made nothing', async () => {
    await asACall(() => {
      expect(mayHaveLeftovers()).toBe(false);
      expect(somethingAlive()).toBe(false);
    });
  });

  it('finds a timer the call left, ref’d or not, and never settles while it runs', async () => {
    let timer: NodeJS.Timeout | undefined;
    await asACall(() => {
      timer = setTimeout(() => undefined, 3_600_000).unref();
    });
    expect(mayHaveLeftovers()).toBe(true);
    expect(somethingAlive()).toBe(true);
    expect(await settledDown()).toBe(false);
    clearTimeout(timer);
  });

  it('settles once a timer the call made is cleared: its own turns of the loop are not leftovers', async () => {
    await asACall(async () => {
      clearTimeout(setTimeout(() => undefined, 3_600_000));
      expect(await settledDown()).toBe(true); // judged while still watching, as the worker does
    });
    expect(somethingAlive()).toBe(false);
  });

  it('counts what was made before the call or after it was judged, never', async () => {
    const before = setInterval(() => undefined, 3_600_000);
    await asACall(() => undefined);
    const after = setInterval(() => undefined, 3_600_000);
    expect(somethingAlive()).toBe(false);
    clearInterval(before);
    clearInterval(after);
  });

  it('starts each call afresh: promises made by the last one are not counted', async () => {
    await asACall(() => Promise.resolve(1).then((n) => n + 1));
    expect(mayHaveLeftovers()).toBe(true); // queued reactions may still run: judge after a turn
    expect(somethingAlive()).toBe(false);
    await asACall(() => expect(mayHaveLeftovers()).toBe(false));
  });

  it('finds an open zlib stream, and lets it go once both its sides have ended', async () => {
    await asACall(async () => {
      const gzip = createGzip();
      expect(somethingAlive()).toBe(true);
      gzip.resume();
      const ended = new Promise((resolve) => gzip.on('end', resolve));
      gzip.end('text');
      await ended;
    });
    expect(await settledDown()).toBe(true);
  });

  it('keeps a zlib stream whose output was never read: it runs again when someone reads', async () => {
    let gzip: ReturnType<typeof createGzip> | undefined;
    await asACall(async () => {
      gzip = createGzip();
      const finished = new Promise((resolve) => gzip!.on('finish', resolve));
      gzip.end('text');
      await finished;
    });
    expect(gzip!.writableFinished).toBe(true);
    expect(await settledDown()).toBe(false);
    const ended = new Promise((resolve) => gzip!.on('end', resolve));
    gzip!.resume();
    await ended;
  });

  it('lets a destroyed zlib stream go', async () => {
    await asACall(async () => {
      const gzip = createGzip();
      const closed = new Promise((resolve) => gzip.on('close', resolve));
      gzip.destroy();
      await closed;
    });
    expect(await settledDown()).toBe(true);
  });

  it('does not hold an open file handle against the call: it runs nothing by itself', async () => {
    let handle: FileHandle | undefined;
    await asACall(async () => {
      handle = await open('/proc/self/stat', 'r');
    });
    expect(await settledDown()).toBe(true);
    await handle?.close();
  });

  it('counts what the worker tracks itself, such as a nested call not awaited', () => {
    let nestedWaiting = true;
    countAlsoAlive(() => nestedWaiting);
    expect(somethingAlive()).toBe(true);
    expect(mayHaveLeftovers()).toBe(true);
    nestedWaiting = false;
    expect(somethingAlive()).toBe(false);
  });
});
