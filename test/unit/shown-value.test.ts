// How a refused value reads in an error message: never a TypeError of its own,
// whatever JavaScript passes where the types say otherwise.
import { describe, expect, it } from 'vitest';
import { shownValue } from '../../dist/core/errors.js';

describe('shownValue', () => {
  it('shows JSON, and numbers and bigints as written', () => {
    expect([shownValue('a"b'), shownValue(null), shownValue([1]), shownValue({ k: 'v' })]).toEqual(['"a\\"b"', 'null', '[1]', '{"k":"v"}']);
    expect([shownValue(NaN), shownValue(-Infinity), shownValue(2n ** 64n)]).toEqual(['NaN', '-Infinity', '18446744073709551616']);
  });

  it("names what JSON leaves out by its kind, or by the caller's choice", () => {
    expect([shownValue(undefined), shownValue(Symbol('s')), shownValue(() => 1)]).toEqual(['undefined', 'symbol', 'function']);
    expect(shownValue(Symbol('s'), String)).toBe('Symbol(s)');
  });

  it('names what JSON refuses by its kind: a circular object, a toJSON or a fallback that throws', () => {
    const circular: unknown[] = [];
    circular.push(circular);
    expect(shownValue(circular)).toBe('an array');
    expect(shownValue({ toJSON: () => { throw new Error('no'); } })).toBe('object');
    expect(shownValue(Object.create(null) as object, String)).toBe('{}');
    expect(shownValue(Symbol.iterator, () => { throw new Error('no'); })).toBe('symbol');
  });
});
