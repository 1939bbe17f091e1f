// An in-memory, transactional stand-in for nft, for deterministic tests of the
// lifecycle (timers, races, retries). It keeps nft's semantics where the
// manager depends on them: `add` is idempotent, deleting what is missing is
// ENOENT, deleting a set a rule still references is EBUSY, and a failed
// transaction changes nothing.
import { netnsError } from '../errors.js';
import type { Family } from './addresses.js';
import type { AddrsetBackend, KernelView } from './backend.js';
import type { Op } from './ops.js';

interface MemorySet {
  family: Family | 'registry';
  elements: Map<string, string>; // element -> comment
}

export class MemoryBackend implements AddrsetBackend {
  #tableExists = false;
  #sets = new Map<string, MemorySet>();
  readonly #referenced = new Set<string>();
  #failures: string[] = [];
  /** Transactions applied successfully. */
  transactions = 0;
  /** Every transaction attempted, in order, for assertions. */
  readonly log: Op[][] = [];

  /** A rule starts (or stops) referencing a set, as `ip saddr @name` would. */
  reference(name: string): void {
    this.#referenced.add(name);
  }

  unreference(name: string): void {
    this.#referenced.delete(name);
  }

  /** The next transaction fails with this code, whatever it contains. */
  failNext(code: string): void {
    this.#failures.push(code);
  }

  elements(name: string): string[] | undefined {
    const set = this.#sets.get(name);
    return set ? [...set.elements.keys()].sort() : undefined;
  }

  setNames(): string[] {
    return [...this.#sets.keys()].sort();
  }

  async apply(ops: Op[]): Promise<void> {
    this.log.push(ops);
    await Promise.resolve(); // a real backend never answers synchronously
    const failure = this.#failures.shift();
    if (failure) throw netnsError(failure, `injected failure (${failure})`);
    const sets = new Map([...this.#sets].map(([name, set]) => [name, { family: set.family, elements: new Map(set.elements) }]));
    let tableExists = this.#tableExists;
    for (const op of ops) tableExists = this.#applyOne(op, sets, tableExists);
    this.#sets = sets;
    this.#tableExists = tableExists;
    this.transactions++;
  }

  #applyOne(op: Op, sets: Map<string, MemorySet>, tableExists: boolean): boolean {
    if (op.op === 'addTable') return true;
    if (!tableExists) throw missing('table');
    const need = (name: string) => sets.get(name) ?? throwMissing(`set ${name}`);
    switch (op.op) {
      case 'addRegistry':
        if (!sets.has(op.name)) sets.set(op.name, { family: 'registry', elements: new Map() });
        break;
      case 'addSet':
        if (!sets.has(op.name)) sets.set(op.name, { family: op.family, elements: new Map() });
        break;
      case 'deleteSet':
        need(op.name);
        if (this.#referenced.has(op.name)) throw netnsError('EBUSY', `set ${op.name} is referenced by a rule`);
        sets.delete(op.name);
        break;
      case 'flushSet':
        need(op.name).elements.clear();
        break;
      case 'addElements':
        for (const element of op.elements) need(op.name).elements.set(element, '');
        break;
      case 'deleteElements':
        for (const element of op.elements) {
          if (!need(op.name).elements.delete(element)) throw missing(`element ${element}`);
        }
        break;
      case 'addRecord': {
        const registry = need(op.registry).elements;
        if (!registry.has(op.key)) registry.set(op.key, op.comment);
        break;
      }
      case 'deleteRecord':
        if (!need(op.registry).elements.delete(op.key)) throw missing(`record ${op.key}`);
        break;
    }
    return tableExists;
  }

  async read({ elements, registry }: { elements: boolean; registry: string }): Promise<KernelView> {
    await Promise.resolve();
    const view: KernelView = { tableExists: this.#tableExists, sets: new Map(), records: new Map() };
    for (const [name, set] of this.#sets) {
      if (name === registry) {
        for (const [key, comment] of set.elements) view.records.set(key, comment);
      } else if (set.family !== 'registry') {
        view.sets.set(name, { name, family: set.family, elements: elements ? [...set.elements.keys()] : null });
      }
    }
    return view;
  }
}

function missing(what: string): Error {
  return netnsError('ENOENT', `no such ${what}`);
}

function throwMissing(what: string): never {
  throw missing(what);
}
