// In core rather than netlink/, where it began: lifecycle reads options too,
// and it imports core only.
import { ErrorCodes, kindOf, netnsError } from './errors.js';

const NOTHING_INHERITED: object = Object.freeze(Object.create(null));

/**
 * A snapshot of a spec's own properties. A value inherited from a polluted
 * Object.prototype (up, mtu, validLifetime...) must never become an option:
 * it would change what the kernel is told to do; that includes a property
 * defined there not enumerable, or added while a call awaits a lookup. Each
 * getter is read once, so what is checked is what is sent. The copy inherits
 * from an empty frozen object rather than from null: V8 keeps such an
 * object's properties fast, where a null-prototype object is a hash table.
 */
export function own<T>(value: T): T {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (Object.assign(Object.create(NOTHING_INHERITED), value) as T) : value;
}

/** The options object a call was given, as its own properties only (undefined: none). */
export function ownOptions<T extends object>(options: T | undefined): Partial<T> {
  if (options === undefined) return {};
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw netnsError(ErrorCodes.INVALID_ARG, `options must be an object, got ${kindOf(options)}`);
  }
  return own(options);
}
