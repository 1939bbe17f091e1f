// Functions are sent to a worker once and then named by a small id. The
// registry is bounded: when callers generate endless distinct sources it
// starts over, and workers learn to forget what they compiled.
import type { FnSpec } from '../wire.js';

const MAX_FUNCTIONS = 4096;

export class FunctionRegistry {
  readonly #ids = new Map<string, number>();
  #nextId = 1;
  #generation = 0;

  /** Bumped each time the registry starts over. */
  get generation(): number {
    return this.#generation;
  }

  idOf(fn: FnSpec): number {
    const key = 'source' in fn ? `${fn.caller ?? ''}\0${fn.source}` : `${fn.module}\0\0${fn.exportName}`;
    let id = this.#ids.get(key);
    if (id === undefined) {
      if (this.#ids.size >= MAX_FUNCTIONS) {
        this.#ids.clear();
        this.#generation++;
      }
      id = this.#nextId++;
      this.#ids.set(key, id);
    }
    return id;
  }
}
