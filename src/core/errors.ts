import { os, util } from './builtins.js';

/**
 * Every code of an error raised by this package itself, in one place (system
 * errors keep Node's errno names: ENOENT, EPERM, ...).
 */
export const ErrorCodes = {
  /** The path or descriptor given is not a network namespace. */
  NOT_NETNS: 'ERR_NETNS_NOT_NETNS',
  /** The handle (a NetNS, a netlink handle) was closed. */
  CLOSED: 'ERR_NETNS_CLOSED',
  /** A namespace name `ip netns` would refuse: empty, `.` or `..`, with a `/` or a control character, or over 255 bytes. */
  INVALID_NAME: 'ERR_NETNS_INVALID_NAME',
  /** A path with a NUL byte. */
  INVALID_PATH: 'ERR_NETNS_INVALID_PATH',
  /** A wrong argument, or an option the call refuses (the message names it). */
  INVALID_ARG: 'ERR_NETNS_INVALID_ARG',
  /** Internal safety check: a namespace switch on a thread this package does not own. */
  MAIN_THREAD: 'ERR_NETNS_MAIN_THREAD',
  /** Internal safety check: a switch on a thread that is already switched. */
  SWITCHED: 'ERR_NETNS_SWITCHED',
  /** Internal safety check: a thread failed to return to its own namespace (it exits and never runs again). */
  POISONED: 'ERR_NETNS_POISONED',
  /** withNetNS: the pool thread exited before answering, or pool threads cannot start (the message says why). */
  WORKER_EXITED: 'ERR_NETNS_WORKER_EXITED',
  /** The addon, the exec helper or the worker entry is missing; the message lists every path tried. */
  ADDON_MISSING: 'ERR_NETNS_ADDON_MISSING',
  /** `NETNS_RUNTIME_DIR` holds files of another version of this package: fill it again. */
  RUNTIME_MISMATCH: 'ERR_NETNS_RUNTIME_MISMATCH',
  /** withNetNS: closePool() ended the call. */
  POOL_CLOSED: 'ERR_NETNS_POOL_CLOSED',
  /** withNetNS: an argument or result that cannot be structured-cloned. */
  NOT_CLONEABLE: 'ERR_NETNS_NOT_CLONEABLE',
  /** An error that came without a code: a bug, please report it. */
  UNKNOWN: 'ERR_NETNS_UNKNOWN',
  /** A NetNS I/O method called inside withNetNS's `fn` (the thread is already in a namespace). */
  SWITCHED_THREAD: 'ERR_NETNS_SWITCHED_THREAD',
  /** A sysctl outside `net.*`: those are host-wide, not per namespace. */
  SYSCTL_SCOPE: 'ERR_NETNS_SYSCTL_SCOPE',
  /** A malformed sysctl key or value. */
  INVALID_SYSCTL: 'ERR_NETNS_INVALID_SYSCTL',
  /** createTestNetwork failed; the netlink error is the `cause`. */
  FIXTURE: 'ERR_NETNS_FIXTURE',
  /** createLab: a lab past a limit of the kernel or the process (a bridge's ports, open files), refused before anything is made. */
  LAB_TOO_BIG: 'ERR_NETNS_LAB_TOO_BIG',
  /** `ip` (iproute2) is not installed; only TestNetwork.ip() needs it. */
  IP_MISSING: 'ERR_NETNS_IP_MISSING',
  /** The `nft` address-set backend failed; the message has nft's stderr. */
  NFT: 'ERR_NETNS_NFT',
  /** `nft` (nftables) is not installed; only the address sets' `backend: 'nft'` needs it. */
  NFT_MISSING: 'ERR_NETNS_NFT_MISSING',
  /** Not an IP address or CIDR prefix. */
  ADDRSET_INVALID_ADDRESS: 'ERR_NETNS_ADDRSET_INVALID_ADDRESS',
  /** Two of an owner's entries overlap. */
  ADDRSET_OVERLAP: 'ERR_NETNS_ADDRSET_OVERLAP',
  /** An owner that is empty, not well-formed Unicode, or over 1,024 bytes. */
  ADDRSET_INVALID_OWNER: 'ERR_NETNS_ADDRSET_INVALID_OWNER',
  /** An owner that was never `ensure`d. */
  ADDRSET_UNKNOWN_OWNER: 'ERR_NETNS_ADDRSET_UNKNOWN_OWNER',
  /** Two owners hash to the same set names. */
  ADDRSET_NAME_COLLISION: 'ERR_NETNS_ADDRSET_NAME_COLLISION',
  /** A bad AddressSets option. */
  ADDRSET_INVALID_OPTION: 'ERR_NETNS_ADDRSET_INVALID_OPTION',
  /** The AddressSets was closed. */
  ADDRSET_CLOSED: 'ERR_NETNS_ADDRSET_CLOSED',
  /** Another process writes the table; the message names its pid. */
  ADDRSET_LOCKED: 'ERR_NETNS_ADDRSET_LOCKED',
  /** A change through an AddressSets opened `readOnly`. */
  ADDRSET_READ_ONLY: 'ERR_NETNS_ADDRSET_READ_ONLY',
  /** `gc` called without the list of live owners. */
  ADDRSET_LIVE_REQUIRED: 'ERR_NETNS_ADDRSET_LIVE_REQUIRED',
  /** `netns/netlink`: input refused before anything was sent. */
  NETLINK_INVALID: 'ERR_NETNS_NETLINK_INVALID',
  /** `netns/netlink`: a dump the kernel interrupted (NLM_F_DUMP_INTR) on every attempt (DUMP_ATTEMPTS). */
  NETLINK_DUMP_INTERRUPTED: 'ERR_NETNS_NETLINK_DUMP_INTERRUPTED',
  /** `netns/netlink`: a reply that does not parse. */
  NETLINK_MALFORMED: 'ERR_NETNS_NETLINK_MALFORMED',
  /** A CNI CHECK helper found a difference; the message names it. */
  CNI_CHECK: 'ERR_NETNS_CNI_CHECK',
  /** collectGarbage removed a veth whose alias names no attachment to release from IPAM, or CniHarness.gc left something unreleased (`errors`). */
  CNI_GC_UNRELEASED: 'ERR_NETNS_CNI_GC_UNRELEASED',
  /** serveResident: another resident daemon serves that socket. */
  CNI_DAEMON_RUNNING: 'ERR_NETNS_CNI_DAEMON_RUNNING',
  /** checkPlugin: the plugin file cannot be run (EACCES, ENOENT for a missing #! interpreter, ENOEXEC: the errno in the message, `errno`, `path`). */
  CNI_PLUGIN_UNRUNNABLE: 'ERR_NETNS_CNI_PLUGIN_UNRUNNABLE',
  /** ns.delete() on a handle with no name in a run directory (NetNS.fromPid, current, an anonymous or other path). */
  NOT_NAMED: 'ERR_NETNS_NOT_NAMED',
  /** ns.delete(): the handle's name now belongs to another namespace (deleted and made again meanwhile); nothing was removed. */
  NAME_REPLACED: 'ERR_NETNS_NAME_REPLACED',
  /** ns.execFile(): the command ran and exited non-zero or died of a signal (exitCode, signal, stdout, stderr set). */
  COMMAND_FAILED: 'ERR_NETNS_COMMAND_FAILED',
  /** withNetNS: fn threw (or rejected with) something that is not an Error; it is in `value` when it could be cloned. */
  NON_ERROR_THROWN: 'ERR_NETNS_NON_ERROR_THROWN',
  /** The kernel lacks the module a request needs (a qdisc kind, tc classifier or action: sch_netem, cls_matchall, act_gact); the message names it, the kernel's error is the cause. */
  UNSUPPORTED: 'ERR_NETNS_UNSUPPORTED',
  /** A rootless sandbox could not be made: the kernel or the distribution forbids unprivileged user namespaces here; the message names the setting. */
  USERNS_DENIED: 'ERR_NETNS_USERNS_DENIED',
} as const;

/** One of this package's own codes. */
export type NetnsErrorCode = (typeof ErrorCodes)[keyof typeof ErrorCodes];

/**
 * What `NetnsError.code` can be: one of ours, a system error's errno name, a
 * code Node gave an error this package wrapped, or ABORT_ERR (AbortError).
 */
export type ErrorCode = NetnsErrorCode | `E${string}` | 'ABORT_ERR';

/**
 * What a NetnsError carries besides its code and message.
 * @inline
 */
export interface NetnsErrorFields {
  /** The negative errno of a failed system call, as Node gives it. */
  errno?: number;
  /** The system call that failed. */
  syscall?: string;
  /** The file the error is about. */
  path?: string;
  /** A netlink refusal's extended-ACK text (NLMSGERR_ATTR_MSG), as the kernel gave it. */
  extack?: string;
  /** The error this one wraps, as Error's `cause`. */
  cause?: unknown;
}

/**
 * The one error class of this package. Shaped like Node's SystemError:
 * `code` is always set; `errno` (negative, as in Node), `syscall` and `path`
 * are set when a system call failed.
 */
export class NetnsError extends Error {
  // The optional fields are `declare`d: as class fields they would be own
  // properties set to undefined on every error (shown by console.log, copied by spread).
  /** 'NetnsError' ('AbortError' for an abort). */
  override name = 'NetnsError';
  /** Stable: one of ErrorCodes, or a system error's errno name (ENOENT, EPERM, ECONNREFUSED...). */
  readonly code: ErrorCode;
  /** The negative errno, as Node gives it, when a system call failed. */
  declare errno?: number;
  /** The system call that failed (open, setns, connect, bind...). */
  declare syscall?: string;
  /** The file the error is about, when there is one. */
  declare path?: string;
  /**
   * The kernel's own words for a netlink refusal, when it gave any ("Peer netns
   * already has a nsid assigned"): what `ip` prints as `Error: <extack>.`
   */
  declare extack?: string;
  /** A socket error's address (host, or unix path), as Node sets it on its own. */
  declare address?: string;
  /** A socket error's port, as Node sets it on its own. */
  declare port?: number;
  /** ERR_NETNS_NON_ERROR_THROWN: what fn threw, structured-cloned (absent when it could not be). */
  declare value?: unknown;

  constructor(code: ErrorCode, message: string, fields: NetnsErrorFields = {}) {
    super(message, fields.cause === undefined ? undefined : { cause: fields.cause });
    this.code = code;
    if (fields.errno !== undefined) this.errno = fields.errno;
    if (fields.syscall !== undefined) this.syscall = fields.syscall;
    if (fields.path !== undefined) this.path = fields.path;
    if (fields.extack !== undefined) this.extack = fields.extack;
  }
}

function describeErrno(errno: number): [code: ErrorCode, description: string] {
  const known = util().getSystemErrorMap().get(-Math.abs(errno));
  if (known) return known as [ErrorCode, string];
  const name = Object.entries(os().constants.errno).find(([, n]) => n === Math.abs(errno))?.[0];
  return [(name ?? `E${Math.abs(errno)}`) as ErrorCode, 'unknown system error'];
}

/** What a refused value is, for messages: 'null', 'an array', or its typeof. */
export const kindOf = (value: unknown): string => (value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value);

/**
 * A refused value as a message shows it: its JSON (text quoted), a number or
 * bigint as written (JSON prints NaN and Infinity as null, and throws on a
 * bigint), else `unshowable(value)` (a function, a symbol, undefined), or its
 * kind for what JSON refuses (a circular object, a toJSON that throws). Never throws.
 */
export function shownValue(value: unknown, unshowable: (value: unknown) => string = kindOf): string {
  if (typeof value === 'number' || typeof value === 'bigint') return String(value);
  try {
    return JSON.stringify(value) ?? unshowable(value);
  } catch {
    return kindOf(value);
  }
}

/** A system error in Node's wording: "ENOENT: no such file or directory, open '/x'". */
export function systemError(errno: number, syscall: string, path?: string): NetnsError {
  const [code, description] = describeErrno(errno);
  const where = path === undefined ? syscall : `${syscall} '${path}'`;
  return new NetnsError(code, `${code}: ${description}, ${where}`, {
    errno: -Math.abs(errno),
    syscall,
    ...(path === undefined ? {} : { path }),
  });
}

export function netnsError(code: ErrorCode, message: string, fields?: NetnsErrorFields): NetnsError {
  return new NetnsError(code, message, fields);
}

interface NativeErrorShape {
  code?: string;
  errno?: number;
  syscall?: string;
  path?: string;
  message?: string;
}

/** The one error for a tool that is not installed, naming the Debian package that has it. */
export function toolMissing(code: ErrorCode, tool: string, debianPackage: string, cause?: unknown): NetnsError {
  const message = `${tool} is not installed: install the Debian package ${debianPackage} (apt-get install ${debianPackage})`;
  return netnsError(code, message, cause === undefined ? {} : { cause });
}

/**
 * Converts what the addon threw into a NetnsError: a system error in Node's
 * wording, a coded one as is, an argument check (TypeError, RangeError) as
 * ERR_NETNS_INVALID_ARG and anything else as ERR_NETNS_UNKNOWN, the original
 * kept as `cause`. A NetnsError passes through unchanged.
 */
export function fromNative(error: unknown): NetnsError {
  if (error instanceof NetnsError) return error;
  if (!(error instanceof Error)) return netnsError(ErrorCodes.UNKNOWN, String(error), { cause: error });
  const native = error as Error & NativeErrorShape;
  if (typeof native.code !== 'string') {
    const code = error instanceof TypeError || error instanceof RangeError ? ErrorCodes.INVALID_ARG : ErrorCodes.UNKNOWN;
    return netnsError(code, error.message, { cause: error });
  }
  if (typeof native.errno === 'number' && native.syscall) {
    return systemError(native.errno, native.syscall, native.path);
  }
  return netnsError(native.code as ErrorCode, native.message ?? '', native.path === undefined ? {} : { path: native.path });
}

/**
 * A NetnsError for an error Node raised about something this package did in a
 * namespace (a socket's connect or bind, a spawn): Node's `code` (ECONNREFUSED,
 * or its own ERR_* when Node refused an argument), `errno`, `syscall`, `address`
 * and `port` are kept, Node's error is the `cause`, and the message names the
 * namespace (`where`, e.g. "in NetNS(/run/netns/a, net:[4026532]))"). A
 * NetnsError passes through with `where` added to its message.
 */
export function fromNodeError(error: unknown, where: string): NetnsError {
  if (error instanceof NetnsError) {
    if (!error.message.endsWith(where)) error.message = `${error.message} ${where}`;
    return error;
  }
  if (!(error instanceof Error)) return netnsError(ErrorCodes.UNKNOWN, `${String(error)} ${where}`, { cause: error });
  // An abort (a spawn's or execFile's signal) is the AbortError withNetNS gives too, with the signal's reason.
  if ((error as { code?: unknown }).code === 'ABORT_ERR') return new AbortError(error.message, { cause: error.cause });
  const node = error as NodeJS.ErrnoException & { address?: string; port?: number };
  const code = (typeof node.code === 'string' && node.code.startsWith('E') ? node.code : ErrorCodes.UNKNOWN) as ErrorCode;
  const wrapped = netnsError(code, `${error.message} ${where}`, {
    cause: error,
    ...(typeof node.errno === 'number' ? { errno: node.errno } : {}),
    ...(typeof node.syscall === 'string' ? { syscall: node.syscall } : {}),
    ...(typeof node.path === 'string' ? { path: node.path } : {}),
  });
  if (node.address !== undefined) Object.assign(wrapped, { address: node.address });
  if (node.port !== undefined) Object.assign(wrapped, { port: node.port });
  return wrapped;
}

/** Calls into the addon, translating its errors. */
export function callNative<T>(call: () => T): T {
  try {
    return call();
  } catch (error) {
    throw fromNative(error);
  }
}

/**
 * The error Node's own APIs reject with when aborted (fs, timers/promises,
 * child_process): name AbortError, code ABORT_ERR, the signal's reason as cause.
 * A NetnsError too, as every error this package raises.
 */
export class AbortError extends NetnsError {
  override name = 'AbortError';
  declare readonly code: 'ABORT_ERR';

  constructor(message: string, options?: { cause?: unknown }) {
    super('ABORT_ERR', message, options?.cause === undefined ? {} : { cause: options.cause });
  }
}

export function abortError(signal: AbortSignal): AbortError {
  return new AbortError('The operation was aborted', { cause: signal.reason });
}
