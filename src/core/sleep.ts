// node:timers/promises' setTimeout without that module (and the
// AbortController it loads), for waits that take no signal: a lock's polls, a
// lease's hand-off, in a one-command CNI plugin's ADD.

/** Resolves after `ms`, by a timer that keeps the process alive. */
export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
