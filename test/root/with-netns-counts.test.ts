// withNetNS leaks nothing over many calls: descriptors and threads are where
// they were once the pool is idle. Its own file: Stryker's runner sees more
// threads here than npm test's (see FAILS_UNDER_STRYKER in
// vitest.mutate.config.ts), and this keeps the rest of with-netns.test.ts
// in mutation runs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closePool, NetNS, poolIdle, withNetNS } from '../../dist/index.js';
import { createTestNetwork, type TestNetwork } from '../../dist/testing.js';
import { openFdCount, threadCount } from '../helpers/process-state.js';
import { privileged } from '../helpers/privileges.js';

describe.skipIf(!privileged)('withNetNS over many calls', () => {
  let network: TestNetwork<'a' | 'b'>;
  let blue: NetNS;

  beforeAll(async () => {
    network = await createTestNetwork({ hosts: { a: {}, b: {} } });
    blue = NetNS.open(network.names.a);
  });

  afterAll(async () => {
    blue?.close();
    await closePool();
    await network?.delete();
  });

  it('leaves fd and thread counts where they were after 10,000 calls', async () => {
    // Warm up to the pool's full size first: a second worker is not a leak.
    await Promise.all(Array.from({ length: 1000 }, () => withNetNS(blue, () => 0)));
    await poolIdle();
    const fds = openFdCount();
    const threads = threadCount();
    for (let round = 0; round < 10; round++) {
      await Promise.all(Array.from({ length: 1000 }, (_, i) => withNetNS(i % 2 ? blue : network.names.b, () => 0)));
    }
    await poolIdle();
    expect(Math.abs(openFdCount() - fds)).toBeLessThanOrEqual(2);
    expect(Math.abs(threadCount() - threads)).toBeLessThanOrEqual(2);
  });
});
