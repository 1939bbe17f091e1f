// The connectivity matrix's probe of one pair, against namespaces that answer
// as a lossy, a partitioned or a broken path would: a lost SYN is tried
// again before the timeout, so a link losing 1% does not read as a
// partition; a refusal of the path is final at once; a failure that is not
// about the network rejects, once every attempt has settled.
import { describe, expect, it } from 'vitest';
import { connectivity } from '../../dist/testing/lab/matrix.js';

type Answer = 'lost' | 'refused' | 'EPERM' | 'EMFILE';

/** A namespace whose n-th connect answers as `answers[n]`; records each attempt's timeout. */
function fakeNs(answers: Answer[]) {
  const timeouts: number[] = [];
  const connect = ({ timeout }: { timeout: number }) => {
    const answer = answers[timeouts.length] ?? 'lost';
    timeouts.push(timeout);
    const failure = (code: string) => Object.assign(new Error(code), { code });
    if (answer === 'lost') return new Promise((_, reject) => setTimeout(() => reject(failure('ETIMEDOUT')), timeout));
    if (answer === 'refused') return Promise.reject(failure('ECONNREFUSED'));
    return Promise.reject(failure(answer));
  };
  return { ns: { connect } as never, timeouts };
}

async function probe(answers: Answer[], timeout = 90) {
  const from = fakeNs(answers);
  const to = fakeNs([]);
  // a probes b's address; b has none of a's to probe
  const matrix = await connectivity([{ key: 'a', ns: from.ns, address: undefined }, { key: 'b', ns: to.ns, address: '10.0.0.2' }], timeout);
  return { reached: matrix.reachable[0]![1], timeouts: from.timeouts };
}

describe('connectivity: one pair', () => {
  it('reaches at the first answer, with one attempt', async () => {
    expect(await probe(['refused'])).toEqual({ reached: true, timeouts: [90] });
  });

  it('tries again while a SYN is lost, each attempt ending by the same deadline', async () => {
    expect(await probe(['lost', 'refused'])).toEqual({ reached: true, timeouts: [90, 60] });
    expect(await probe(['lost', 'lost', 'refused'])).toEqual({ reached: true, timeouts: [90, 60, 30] });
  });

  it('reads as dropped when no attempt is answered, after three', async () => {
    expect(await probe(['lost', 'lost', 'lost'])).toEqual({ reached: false, timeouts: [90, 60, 30] });
  });

  it('gives no attempt a timeout of 0 when the timeout is too short to split (1 and 2 ms)', async () => {
    expect(await probe(['lost', 'lost', 'lost'], 1)).toEqual({ reached: false, timeouts: [1, 1, 1] });
    expect(await probe(['lost', 'lost', 'lost'], 2)).toEqual({ reached: false, timeouts: [2, 2, 2] });
  });

  it('takes a refusal of the path (a partition\'s drop) as final', async () => {
    expect(await probe(['EPERM'])).toEqual({ reached: false, timeouts: [90] });
  });

  it('rejects with a failure that is not about the network', async () => {
    await expect(probe(['lost', 'EMFILE'])).rejects.toMatchObject({ code: 'EMFILE' });
  });
});
