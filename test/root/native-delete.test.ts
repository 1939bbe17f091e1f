// NetNS.delete removes what `ip netns del` removes - a namespace bind-mounted
// in /run/netns, or the empty file a failed add leaves - and refuses anything else in
// place, unmounting nothing: before, a symbolic link there was followed and
// whatever it pointed at was unmounted.
import { execFileSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { NetNS } from '../../dist/index.js';
import { mountsAt } from '../helpers/mounts.js';
import { privileged } from '../helpers/privileges.js';

const prefix = `nsnat-del-${process.pid}-`;
const entry = (name: string) => `/run/netns/${prefix}${name}`;

/** Unmounts every mount stacked at `path`. */
function unmountAll(path: string): void {
  while (mountsAt(path).length > 0) execFileSync('umount', ['-l', path]);
}

describe.skipIf(!privileged)('NetNS.delete on what is not a namespace', () => {
  let dir: string;
  let target: NetNS;

  beforeAll(async () => {
    target = await NetNS.create(`${prefix}target`);
    dir = mkdtempSync('/tmp/nsnat-del-');
  });

  afterEach(() => {
    for (const name of ['to-tmpfs', 'to-target', 'uts', 'file-bound', 'dir', 'leftover', 'data']) {
      unmountAll(entry(name));
      rmSync(entry(name), { force: true, recursive: true });
    }
    unmountAll(`${dir}/mnt`);
  });

  afterAll(() => {
    target?.close();
    if (existsSync(entry('target'))) execFileSync('ip', ['netns', 'del', `${prefix}target`]);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  function expectRefused(name: string) {
    return expect(NetNS.delete(`${prefix}${name}`)).rejects.toMatchObject({
      code: 'ERR_NETNS_NOT_NETNS',
      path: entry(name),
      message: expect.stringContaining(`'${entry(name)}'`),
    });
  }

  it('refuses a symbolic link to a mount, which stays mounted, and leaves the link', async () => {
    mkdirSync(`${dir}/mnt`);
    execFileSync('mount', ['-t', 'tmpfs', 'nsnat-del', `${dir}/mnt`]);
    symlinkSync(`${dir}/mnt`, entry('to-tmpfs'));
    await expectRefused('to-tmpfs');
    expect(mountsAt(`${dir}/mnt`)).toHaveLength(1);
    expect(lstatSync(entry('to-tmpfs')).isSymbolicLink()).toBe(true);
  });

  it("refuses a symbolic link to another namespace's file, which stays alive", async () => {
    symlinkSync(entry('target'), entry('to-target'));
    await expectRefused('to-target');
    expect(mountsAt(entry('target'))).toHaveLength(1);
    expect(NetNS.list().find((found) => found.name === `${prefix}target`)).toMatchObject({ alive: true, inode: target.inode });
    expect(lstatSync(entry('to-target')).isSymbolicLink()).toBe(true);
  });

  it('refuses another kind of namespace mounted there, and leaves it mounted', async () => {
    writeFileSync(entry('uts'), '');
    execFileSync('mount', ['--bind', '/proc/self/ns/uts', entry('uts')]);
    await expectRefused('uts');
    expect(mountsAt(entry('uts'))).toHaveLength(1);
  });

  it('refuses a plain file mounted over an entry, and leaves it mounted', async () => {
    writeFileSync(`${dir}/file`, 'not a namespace');
    writeFileSync(entry('file-bound'), '');
    execFileSync('mount', ['--bind', `${dir}/file`, entry('file-bound')]);
    await expectRefused('file-bound');
    expect(mountsAt(entry('file-bound'))).toHaveLength(1);
  });

  it('refuses a directory with a mount on it, and leaves it mounted', async () => {
    mkdirSync(entry('dir'));
    execFileSync('mount', ['-t', 'tmpfs', 'nsnat-del', entry('dir')]);
    await expectRefused('dir');
    expect(mountsAt(entry('dir'))).toHaveLength(1);
  });

  it('refuses a plain file holding data, and leaves it as it was', async () => {
    writeFileSync(entry('data'), 'important data\n');
    await expectRefused('data');
    expect(readFileSync(entry('data'), 'utf8')).toBe('important data\n');
  });

  it('still removes the plain file a failed add or a lazy delete leaves, as ip netns del does', async () => {
    writeFileSync(entry('leftover'), '');
    await NetNS.delete(`${prefix}leftover`);
    expect(existsSync(entry('leftover'))).toBe(false);
  });
});
