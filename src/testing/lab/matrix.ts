// Who reaches whom, as Mininet's pingAll: from every node to every other
// one's address, a TCP connection attempt made inside the source's
// namespace. An answer of any kind (a connection, or a refusal: the
// destination's kernel sent a reset) means reachable; a timeout, no route, or
// a local firewall's drop means not. Any other failure (out of descriptors, a
// closed lab) is not an answer about the network: the matrix rejects with it.
// While no attempt has answered, another starts a third of the timeout
// later: on a lossy link (loss 1%) one lost SYN would otherwise read as a
// partition, and the kernel's own SYN retry comes only after a second. No raw
// socket, no ping process, no listener needed.
import type { NetnsError } from '../../core/errors.js';
import type { NetNS } from '../../netns.js';

/** Every source's row: whether it reached each destination (null: itself). */
export interface ConnectivityMatrix {
  /** The nodes, in row and column order. */
  readonly nodes: readonly string[];
  /** reachable[i][j]: nodes[i] reached nodes[j]; null on the diagonal. */
  readonly reachable: readonly (readonly (boolean | null)[])[];
  /** How many ordered pairs did not reach each other, and of how many. */
  readonly dropped: {
    /** Ordered pairs that did not reach each other. */
    readonly pairs: number;
    /** All ordered pairs of distinct nodes: n × (n - 1) for n nodes. */
    readonly of: number;
  };
  /** The matrix as a table: ✓ reached, ✗ not, · itself; then "dropped: N of M (P%)". */
  toString(): string;
}

/** The destination port: discard, which nothing here listens on; a refusal proves the path as well as a connection. */
const PROBE_PORT = 9;
const CONCURRENCY = 128;
/** Attempts per pair while none answers: a pair on a path losing p of its packets reads as dropped with chance p³. */
const ATTEMPTS = 3;
/** What a failed attempt says about the path: not reached (a timeout: maybe a lost SYN, tried again). EPERM: an nftables drop on the way out (a partition). */
const UNREACHED = new Set(['EHOSTUNREACH', 'ENETUNREACH', 'ENETDOWN', 'EHOSTDOWN', 'EPERM', 'EACCES']);

type Attempt = boolean | 'timeout' | { error: unknown };

/** true: an answer came; false: the path says no at once; 'timeout': nothing came; else what went wrong. */
async function attempt(from: NetNS, host: string, timeout: number): Promise<Attempt> {
  try {
    const socket = await from.connect({ host, port: PROBE_PORT, timeout });
    socket.destroy();
    return true;
  } catch (error) {
    const code = (error as NetnsError).code;
    if (code === 'ECONNREFUSED') return true;
    if (code === 'ETIMEDOUT') return 'timeout';
    if (UNREACHED.has(code)) return false;
    return { error };
  }
}

/** Resolves after `ms`, or when `settled` does, whichever is first; the timer never outlives it. */
function pause(ms: number, settled: Promise<unknown>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([new Promise<void>((resolve) => (timer = setTimeout(resolve, ms))), settled.then(() => {})]).finally(() => clearTimeout(timer));
}

/**
 * Attempts start a third of the timeout apart until one answers, all ending
 * by the timeout: the pair takes no longer than one attempt would, and every
 * attempt has settled when it returns.
 */
async function reaches(from: NetNS, host: string, timeout: number): Promise<boolean> {
  const spacing = Math.floor(timeout / ATTEMPTS);
  const attempts: Promise<Attempt>[] = [];
  let answered = false;
  for (let i = 0; i < ATTEMPTS && !answered; i++) {
    attempts.push(
      attempt(from, host, timeout - i * spacing).then((answer) => {
        if (answer !== 'timeout') answered = true;
        return answer;
      }),
    );
    await pause(spacing, Promise.race(attempts)); // after the last too: it ends as soon as one settles, and all are awaited next
  }
  const answers = await Promise.all(attempts);
  const failure = answers.find((answer): answer is { error: unknown } => typeof answer === 'object');
  if (failure) throw failure.error;
  return answers.includes(true);
}

/** Runs the tasks, at most `limit` at a time, in order of results. */
async function limited<T>(tasks: (() => Promise<T>)[], limit: number): Promise<T[]> {
  const results: T[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < tasks.length) {
      const index = next++;
      results[index] = await tasks[index]!();
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, worker));
  return results;
}

function format(nodes: readonly string[], reachable: (boolean | null)[][], dropped: { pairs: number; of: number }): string {
  const width = Math.max(...nodes.map((n) => n.length), 1);
  const pad = (text: string): string => text.padEnd(width);
  const lines = [`${pad('')} ${nodes.map(pad).join(' ')}`];
  reachable.forEach((row, i) => lines.push(`${pad(nodes[i]!)} ${row.map((cell) => pad(cell === null ? '·' : cell ? '✓' : '✗')).join(' ')}`));
  const share = dropped.of === 0 ? 0 : Math.round((100 * dropped.pairs) / dropped.of);
  lines.push(`dropped: ${dropped.pairs} of ${dropped.of} (${share}%)`);
  return lines.join('\n');
}

/** Probes every ordered pair; `targets` gives each node's address to try. */
export async function connectivity(nodes: { key: string; ns: NetNS; address: string | undefined }[], timeoutMs: number): Promise<ConnectivityMatrix> {
  const tasks = nodes.flatMap((from) =>
    nodes.map((to) => () => (from === to ? Promise.resolve(null) : to.address === undefined ? Promise.resolve(false) : reaches(from.ns, to.address, timeoutMs))),
  );
  const cells = await limited(tasks, CONCURRENCY);
  const reachable = nodes.map((_, i) => cells.slice(i * nodes.length, (i + 1) * nodes.length));
  const of = nodes.length * (nodes.length - 1);
  const dropped = { pairs: cells.filter((cell) => cell === false).length, of };
  const keys = nodes.map((n) => n.key);
  return { nodes: keys, reachable, dropped, toString: () => format(keys, reachable, dropped) };
}
