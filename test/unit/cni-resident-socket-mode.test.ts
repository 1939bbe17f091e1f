// The resident socket is never, even for a moment, wider than 0600: bind(2)
// makes the file with the umask's mode, and a chmod after it would leave a
// moment in which anyone could connect. So the mode is read when the file has
// just been made: at the daemon's own chmod (an interposed fs.chmodSync reads
// the mode, then lets the chmod run), with the process umask 0, so that
// nothing but the daemon's own umask around bind can narrow it.
import fs, { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { serveResident } from '../../dist/cni/index.js';

const handlers = { add: () => ({ cniVersion: '1.0.0' }), del: () => {}, check: () => {} };
const info = { versions: ['1.0.0'] };

describe('the resident socket', () => {
  let dir: string;
  let umask: number;
  const realChmod = fs.chmodSync;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'netns-socket-mode-'));
    umask = process.umask(0);
  });

  afterEach(() => {
    fs.chmodSync = realChmod;
    process.umask(umask);
    rmSync(dir, { recursive: true, force: true });
  });

  it('is 0600 from the moment it exists, before any chmod, under a process umask of 0', async () => {
    const socketPath = join(dir, 'plugin.sock');
    const modesBeforeChmod: number[] = [];
    fs.chmodSync = ((path: fs.PathLike, mode: fs.Mode) => {
      if (path === socketPath) modesBeforeChmod.push(fs.lstatSync(socketPath).mode & 0o777);
      realChmod(path, mode);
    }) as typeof fs.chmodSync;
    const server = await serveResident(handlers, info, { socketPath, handleSignals: false });
    try {
      // No chmod at all would do too (the umask alone is enough); one that ran met the file already 0600.
      for (const mode of modesBeforeChmod) expect(mode.toString(8), 'the mode bind(2) gave the socket, read before the chmod').toBe('600');
      expect((fs.lstatSync(socketPath).mode & 0o777).toString(8)).toBe('600');
    } finally {
      await server.close();
    }
  });
});
