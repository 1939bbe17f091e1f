// capturePackets: what passes one interface of a namespace, both ways,
// written to a pcap file as it comes (see pcap.ts). The addon makes the
// socket and its ring inside the namespace on its own I/O thread; a thread of
// the addon's, never switched, writes the ring's packets to the file (as
// tcpdump's one loop does: the JS thread would copy each packet twice and
// share its time with the test). This side opens the file, writes its header,
// and stops.
import { open, unlink, type FileHandle } from 'node:fs/promises';
import { callNative, ErrorCodes, fromNative, fromNodeError, kindOf, netnsError, type NetnsError } from '../core/errors.js';
import { isNsHandle } from '../core/handle.js';
import { refuseUnknownKeys } from '../core/known-keys.js';
import { native, type NativePacketCapture } from '../core/native.js';
import { runIo } from '../io/run-io.js';
import { checkLinkName } from '../netlink/validate.js';
import type { NetNS } from '../netns.js';
import { pcapFileHeader } from './pcap.js';

const MAX_SNAPLEN = 262144; // libpcap's MAXIMUM_SNAPLEN; the addon refuses more
const OPTION_KEYS = ['file', 'snaplen'] as const;

/** Where capturePackets writes, and how much of each packet. */
export interface CaptureOptions {
  /** The pcap file to write: created, or emptied first if it exists (as `tcpdump -w` does). */
  file: string;
  /** Bytes kept of each packet, 1 to 262144 (the default: whole packets). */
  snaplen?: number;
}

/** What a stopped capture wrote. */
export interface CaptureSummary {
  /** The pcap file, as given. */
  file: string;
  /** Packets written to it. */
  packets: number;
  /** Packets the kernel dropped because the capture's ring was full (the file could not be written as fast). */
  dropped: number;
}

/**
 * A running capture (capturePackets). It holds the process open, as a
 * listening server does, until stop(); `await using` stops it.
 */
export interface PacketCapture extends AsyncDisposable {
  /** The pcap file being written, as given. */
  readonly file: string;
  /** The interface captured, in the capture's namespace. */
  readonly interface: string;
  /** Packets written to the file so far. */
  readonly packets: number;
  /**
   * Takes no more packets, writes those already taken (everything that
   * passed the interface before the call; within about 10 ms, the ring's
   * block time), closes the socket and the file.
   * Idempotent: every call returns the same summary. Rejects, after closing
   * everything, if writing the file failed (ENOSPC...); the file then holds
   * what was written before.
   */
  stop(): Promise<CaptureSummary>;
}

/**
 * Captures the packets passing `iface` of `ns` (sent and received) into a
 * pcap file (nanosecond timestamps, readable by tcpdump -r and tshark -r)
 * until stop(). Capturing has begun when the promise resolves. Errors:
 * ENODEV (no such interface there), the file's own (ENOENT, EACCES...),
 * ERR_NETNS_INVALID_ARG (not a NetNS, bad options, or an interface neither
 * Ethernet, loopback nor raw IP), ERR_NETNS_NETLINK_INVALID (a malformed
 * interface name), ERR_NETNS_CLOSED (ns closed). Nothing is left behind then:
 * no descriptor, and no file (the socket is made before the file is opened,
 * and a file whose header could not be written is removed).
 */
export async function capturePackets(ns: NetNS, iface: string, options: CaptureOptions): Promise<PacketCapture> {
  if (!isNsHandle(ns)) throw invalidArg(`capturePackets takes a NetNS, got ${kindOf(ns)}`);
  checkLinkName(iface);
  const { file, snaplen } = checkedOptions(options);
  const where = `(capturing ${iface} in ${ns.path})`;
  const socket = await runIo(ns, (nsFd) => native().packetOpen(nsFd, iface, snaplen)).catch((error: unknown) => {
    throw fromNodeError(error, where);
  });
  let output: FileHandle;
  try {
    output = await open(file, 'w');
  } catch (error) {
    native().closeFd(socket.fd);
    throw fromNodeError(error, where);
  }
  try {
    await output.write(pcapFileHeader(snaplen, socket.linkType));
  } catch (error) {
    native().closeFd(socket.fd);
    await discard(output, file);
    throw fromNodeError(error, where);
  }
  try {
    return new Capture(file, iface, socket.fd, output, where);
  } catch (error) {
    await discard(output, file); // the ring's reader took the socket, even failing
    throw error;
  }
}

/** A file begun but never to hold a capture: closed and removed. */
async function discard(output: FileHandle, file: string): Promise<void> {
  await output.close().catch(() => {});
  await unlink(file).catch(() => {});
}

function invalidArg(message: string): NetnsError {
  return netnsError(ErrorCodes.INVALID_ARG, message);
}

function checkedOptions(options: unknown): Required<CaptureOptions> {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw invalidArg(`capturePackets options must be an object with a file, got ${kindOf(options)}`);
  }
  refuseUnknownKeys(options, OPTION_KEYS, 'capturePackets options', invalidArg);
  const { file, snaplen = MAX_SNAPLEN } = options as Partial<CaptureOptions>;
  if (typeof file !== 'string' || file === '' || file.includes('\0')) {
    throw invalidArg(`capturePackets options.file must be a non-empty path without NUL, got ${typeof file === 'string' ? JSON.stringify(file) : kindOf(file)}`);
  }
  if (!Number.isInteger(snaplen) || snaplen < 1 || snaplen > MAX_SNAPLEN) {
    throw invalidArg(`capturePackets options.snaplen must be an integer from 1 to ${MAX_SNAPLEN}, got ${String(snaplen)}`);
  }
  return { file, snaplen };
}

class Capture implements PacketCapture {
  readonly file: string;
  readonly interface: string;
  readonly #ring: NativePacketCapture;
  readonly #output: FileHandle;
  readonly #where: string;
  #stopping: Promise<CaptureSummary> | null = null;

  /** Takes the socket (closed even if this throws) and writes to `output` from its current offset on. */
  constructor(file: string, iface: string, fd: number, output: FileHandle, where: string) {
    this.file = file;
    this.interface = iface;
    this.#output = output;
    this.#where = where;
    this.#ring = callNative(() => native().packetCapture(fd, output.fd));
  }

  get packets(): number {
    return this.#ring.written();
  }

  stop(): Promise<CaptureSummary> {
    return (this.#stopping ??= this.#stop());
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.stop().then(() => {});
  }

  async #stop(): Promise<CaptureSummary> {
    let failure: NetnsError | null = null;
    let dropped = 0;
    try {
      dropped = callNative(() => this.#ring.stop()).drops;
    } catch (error) {
      failure = fromNodeError(error, this.#where);
    }
    // The ring's thread writes to the file until done settles: only then is it closed.
    const written = await this.#ring.done.catch((error: unknown) => {
      failure ??= fromNodeError(fromNative(error), this.#where);
      return null;
    });
    await this.#output.close().catch((error: unknown) => {
      failure ??= fromNodeError(error, this.#where);
    });
    if (failure) throw failure;
    return { file: this.file, packets: written!.packets, dropped };
  }
}
