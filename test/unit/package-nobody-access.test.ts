// The check that explains a checkout nobody cannot reach (scripts/nobody-access.mjs),
// on real folders and modes.
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { nobodyCannotReach } from '../../scripts/nobody-access.mjs';

describe('nobodyCannotReach', () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  // Run as nobody, every folder the test makes is nobody's own, so there is none it cannot enter.
  it.skipIf(process.getuid?.() === 65534)('names the folder nobody cannot enter and the fix, then passes once it can', () => {
    dir = mkdtempSync(join(tmpdir(), 'netns-nobody-')); // mkdtemp makes it 0700
    const file = join(dir, 'package.json');
    writeFileSync(file, '{}', { mode: 0o644 });
    expect(nobodyCannotReach(file)).toBe(
      `${file} cannot be reached by nobody (uid 65534), which some tests run programs as: ${dir} is mode 0700. ` +
        `Fix: chmod o+x ${dir}, or move the checkout somewhere every user can enter (e.g. /srv)`,
    );
    chmodSync(dir, 0o711);
    expect(nobodyCannotReach(file)).toBeUndefined();
    chmodSync(file, 0o600);
    expect(nobodyCannotReach(file)).toBe(`${file} is not readable by nobody (uid 65534), which some tests run programs as. Fix: chmod o+r ${file}`);
  });
});
