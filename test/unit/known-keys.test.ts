// refuseUnknownKeys (src/core/known-keys.ts), under every options object:
// the message names the key (cut when long), and suggests only a key the
// caller takes: another spec's name for it, or one within two edits that is
// not simply a different short word.
import { describe, expect, it } from 'vitest';
import { netnsError } from '../../dist/core/errors.js';
import { editDistance, refuseUnknownKeys } from '../../dist/core/known-keys.js';

const invalid = (message: string) => netnsError('ERR_NETNS_INVALID_ARG', message);

function refusal(value: object, known: string[]): string {
  try {
    refuseUnknownKeys(value, known, 'spec', invalid);
  } catch (error) {
    return (error as Error).message;
  }
  return 'accepted';
}

describe('refuseUnknownKeys', () => {
  it('passes known keys and what is not a plain object', () => {
    expect(refusal({ name: 1 }, ['name'])).toBe('accepted');
    expect(refusal(['x'], ['name'])).toBe('accepted');
  });

  it('shows a key of 64 characters whole and cuts a longer one', () => {
    const long = 'k'.repeat(64);
    expect(refusal({ [long]: 1 }, ['name'])).toBe(`spec: unknown key "${long}"; known: name`);
    expect(refusal({ [`${long}x`]: 1 }, ['name'])).toBe(`spec: unknown key "${long}…"; known: name`);
  });

  it("suggests another spec's name for the field only when this spec takes it", () => {
    expect(refusal({ link: 1 }, ['device', 'gateway'])).toBe('spec: unknown key "link" (did you mean device?); known: device, gateway');
    expect(refusal({ link: 1 }, ['name', 'mtu'])).toBe('spec: unknown key "link"; known: name, mtu');
  });

  it('suggests the nearest key within two edits, a transposition counting one, but not a different short word', () => {
    expect(refusal({ tabel: 1 }, ['table', 'type'])).toBe('spec: unknown key "tabel" (did you mean table?); known: table, type');
    expect(refusal({ nmae: 1 }, ['name'])).toContain('(did you mean name?)');
    expect(refusal({ zz: 1 }, ['up', 'mtu'])).toBe('spec: unknown key "zz"; known: up, mtu');
    expect(refusal({ destinaton: 1 }, ['destination', 'gateway'])).toContain('(did you mean destination?)');
    expect(refusal({ colour: 1 }, ['name', 'mtu'])).toBe('spec: unknown key "colour"; known: name, mtu');
    expect(refusal({ nam: 1 }, ['name', 'nab'])).toContain('(did you mean name?)'); // of two as near, the first
    expect(refusal({ ba: 1 }, ['ab'])).toContain('(did you mean ab?)'); // one transposition
    expect(refusal({ x: 1 }, ['ab'])).toBe('spec: unknown key "x"; known: ab');
  });
});

describe('editDistance', () => {
  it.each([
    ['', '', 0],
    ['a', '', 1],
    ['', 'abc', 3],
    ['abc', 'abc', 0],
    ['a', 'b', 1],
    ['x', 'ab', 2],
    ['ab', 'ba', 1],
    ['ab', 'aab', 1],
    ['tabel', 'table', 1],
    ['nmae', 'name', 1],
    ['abcd', 'acbd', 1],
    ['abc', 'cba', 2],
    ['ca', 'abc', 3], // an alignment edits no substring twice: not 2, as full Damerau would say
    ['kitten', 'sitting', 3],
    ['Name', 'name', 1],
  ])('%j to %j is %i', (a, b, distance) => {
    expect(editDistance(a, b)).toBe(distance);
    expect(editDistance(b, a)).toBe(distance);
  });
});
