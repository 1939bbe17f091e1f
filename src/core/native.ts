// Loads the compiled addon, found as runtime-files.ts says; NETNS_ADDON_PATH
// points at another build (e.g. the AddressSanitizer one made by
// `npm run build:asan`).
import { ADDON, EXEC_HELPER, locate } from './runtime-files.js';

export interface NsIdentity {
  dev: number;
  ino: number;
}

export interface NativeBinding {
  openNetns(path: string): NsIdentity & { fd: number };
  openNetnsIdentity(path: string): NsIdentity;
  createNamespace(runDir: string, path: string): Promise<NsIdentity & { fd: number }>;
  deleteNamespace(path: string): Promise<void>;
  closeFd(fd: number): void;
  /** A close-on-exec fd holding an exclusive flock on `path` (created), or -1 while another holds it. */
  tryLockFile(path: string): number;
  pipe(): { read: number; write: number };
  threadNetns(): NsIdentity;
  becomeSwitchThread(): void;
  enter(fd: number): void;
  restore(): Error | null;
  dropEffectiveCapability(cap: number): void;
  ioSocket(nsFd: number, domain: number, type: number, protocol: number): Promise<number>;
  ioBind(nsFd: number, type: number, host: string, port: number, unix: boolean, backlog: number): Promise<number>;
  ioReadFile(nsFd: number, path: string): Promise<Buffer>;
  ioWriteFile(nsFd: number, path: string, data: string): Promise<void>;
  ioStats(): { threadsCreated: number; threadsDiscarded: number };
  /** A NETLINK socket of `protocol` (0 = NETLINK_ROUTE) created inside the namespace nsFd, SOCK_RAW|SOCK_CLOEXEC, with NETLINK_EXT_ACK, NETLINK_GET_STRICT_CHK and NETLINK_CAP_ACK set, bound; portId from getsockname. */
  netlinkOpen(nsFd: number, protocol: number): Promise<{ fd: number; portId: number }>;
  /**
   * Synchronous: sends `request` (one or more nlmsgs, seq numbers firstSeq .. firstSeq+count-1, each with NLM_F_ACK or NLM_F_DUMP)
   * to the kernel in one sendmsg, then receives until each of those seqs has its terminal message (NLMSG_ERROR, incl. ACK, or NLMSG_DONE),
   * dropping messages of other seqs. Returns every kept message, in order, concatenated (whole nlmsgs). Throws a system error (errno code,
   * syscall 'sendmsg'/'recvmsg'/'poll') on socket failure; ETIMEDOUT after 5 s without a reply.
   */
  netlinkTransact(fd: number, request: Buffer, firstSeq: number, count: number): Buffer;
}

/**
 * The exec helper built beside the addon (see native/exec_helper.c). Looked
 * up when a spawn needs it, so that a program which never spawns runs without it.
 */
export function execHelperPath(): string {
  return locate(EXEC_HELPER);
}

// process.dlopen, not require: require needs this module's URL, which a
// CommonJS bundle has lost.
function load(): NativeBinding {
  const module = { exports: {} };
  process.dlopen(module, locate(ADDON));
  return module.exports as NativeBinding;
}

export const native: NativeBinding = load();
