import { afterAll, describe, expect, it } from 'vitest';
import { closePool, ioStats, poolStats, withNetNS } from '../../dist/index.js';

describe('a pool whose threads cannot start', () => {
  afterAll(() => closePool());

  it('fails the calls instead of replacing threads forever', async () => {
    ioStats(); // the main thread loads the addon (on first use); new pool threads will not find it
    process.env.NETNS_ADDON_PATH = '/nonexistent/netns.node';
    for (let attempt = 0; attempt < 3; attempt++) {
      await expect(withNetNS('/proc/self/ns/net', () => 1)).rejects.toMatchObject({ code: 'ERR_NETNS_WORKER_EXITED' });
    }
    const workersBefore = poolStats().workers;
    await expect(withNetNS('/proc/self/ns/net', () => 1)).rejects.toMatchObject({
      code: 'ERR_NETNS_WORKER_EXITED',
      // the cause is in the message itself, not only in `cause`
      message: expect.stringMatching(/keep dying before they start: ERR_NETNS_ADDON_MISSING: .*NETNS_ADDON_PATH.*\n {2}\/nonexistent\/netns\.node\n/),
    });
    expect(poolStats()).toMatchObject({ workers: workersBefore, queued: 0 });
  });
});
