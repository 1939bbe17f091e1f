// Makes building a native result object throw, the way user code can: an
// accessor on Object.prototype runs for every plain object the addon fills.
export class SetterError extends Error {}

/** Runs `call` while assigning `key` on any plain object throws a SetterError. */
export function withThrowingSetter<T>(key: string, call: () => T): T {
  Object.defineProperty(Object.prototype, key, {
    configurable: true,
    set() {
      throw new SetterError(`setter for ${key}`);
    },
  });
  try {
    return call();
  } finally {
    delete (Object.prototype as Record<string, unknown>)[key];
  }
}
