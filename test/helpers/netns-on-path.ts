// `netns` on PATH as npm installs it (a script running this checkout's CLI),
// in a folder of its own that any user, nobody included, can run it from.
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI_PATH } from './cli-path.js';

/** Makes the folder (name starting `prefix`); put it first on PATH, remove it in afterAll. */
export function netnsBinDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  writeFileSync(join(dir, 'netns'), `#!/bin/sh\nexec "${process.execPath}" "${CLI_PATH}" "$@"\n`);
  chmodSync(join(dir, 'netns'), 0o755);
  chmodSync(dir, 0o755);
  return dir;
}
