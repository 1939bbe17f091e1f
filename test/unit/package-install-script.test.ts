// The install script's check before a source build names exactly what is
// missing. Run with make taken off PATH, so it always stops before node-gyp
// (which would rebuild this checkout's build/).
import { afterAll, describe, expect, it } from 'vitest';
import { exec } from '../helpers/consumer-project.js';
import { packageRoot } from '../helpers/node-child.js';
import { pathWithout } from '../helpers/path-without.js';

describe('scripts/install.mjs without make', () => {
  const bare = pathWithout('make');
  afterAll(() => bare.dispose());

  it('names only make, with each distribution package, and exits 1', async () => {
    const env = { ...process.env, PATH: bare.path, npm_config_build_from_source: 'true', CC: undefined, CXX: undefined, MAKE: undefined };
    const result = await exec(process.execPath, ['scripts/install.mjs'], packageRoot, env);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      [
        "netns: npm was asked to build from source, so netns's native addon must be compiled here, and this machine lacks make.",
        '  Debian/Ubuntu: sudo apt-get install make',
        '  Fedora/RHEL:   sudo dnf install make',
        '  Alpine:        sudo apk add make linux-headers',
        'Then run the same npm install again (npm removed netns when this script failed).',
        '',
      ].join('\n'),
    );
  });
});
