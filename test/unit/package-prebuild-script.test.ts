// What `npm run prebuilds` promises a maintainer: a missing cross compiler is
// named before anything is built, and the addon's glibc/libstdc++ needs are
// read from its symbols as the release floor is checked against them.
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BUILT_FILES, compareVersions, prebuildDir, RELEASE_TARGETS, requiredVersions } from '../../scripts/prebuilds.mjs';
import { exec } from '../helpers/consumer-project.js';
import { packageRoot } from '../helpers/node-child.js';
import { pathWithout } from '../helpers/path-without.js';

const scratchDirs = () => readdirSync(tmpdir()).filter((name) => name.startsWith('netns-prebuild-'));

describe('scripts/prebuild.mjs without the arm64 cross compiler', () => {
  const bare = pathWithout('aarch64-linux-gnu-gcc', 'aarch64-linux-gnu-g++', 'aarch64-linux-gnu-strip', 'aarch64-linux-gnu-objdump');
  afterAll(() => bare.dispose());

  it('names the Debian package and stops before building anything, leaving no scratch folder', async () => {
    const before = scratchDirs();
    const result = await exec(process.execPath, ['scripts/prebuild.mjs'], packageRoot, { ...process.env, PATH: bare.path });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('linux-arm64 is cross-compiled, and aarch64-linux-gnu-gcc, aarch64-linux-gnu-g++');
    expect(result.stderr).toContain('apt-get install g++-aarch64-linux-gnu');
    expect(result.stdout).not.toContain('building');
    expect(scratchDirs()).toEqual(before);
  });
});

describe('the runtime floor read from objdump -T', () => {
  it('takes the newest version of each library, numerically', () => {
    const symbols = [
      '0000 DF *UND* 0000 (GLIBC_2.2.5) memset',
      '0000 DF *UND* 0000 (GLIBC_2.34) pthread_setname_np',
      '0000 DF *UND* 0000 (GLIBC_2.4) __stack_chk_fail',
      '0000 DF *UND* 0000 (GLIBCXX_3.4.9) _ZSt9terminatev',
      '0000 DF *UND* 0000 (GLIBCXX_3.4.30) _ZNSt18condition_variable4waitERSt11unique_lockISt5mutexE',
      '0000 DF *UND* 0000 (CXXABI_1.3.13) __cxa_throw',
    ].join('\n');
    expect(requiredVersions(symbols)).toEqual({ GLIBC: '2.34', GLIBCXX: '3.4.30' });
    expect(compareVersions('2.34', '2.4')).toBeGreaterThan(0);
    expect(compareVersions('3.4.30', '3.4.30')).toBe(0);
    expect(compareVersions('2.17', '2.34')).toBeLessThan(0);
  });
});

describe('scripts/check-prebuilds.mjs (prepack)', () => {
  it('refuses a stray folder in prebuilds/ (a killed run’s staging), which npm would pack', async () => {
    const pkg = mkdtempSync(join(tmpdir(), 'netns-prepack-'));
    try {
      for (const target of RELEASE_TARGETS) {
        const dir = prebuildDir(pkg, target);
        mkdirSync(dir, { recursive: true });
        for (const { shipped } of BUILT_FILES) writeFileSync(join(dir, shipped), '');
      }
      const clean = await exec(process.execPath, ['scripts/check-prebuilds.mjs', pkg], packageRoot, process.env);
      expect(clean, clean.stderr).toMatchObject({ code: 0 });
      mkdirSync(join(pkg, 'prebuilds', 'linux-x64.new'));
      const stray = await exec(process.execPath, ['scripts/check-prebuilds.mjs', pkg], packageRoot, process.env);
      expect(stray.code).toBe(1);
      expect(stray.stderr).toContain(join(pkg, 'prebuilds', 'linux-x64.new'));
    } finally {
      rmSync(pkg, { recursive: true, force: true });
    }
  });
});
