// Calls that share one AbortSignal (one per request, say, for many calls)
// get one listener on it, not one each: a shared signal then neither trips
// Node's listener-count warning nor holds a closure per call it once served.

export class AbortWatch<T> {
  readonly #watched = new Map<AbortSignal, { items: Set<T>; listener: () => void }>();

  constructor(private readonly onAbort: (item: T, signal: AbortSignal) => void) {}

  add(signal: AbortSignal, item: T): void {
    let entry = this.#watched.get(signal);
    if (!entry) {
      const listener = () => this.#fire(signal);
      entry = { items: new Set(), listener };
      this.#watched.set(signal, entry);
      signal.addEventListener('abort', listener, { once: true });
    }
    entry.items.add(item);
  }

  delete(signal: AbortSignal, item: T): void {
    const entry = this.#watched.get(signal);
    if (!entry?.items.delete(item) || entry.items.size > 0) return;
    this.#watched.delete(signal);
    signal.removeEventListener('abort', entry.listener);
  }

  #fire(signal: AbortSignal): void {
    const entry = this.#watched.get(signal);
    this.#watched.delete(signal);
    for (const item of entry?.items ?? []) this.onAbort(item, signal);
  }
}
