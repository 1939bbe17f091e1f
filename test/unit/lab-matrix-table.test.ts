// lab.connectivity()'s verdicts and table, against namespaces that answer at
// once (no timer runs out): which failures of a connection say "not
// reached" and which are not about the network, the diagonal, a node
// without an address, the dropped count and percentage, the table's exact
// text, and at most 128 probes under way at a time.
import { describe, expect, it, vi } from 'vitest';
import { connectivity } from '../../src/testing/lab/matrix.js';

const failure = (code: string) => Object.assign(new Error(code), { code });
type Answer = 'connected' | string; // or an error code

/** A namespace answering every connect at once as `answer(host)` says; counts attempts and closed sockets. */
function fakeNs(answer: (host: string) => Answer) {
  const seen = { attempts: 0, destroyed: 0 };
  const connect = async ({ host }: { host: string }) => {
    seen.attempts++;
    const what = answer(host);
    if (what === 'connected') return { destroy: () => seen.destroyed++ };
    throw failure(what);
  };
  return { ns: { connect } as never, seen };
}

/** From a node answering `answer`, to b at 10.0.0.2: b's column of a's row, and a's attempts. */
async function verdict(answer: Answer) {
  const a = fakeNs(() => answer);
  const matrix = await connectivity([{ key: 'a', ns: a.ns, address: '10.0.0.1' }, { key: 'b', ns: fakeNs(() => 'ECONNREFUSED').ns, address: '10.0.0.2' }], 3000);
  return { reached: matrix.reachable[0]![1], attempts: a.seen.attempts, destroyed: a.seen.destroyed };
}

describe('one pair', () => {
  it('is reached by a connection (closed at once) or a refusal, at the first attempt', async () => {
    expect(await verdict('connected')).toEqual({ reached: true, attempts: 1, destroyed: 1 });
    expect(await verdict('ECONNREFUSED')).toEqual({ reached: true, attempts: 1, destroyed: 0 });
  });

  it('is not reached, at once, when the path says no', async () => {
    for (const code of ['EHOSTUNREACH', 'ENETUNREACH', 'ENETDOWN', 'EHOSTDOWN', 'EPERM', 'EACCES']) {
      expect(await verdict(code), code).toEqual({ reached: false, attempts: 1, destroyed: 0 });
    }
  });

  it('is tried three times while attempts time out, then not reached', async () => {
    expect(await verdict('ETIMEDOUT')).toEqual({ reached: false, attempts: 3, destroyed: 0 });
  });

  it('leaves no timer behind once answered (a pending one would hold the process up to the timeout)', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      expect(await verdict('ECONNREFUSED')).toMatchObject({ reached: true });
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });

  it('rejects with a failure that is not about the network', async () => {
    for (const code of ['EMFILE', 'ERR_NETNS_CLOSED']) await expect(verdict(code)).rejects.toMatchObject({ code });
  });
});

describe('the matrix', () => {
  it('has null on the diagonal, false toward a node without an address, and counts the ordered pairs dropped', async () => {
    // a reaches c only; b reaches a (c has no address, so nobody reaches it); c reaches nobody.
    const a = fakeNs((host) => (host === '10.0.0.3' ? 'ECONNREFUSED' : 'EHOSTUNREACH'));
    const b = fakeNs(() => 'ECONNREFUSED');
    const c = fakeNs(() => 'ENETUNREACH');
    const matrix = await connectivity(
      [{ key: 'a', ns: a.ns, address: '10.0.0.1' }, { key: 'bee', ns: b.ns, address: '10.0.0.2' }, { key: 'c', ns: c.ns, address: undefined }],
      3000,
    );
    expect(matrix.nodes).toEqual(['a', 'bee', 'c']);
    expect(matrix.reachable).toEqual([
      [null, false, false],
      [true, null, false],
      [false, false, null],
    ]);
    expect(matrix.dropped).toEqual({ pairs: 5, of: 6 });
    expect(b.seen.attempts).toBe(1); // b is asked only about a: c has no address
    // Columns as wide as the longest key; 5 of 6 is 83%.
    expect(String(matrix)).toBe(['    a   bee c  ', 'a   ·   ✗   ✗  ', 'bee ✓   ·   ✗  ', 'c   ✗   ✗   ·  ', 'dropped: 5 of 6 (83%)'].join('\n'));
  });

  it('reads 0% of nothing for a lab of one node, or none', async () => {
    const one = await connectivity([{ key: 'a', ns: fakeNs(() => 'ECONNREFUSED').ns, address: '10.0.0.1' }], 3000);
    expect(one.reachable).toEqual([[null]]);
    expect(String(one)).toBe('  a\na ·\ndropped: 0 of 0 (0%)');
    expect(String(await connectivity([], 3000))).toBe('  \ndropped: 0 of 0 (0%)');
  });

  it('rounds the share dropped to a whole percent', async () => {
    // Of three nodes, only a fails to reach b: 1 of 6 pairs, 16.7%.
    const answering = (unreached: string) => fakeNs((host) => (host === unreached ? 'EHOSTUNREACH' : 'ECONNREFUSED')).ns;
    const three = await connectivity(['a', 'b', 'c'].map((key, i) => ({ key, ns: answering(i === 0 ? '10.0.0.2' : 'none'), address: `10.0.0.${i + 1}` })), 3000);
    expect(three.dropped).toEqual({ pairs: 1, of: 6 });
    expect(String(three).split('\n').at(-1)).toBe('dropped: 1 of 6 (17%)');
  });

  it('has at most 128 probes under way at once, and every cell filled', async () => {
    // 13 nodes: 169 cells, 156 of them probes, each held open until released.
    const tick = () => new Promise((done) => setImmediate(done));
    const held: (() => void)[] = [];
    let [underWay, most] = [0, 0];
    const connect = () =>
      new Promise((_, reject) => {
        most = Math.max(most, ++underWay);
        held.push(() => (underWay--, reject(failure('ECONNREFUSED'))));
      });
    const nodes = Array.from({ length: 13 }, (_, i) => ({ key: `n${i}`, ns: { connect } as never, address: `10.0.0.${i + 1}` }));
    const matrix = connectivity(nodes, 60_000);
    await tick();
    expect(underWay).toBe(128);
    while (held.length > 0) {
      for (const release of held.splice(0)) release();
      await tick();
    }
    const { reachable, dropped } = await matrix;
    expect(most).toBe(128);
    expect(reachable.flat().filter((cell) => cell === true)).toHaveLength(156);
    expect(dropped).toEqual({ pairs: 0, of: 156 });
  });
});
