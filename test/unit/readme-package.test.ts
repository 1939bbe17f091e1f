// What `npm pack` would ship: every source map's sources must be in it, so a
// user debugging the package (or jumping to a definition) finds the file the
// map names. Also the LICENSE and README.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

function packedFiles(): string[] {
  // --ignore-scripts: list what would ship without running `prepare` (a build).
  const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
    cwd: root,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const [report] = JSON.parse(out) as [{ files: { path: string }[] }];
  return report.files.map((f) => f.path);
}

describe('package contents', () => {
  const files = packedFiles();
  const shipped = new Set(files);
  const maps = files.filter((f) => f.endsWith('.map'));

  it('ships source maps for dist/ and LICENSE, README', () => {
    expect(maps.some((f) => f.endsWith('.js.map'))).toBe(true);
    expect(maps.some((f) => f.endsWith('.d.ts.map'))).toBe(true);
    expect(shipped.has('LICENSE')).toBe(true);
    expect(shipped.has('README.md')).toBe(true);
  });

  it("every map's sources exist in the package", () => {
    const missing: string[] = [];
    for (const map of maps) {
      const { sources, sourceRoot = '' } = JSON.parse(readFileSync(join(root, map), 'utf8')) as {
        sources: string[];
        sourceRoot?: string;
      };
      for (const source of sources) {
        const target = posix.normalize(posix.join(posix.dirname(map), sourceRoot, source));
        if (!shipped.has(target)) missing.push(`${map} -> ${target}`);
      }
    }
    // A stale dist/ (output of a removed source file) also lands here: rm -rf dist && npm run build:ts
    expect(missing).toEqual([]);
  });

  it('ships no test, bench or example files', () => {
    expect(files.filter((f) => /^(test|bench|examples|docs)\//.test(f))).toEqual([]);
  });
});
