import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { NetNS } from '../../dist/index.js';

// Refused before anything touches the system; if a regression let one through
// while running as root, afterAll removes what it made.
const prefix = `nsio-u${process.pid}-`;
const CONTROLS = ['\n', '\r', '\t', '\x01', '\x1b', '\x1f', '\x7f', '\ud800']; // and a lone surrogate (written as U+FFFD)

describe('namespace names with control characters', () => {
  afterAll(() => {
    if (!existsSync('/run/netns')) return;
    for (const name of readdirSync('/run/netns').filter((entry) => entry.startsWith(prefix))) {
      execFileSync('ip', ['netns', 'del', name]);
    }
  });

  it('are refused with ERR_NETNS_INVALID_NAME by every entry point that takes a name', async () => {
    for (const control of CONTROLS) {
      const name = `${prefix}a${control}b`;
      const invalid = expect.objectContaining({ code: 'ERR_NETNS_INVALID_NAME' });
      await expect(NetNS.create(name)).rejects.toEqual(invalid);
      await expect(NetNS.delete(name)).rejects.toEqual(invalid);
      expect(() => NetNS.pids(name)).toThrow(invalid);
      expect(() => NetNS.open(name)).toThrow(invalid);
    }
  });

  it('still allows printable names, including spaces and non-ASCII', async () => {
    for (const name of [`${prefix}with space`, `${prefix}ünïcode`, `${prefix}~!@#$%^&*()`]) {
      // ENOENT (or EACCES without privileges): the name passed the check and reached the system
      await expect(NetNS.delete(name)).rejects.not.toMatchObject({ code: 'ERR_NETNS_INVALID_NAME' });
    }
  });
});
