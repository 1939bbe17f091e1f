// Node built-ins, each taken at its first use rather than imported, for two
// reasons. Some take milliseconds to load (node:net with its streams,
// child_process, worker_threads) while many programs that import netns never
// reach the code using them: a CNI plugin answering VERSION starts without
// them. And an ES import of a built-in reads every export, which loads the
// lazy parts even of one Node has loaded already: importing node:fs loads all
// of Node's streams (~4 ms here), node:util its argument parser and MIME types.
// process.getBuiltinModule (Node 20.16+) is synchronous and bundlers leave it
// alone; the module is kept here, since each lookup costs ~0.2 us, too much
// for a hot path.
function loadedOnUse<T>(load: () => T): () => T {
  let value: T | undefined;
  return () => (value ??= load());
}

export const net = loadedOnUse(() => process.getBuiltinModule('node:net'));
export const asyncHooks = loadedOnUse(() => process.getBuiltinModule('node:async_hooks'));
export const dgram = loadedOnUse(() => process.getBuiltinModule('node:dgram'));
export const childProcess = loadedOnUse(() => process.getBuiltinModule('node:child_process'));
export const workerThreads = loadedOnUse(() => process.getBuiltinModule('node:worker_threads'));
export const fs = loadedOnUse(() => process.getBuiltinModule('node:fs'));
export const util = loadedOnUse(() => process.getBuiltinModule('node:util'));
export const os = loadedOnUse(() => process.getBuiltinModule('node:os'));
export const crypto = loadedOnUse(() => process.getBuiltinModule('node:crypto'));
export const stream = loadedOnUse(() => process.getBuiltinModule('node:stream'));
