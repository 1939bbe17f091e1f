// Waiting for every one of several steps before failing: a lab's cleanup
// must not race a step still under way (a namespace, a link or a file made
// after delete() looked for it would be left behind).

/** Waits for every promise to settle, then throws the first rejection, if any. */
export async function allSettledOrThrow(running: readonly Promise<unknown>[]): Promise<void> {
  const settled = await Promise.allSettled(running);
  const failed = settled.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
  if (failed) throw failed.reason;
}
