// What compiled code costs inside withNetNS: a fn as tsx emits it (keepNames
// helpers, supplied in the worker) and a worker-module export, each beside a
// plain fn measured in the same run.
import { transformSync } from 'esbuild';
import { NetNS, closePool, withNetNS, workerModule } from '../dist/index.js';
import { median, nowUs, record, scratchFile } from './lib.js';

const CALLS = 5_000;
const RUN = 250;

// What tsx makes of a fn with an inner arrow const and a named function.
const TSX_LIKE = transformSync(
  'export const tsxFn = (n: number) => { const sq = (x: number) => x * x; function one() { return 1; } return sq(n) + one(); };',
  { loader: 'ts', format: 'esm', target: 'node20', keepNames: true },
).code;

const WORK_MODULE = 'export const plus = (n) => n + 1;\n';

// The variants take turns in short runs, so that load on this noisy machine
// falls on all of them alike.
async function interleavedMediansUs(ns, variants) {
  for (const [fn, arg] of variants) for (let i = 0; i < 200; i++) await withNetNS(ns, fn, arg); // compiled or imported, and warm
  const times = variants.map(() => []);
  for (let round = 0; round < CALLS / RUN; round++) {
    for (const [v, [fn, arg]] of variants.entries()) {
      for (let i = 0; i < RUN; i++) {
        const start = nowUs();
        await withNetNS(ns, fn, arg);
        times[v].push(nowUs() - start);
      }
    }
  }
  return times.map(median);
}

export async function benchToolchains([name]) {
  const ns = NetNS.open(name);
  const { tsxFn } = await import(scratchFile('tsx-like.mjs', TSX_LIKE));
  if (!tsxFn.toString().includes('__name(')) throw new Error('esbuild no longer emits __name: the figure would not measure helpers');
  const work = workerModule(scratchFile('work.mjs', WORK_MODULE));
  const [plain, compiled, exported] = await interleavedMediansUs(ns, [
    [(n) => n + 1, 1],
    [tsxFn, 3],
    [work.plus, 1],
  ]);
  record('toolchains', 'tsx-compiled fn (__name helpers), round trip (median)', compiled, 'us', 'plain fn, same run', plain);
  record('toolchains', 'workerModule export, round trip (median)', exported, 'us', 'plain fn, same run', plain);
  ns.close();
  await closePool();
}
