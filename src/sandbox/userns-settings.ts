// Why the kernel refused an unprivileged user namespace. Distributions switch
// them off in different ways; an error that names the one in force saves the
// user a search. Read only after a refusal: none of this is on the success path.
import { fs, os } from '../core/builtins.js';
import { ErrorCodes, netnsError, systemError, type NetnsError } from '../core/errors.js';

/** The sysctls that decide whether an unprivileged user may make a user namespace; undefined where this kernel has none. */
export interface UsernsSettings {
  /** Debian's and older Ubuntu's switch: 0 forbids them. */
  'kernel.unprivileged_userns_clone'?: string;
  /** The per-user-namespace limit: 0 forbids them, any limit can be reached (ENOSPC). */
  'user.max_user_namespaces'?: string;
  /** Ubuntu 23.10 and later: 1 lets only programs with an AppArmor profile allowing `userns` use their capabilities. */
  'kernel.apparmor_restrict_unprivileged_userns'?: string;
}

const SETTINGS = ['kernel.unprivileged_userns_clone', 'user.max_user_namespaces', 'kernel.apparmor_restrict_unprivileged_userns'] as const;

export function readUsernsSettings(): UsernsSettings {
  const settings: UsernsSettings = {};
  for (const name of SETTINGS) {
    try {
      settings[name] = fs().readFileSync(`/proc/sys/${name.replaceAll('.', '/')}`, 'utf8').trim();
    } catch {
      // this kernel has no such setting
    }
  }
  return settings;
}

/** The steps in which a forbidden user namespace shows: making it, and mapping the caller in it. */
const MAKING = new Set(['unshare', 'uid-map', 'setgroups', 'gid-map']);
/** AppArmor's restriction lets the namespace be made, then denies its capabilities: mounts and lo fail. */
const NEEDS_CAPABILITIES = new Set(['mount-slave', 'mount-tmpfs', 'mkdir-netns', 'lo-up', 'mount-proc']);
const REFUSALS = new Set([os().constants.errno.EPERM, os().constants.errno.EACCES, os().constants.errno.ENOSPC]);

/** What forbids it, naming the setting and how to change it; undefined when no setting explains it. */
function reason(errno: number, settings: UsernsSettings): string | undefined {
  const { ENOSPC } = os().constants.errno;
  if (settings['kernel.unprivileged_userns_clone'] === '0') {
    return 'unprivileged user namespaces are switched off: sysctl kernel.unprivileged_userns_clone is 0 (as root: sysctl -w kernel.unprivileged_userns_clone=1)';
  }
  if (settings['user.max_user_namespaces'] === '0') {
    return 'user namespaces are switched off: sysctl user.max_user_namespaces is 0 (as root: sysctl -w user.max_user_namespaces=15000)';
  }
  if (errno === ENOSPC) {
    return `the limit of user namespaces is reached: sysctl user.max_user_namespaces is ${settings['user.max_user_namespaces'] ?? 'unknown'} here (it is counted in every user namespace above too; nesting stops at 32 levels)`;
  }
  if (settings['kernel.apparmor_restrict_unprivileged_userns'] === '1') {
    return 'AppArmor restricts unprivileged user namespaces: sysctl kernel.apparmor_restrict_unprivileged_userns is 1 (as root: sysctl -w kernel.apparmor_restrict_unprivileged_userns=0, or give the program an AppArmor profile that allows `userns`)';
  }
  return undefined;
}

function describe(settings: UsernsSettings): string {
  const known = SETTINGS.filter((name) => settings[name] !== undefined).map((name) => `${name}=${settings[name]}`);
  return known.length > 0 ? known.join(', ') : 'none of the usual settings exists here';
}

/**
 * The error for a sandbox step that failed with `errno`: ERR_NETNS_USERNS_DENIED
 * naming the setting when user namespaces are forbidden (the system error as
 * cause), else the system error itself.
 */
export function sandboxStepError(stage: string, errno: number, settings: UsernsSettings = readUsernsSettings()): NetnsError {
  const cause = systemError(errno, stage);
  const forbidding = REFUSALS.has(errno) && (MAKING.has(stage) || (NEEDS_CAPABILITIES.has(stage) && settings['kernel.apparmor_restrict_unprivileged_userns'] === '1'));
  if (!forbidding) return cause;
  const why =
    reason(errno, settings) ??
    `no user namespace setting forbids it (${describe(settings)}): a seccomp filter (a container's default profile refuses unshare) or a chroot may`;
  return netnsError(ErrorCodes.USERNS_DENIED, `cannot make a rootless sandbox (${cause.message}): ${why}`, { cause, errno: cause.errno, syscall: stage });
}
