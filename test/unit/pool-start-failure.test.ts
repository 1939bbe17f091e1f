import { afterAll, describe, expect, it } from 'vitest';
import { closePool, poolStats, withNetNS } from '../../dist/index.js';

describe('a pool whose threads cannot start', () => {
  afterAll(() => closePool());

  it('fails the calls instead of replacing threads forever', async () => {
    // the main thread has loaded the addon; new pool threads will not find it
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
