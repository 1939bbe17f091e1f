// Why a sandbox could not be made, as the user reads it: the sysctl that
// forbids unprivileged user namespaces on this system, named with its value
// and how to change it; other failures stay the system error they are. The
// settings are given here (a test cannot change the machine's); the real
// refusal (user.max_user_namespaces=0) is in test/root/sandbox.test.ts.
import { constants } from 'node:os';
import { describe, expect, it } from 'vitest';
import { sandboxStepError } from '../../dist/sandbox/userns-settings.js';

const { EPERM, ENOSPC, EINVAL, ENOENT } = constants.errno;

describe('sandboxStepError', () => {
  it('names kernel.unprivileged_userns_clone when it is 0 (Debian, older Ubuntu)', () => {
    const error = sandboxStepError('unshare', EPERM, { 'kernel.unprivileged_userns_clone': '0', 'user.max_user_namespaces': '100' });
    expect(error).toMatchObject({ code: 'ERR_NETNS_USERNS_DENIED', syscall: 'unshare', errno: -EPERM });
    expect(error.message).toContain('sysctl kernel.unprivileged_userns_clone is 0');
    expect(error.message).toContain('sysctl -w kernel.unprivileged_userns_clone=1');
    expect(error.cause).toMatchObject({ code: 'EPERM' });
  });

  it('names user.max_user_namespaces when it is 0, and when its limit is reached', () => {
    expect(sandboxStepError('unshare', ENOSPC, { 'user.max_user_namespaces': '0' }).message).toContain('sysctl user.max_user_namespaces is 0');
    const reached = sandboxStepError('unshare', ENOSPC, { 'user.max_user_namespaces': '5' });
    expect(reached.code).toBe('ERR_NETNS_USERNS_DENIED');
    expect(reached.message).toContain('limit of user namespaces is reached: sysctl user.max_user_namespaces is 5');
  });

  it("names AppArmor's restriction, which lets the namespace be made and then denies the mapping or the mounts", () => {
    const settings = { 'kernel.apparmor_restrict_unprivileged_userns': '1', 'user.max_user_namespaces': '100' };
    for (const stage of ['uid-map', 'mount-tmpfs', 'lo-up']) {
      const error = sandboxStepError(stage, EPERM, settings);
      expect(error.code).toBe('ERR_NETNS_USERNS_DENIED');
      expect(error.message).toContain('kernel.apparmor_restrict_unprivileged_userns is 1');
    }
  });

  it('says which settings it read when none of them forbids it (a seccomp filter or a chroot may)', () => {
    const error = sandboxStepError('unshare', EPERM, { 'user.max_user_namespaces': '100' });
    expect(error.code).toBe('ERR_NETNS_USERNS_DENIED');
    expect(error.message).toContain('no user namespace setting forbids it (user.max_user_namespaces=100)');
    expect(error.message).toContain('seccomp');
  });

  it('leaves other failures as the system error they are', () => {
    expect(sandboxStepError('mount-tmpfs', EPERM, { 'user.max_user_namespaces': '100' })).toMatchObject({ code: 'EPERM', syscall: 'mount-tmpfs' });
    expect(sandboxStepError('open-host-dir', ENOENT, {})).toMatchObject({ code: 'ENOENT' });
    expect(sandboxStepError('unshare', EINVAL, {})).toMatchObject({ code: 'EINVAL' });
  });
});
