// iproute2 prints strerror's text ("File exists"), not libuv's lowercase
// descriptions; the CLI takes it from the addon to say the same.
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { native } from '../../dist/core/native.js';

// perl's "$!" is strerror's text; LC_ALL=C as `ip` prints it (untranslated).
function perlStrerror(errnos: number[]): string[] {
  const script = 'print join("\\n", map { $! = $_; "$!" } @ARGV), "\\n"';
  const output = execFileSync('perl', ['-e', script, ...errnos.map(String)], { encoding: 'utf8', env: { LC_ALL: 'C' } });
  return output.trimEnd().split('\n');
}

describe('native().strerror', () => {
  it("says what glibc's strerror says, for Node's negative errno and a positive one", () => {
    const errnos = Array.from({ length: 140 }, (_, i) => i + 1); // every errno Linux has, and unknown ones after them
    const expected = perlStrerror(errnos);
    expect(errnos.map((errno) => native().strerror(errno))).toEqual(expected);
    expect(errnos.map((errno) => native().strerror(-errno))).toEqual(expected);
    expect(native().strerror(-17)).toBe('File exists');
  });

  it('refuses what is not an integer errno', () => {
    for (const bad of [Number.NaN, 1.5, 2 ** 40]) expect(() => native().strerror(bad)).toThrow(RangeError);
    expect(() => native().strerror('17' as unknown as number)).toThrow(TypeError);
  });
});
