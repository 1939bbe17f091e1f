// Node built-ins that take milliseconds to load (node:net with its streams,
// child_process, worker_threads) while many programs that import netns never
// reach the code using them: a CNI plugin answering VERSION starts without
// them. Each is loaded by its first use, not at import. process.getBuiltinModule
// (Node 20.16+) is synchronous and bundlers leave it alone; the module is kept
// here, since each lookup costs ~0.2 us, too much for a hot path.
function loadedOnUse<T>(load: () => T): () => T {
  let value: T | undefined;
  return () => (value ??= load());
}

export const net = loadedOnUse(() => process.getBuiltinModule('node:net'));
export const dgram = loadedOnUse(() => process.getBuiltinModule('node:dgram'));
export const childProcess = loadedOnUse(() => process.getBuiltinModule('node:child_process'));
export const workerThreads = loadedOnUse(() => process.getBuiltinModule('node:worker_threads'));
export const os = loadedOnUse(() => process.getBuiltinModule('node:os'));
