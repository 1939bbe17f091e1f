// What `npm pack` would ship: every source map's sources must be in it, so a
// user debugging the package (or jumping to a definition) finds the file the
// map names; the LICENSE, README and docs, with every link of the README and
// docs leading to a file the package has (docs/, examples/), so that they work
// where npm installed them.
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

  it('ships no test or bench files', () => {
    expect(files.filter((f) => /^(test|bench)\//.test(f))).toEqual([]);
  });

  it("every relative link of the shipped README and docs leads to a shipped file or folder", () => {
    const folders = new Set(files.flatMap((f) => f.split('/').slice(0, -1).map((_, i, parts) => parts.slice(0, i + 1).join('/'))));
    const dead: string[] = [];
    for (const page of files.filter((f) => f === 'README.md' || /^docs\/[^/]+\.md$/.test(f))) {
      for (const [, target] of readFileSync(join(root, page), 'utf8').matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target!) || target!.startsWith('#')) continue;
        const linked = posix.normalize(posix.join(posix.dirname(page), target!.split('#')[0]!)).replace(/\/$/, '');
        if (!shipped.has(linked) && !folders.has(linked)) dead.push(`${page} -> ${target}`);
      }
    }
    expect(files).toContain('docs/cni.md'); // the docs ship: installed READMEs link into them
    expect(dead).toEqual([]);
  });
});
