// The package finds its addon without node-gyp-build at run time
// (src/core/runtime-files.ts), while the install script asks node-gyp-build
// whether a prebuild serves: both must choose the same file, in every layout an
// installed package can have.
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { addonCandidates, besideAddon } from '../../dist/core/runtime-files.js';
import { ADDON_FILE, prebuildDir, RELEASE_TARGETS } from '../../scripts/prebuilds.mjs';

const nodeGypBuild = createRequire(import.meta.url)('node-gyp-build') as { resolve(dir: string): string };

describe('the addon the package loads', () => {
  let root: string | undefined;
  afterEach(() => {
    if (root) rmSync(root, { recursive: true, force: true });
  });

  // A package folder holding both release prebuilds and, optionally, a build made at install.
  function packageWith(...builds: string[]): string {
    root = mkdtempSync(join(tmpdir(), 'netns-addon-resolution-'));
    const files = [...RELEASE_TARGETS.map((target) => join(prebuildDir(root!, target), ADDON_FILE)), ...builds.map((dir) => join(root!, dir, 'netns.node'))];
    for (const file of files) {
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, '');
    }
    return root;
  }

  for (const builds of [[], ['build/Debug'], ['build/Release', 'build/Debug']]) {
    it(`is node-gyp-build's choice with ${builds.length ? builds.join(' and ') : 'only the prebuilds'}`, () => {
      const dir = packageWith(...builds);
      const ours = addonCandidates(`${dir}/`).find((path) => existsSync(path));
      expect(ours).toBe(nodeGypBuild.resolve(dir));
      expect(ours).toBe(join(dir, builds[0] ?? `prebuilds/${process.platform}-${process.arch}`, builds[0] ? 'netns.node' : ADDON_FILE));
    });
  }

  it('finds the executables beside the addon of each copy of the package, one nested in the other', () => {
    const outer = packageWith('build/Release');
    const inner = join(outer, 'node_modules', 'netns');
    for (const dir of ['build/Release', `prebuilds/${process.platform}-${process.arch}`]) mkdirSync(join(inner, dir), { recursive: true });
    writeFileSync(join(inner, `prebuilds/${process.platform}-${process.arch}`, ADDON_FILE), '');
    const helper = besideAddon('netns-exec');
    expect(helper(`${inner}/`)).toEqual([join(inner, `prebuilds/${process.platform}-${process.arch}`, 'netns-exec')]);
    expect(helper(`${outer}/`)).toEqual([join(outer, 'build/Release', 'netns-exec')]);
  });
});
