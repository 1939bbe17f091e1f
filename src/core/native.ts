// Loads the compiled addon, found as runtime-files.ts says; NETNS_ADDON_PATH
// points at another build (e.g. the AddressSanitizer one made by
// `npm run build:asan`). Loaded on first use, not at import: a program that
// imports netns but has not touched a namespace yet (a CNI plugin answering
// VERSION) pays neither the dlopen nor a missing addon's error.
import { ADDON, EXEC_HELPER, locate, SANDBOX_HELPER } from './runtime-files.js';

export interface NsIdentity {
  dev: number;
  ino: number;
}

export interface NativeBinding {
  openNetns(path: string): NsIdentity & { fd: number };
  openNetnsIdentity(path: string): NsIdentity;
  createNamespace(runDir: string, path: string): Promise<NsIdentity & { fd: number }>;
  deleteNamespace(path: string): Promise<void>;
  /** Makes `path` (in runDir, made as createNamespace makes it) a bind mount of the namespace `source` (/proc/PID/ns/net) names. */
  attachNamespace(runDir: string, path: string, source: string): Promise<NsIdentity & { fd: number }>;
  closeFd(fd: number): void;
  /** glibc's strerror text for an errno (Node's negative one, or positive), as iproute2 prints it: "File exists". */
  strerror(errno: number): string;
  /** A close-on-exec fd holding an exclusive flock on `path` (created), or -1 while another holds it. */
  tryLockFile(path: string): number;
  /** SO_PEERCRED of a connected unix socket: who connected (a resident CNI daemon's check). */
  peerCredentials(fd: number): { pid: number; uid: number; gid: number };
  /**
   * Polls a duplicate of the unix stream socket `fd` (left to its owner) and reads once, as soon as anything
   * came (native/recv_fd.h): onData gets one record, i32 descriptor (-1 when none or several came, all then
   * closed), u32 how many came, u32 byte count, the bytes (little-endian, padded to 4); an end of stream is a
   * record with no bytes. The descriptor, O_CLOEXEC, is the caller's to close. Close the watch before reading
   * the socket otherwise.
   */
  receiveRights(fd: number, onData: (error: Error | null, data: Buffer | null) => void): NativeFdWatch;
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
  /** A NETLINK socket of `protocol` made inside the namespace nsFd (EXT_ACK, GET_STRICT_CHK, CAP_ACK set), bound. */
  netlinkOpen(nsFd: number, protocol: number): Promise<{ fd: number; portId: number }>;
  /** The same socket made on the calling thread, in its own namespace: no switch, so no privilege needed. */
  netlinkOpenHere(protocol: number): { fd: number; portId: number };
  /**
   * Sends `request` (count messages, seq firstSeq onwards, each asking for an ACK or a dump; at most one
   * dump) in one sendmsg and returns every reply of those seqs up to each one's ERROR/ACK or DONE, whole
   * and in order; null instead when every reply was a bare ACK (nothing to read). Quiet: the messages ask
   * for no ACK and none is a dump; what the kernel queued by the time sendmsg returned is read (only a
   * failure, a GET's or an echo's answer), null if nothing, and nothing is waited for. Only the kernel's
   * datagrams are taken. Synchronous: the kernel has answered when sendmsg returns (ETIMEDOUT after 5 s if not).
   */
  netlinkTransact(fd: number, request: Buffer, firstSeq: number, count: number, quiet?: boolean): Buffer | null;
  /** netlinkTransact on a thread of its own; `fd` must not be used or closed until it settles. */
  netlinkTransactOffThread(fd: number, request: Buffer, firstSeq: number, count: number, quiet?: boolean): Promise<Buffer | null>;
  /** Joins the netlink socket to multicast groups (NETLINK_ADD_MEMBERSHIP, any group number). */
  netlinkSubscribe(fd: number, groups: readonly number[]): void;
  /**
   * Takes ownership of `fd` (even when it throws) and polls it on this thread's loop: every queued
   * datagram, padded to 4 bytes, reaches onData as one Buffer; a failed read (ENOBUFS) as an error,
   * after the data read before it. Holds the loop open until unref() or close().
   */
  netlinkWatch(fd: number, onData: (error: Error | null, data: Buffer | null) => void): NativeFdWatch;
  /**
   * Makes runDir if missing and watches it with inotify (IN_CREATE, IN_DELETE), polled on this thread's loop:
   * onData gets whole struct inotify_event records, in the kernel's order. Holds the loop open until close().
   */
  runDirWatch(runDir: string, onData: (error: Error | null, data: Buffer | null) => void): NativeFdWatch;
  /**
   * An AF_PACKET socket with a TPACKET_V3 receive ring made inside the namespace nsFd, bound to `iface` there (looked
   * up on the socket, so in its namespace) for every protocol, keeping `snaplen` bytes (1 to 262144) of each packet, timestamped to
   * the nanosecond; on loopback only the incoming copy of each packet. linkType: the pcap LINKTYPE_* of its frames. ENODEV:
   * no such interface; ERR_NETNS_INVALID_ARG: an interface neither Ethernet, loopback nor raw IP.
   */
  packetOpen(nsFd: number, iface: string, snaplen: number): Promise<{ fd: number; linkType: number }>;
  /**
   * Takes ownership of the packet socket `fd` (even when it throws), maps its ring and reads it on a thread of its own
   * (native/packet_ring.h), writing pcap records to `fileFd` (still the caller's) from its current offset on. stop()
   * seals the socket and returns its PACKET_STATISTICS (packets seen, drops); `done` then settles once what the ring
   * held is written: { packets } written, or the first write's error. Holds the loop open until `done` settles.
   */
  packetCapture(fd: number, fileFd: number): NativePacketCapture;
  /**
   * Starts `path` (argv [path], exactly `env`, default signals) on a thread of its own and runs it to its end with
   * `stdin` written and both outputs read (native/run_program.h); `exit` rejects (ENOENT, ETXTBSY...) if it cannot be
   * started. `id` names it to killProgram.
   */
  runProgram(path: string, env: string[], stdin: Buffer): { id: number; exit: Promise<{ status: number | null; signal: number | null; stdout: Buffer; stderr: Buffer }> };
  /** SIGKILLs a program runProgram started (one not started yet never starts, and reads as killed), unless it was reaped already (then false): never a reused pid. */
  killProgram(id: number): boolean;
  /** A new descriptor of the network namespace the socket `fd` belongs to (SIOCGSKNS; needs CAP_NET_ADMIN there). */
  socketNetns(fd: number): number;
}

/** A capture's ring reader (native/packet_ring.h). */
export interface NativePacketCapture {
  readonly done: Promise<{ packets: number }>;
  /** Takes no more packets; idempotent (later calls count nothing). */
  stop(): { packets: number; drops: number };
  /** Packets written so far. */
  written(): number;
}

/** A descriptor polled on this thread's loop (native/fd_watch.h): a netlink or packet socket, or an inotify instance. */
export interface NativeFdWatch {
  ref(): void;
  unref(): void;
  /** Stops reading: events wait in the kernel's queue (which overflows: ENOBUFS, IN_Q_OVERFLOW). */
  pause(): void;
  resume(): void;
  /** Idempotent: stops polling and closes the descriptor. Also done on GC (only possible while unref'd) and at exit. */
  close(): void;
}

/**
 * The exec helper built beside the addon (see native/exec_helper.c). Looked
 * up when a spawn needs it, so that a program which never spawns runs without it.
 */
export function execHelperPath(): string {
  return locate(EXEC_HELPER);
}

/** The sandbox helper built beside the addon (see native/sandbox_helper.c), looked up as the exec helper is. */
export function sandboxHelperPath(): string {
  return locate(SANDBOX_HELPER);
}

// process.dlopen, not require: require needs this module's URL, which a
// CommonJS bundle has lost.
function load(): NativeBinding {
  const module = { exports: {} };
  process.dlopen(module, locate(ADDON));
  return module.exports as NativeBinding;
}

let binding: NativeBinding | undefined;

/**
 * The addon, loaded by the first call (which throws ERR_NETNS_ADDON_MISSING if
 * it is not found; the next call looks again). Small enough to be inlined on hot paths.
 */
export function native(): NativeBinding {
  return (binding ??= load());
}
