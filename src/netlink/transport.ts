// The seam between the netlink layer and the socket: the addon's functions by
// default, a fake in unit tests (which then run without privileges or kernel).
import { fs } from '../core/builtins.js';
import { callNative, fromNative } from '../core/errors.js';
import { native } from '../core/native.js';

/** The socket operations under a NetlinkHandle: the addon's by default; a fake in unit tests (NetlinkHandleOptions.transport). */
export interface NetlinkTransport {
  /** A netlink socket made inside the namespace `nsFd` refers to; the socket keeps that namespace for life. */
  open(
    nsFd: number,
    protocol: number,
  ): Promise<{
    /** The socket's descriptor, now the handle's. */
    fd: number;
    /** The port id the kernel bound it to (nl_pid), which replies are addressed to. */
    portId: number;
  }>;
  /**
   * A netlink socket made on the calling thread, in its own namespace, with no
   * switch (so no CAP_SYS_ADMIN needed). Optional: a transport without it is
   * always asked to open() inside a namespace descriptor.
   */
  openHere?(protocol: number): {
    /** The socket's descriptor, now the handle's. */
    fd: number;
    /** The port id the kernel bound it to (nl_pid), which replies are addressed to. */
    portId: number;
  };
  /**
   * Sends the messages in one sendmsg and returns every reply to their seqs,
   * or null when every request was simply acknowledged; quiet: the messages
   * asked for no ACK and none is a dump, so what the kernel queued is all
   * there is, null if nothing (see NativeBinding.netlinkTransact).
   */
  transact(fd: number, request: Buffer, firstSeq: number, count: number, quiet: boolean): Buffer | null;
  /**
   * transact() off the calling thread, for requests the kernel takes
   * milliseconds over (a link made or deleted waits for RTNL and RCU), which
   * would stall the event loop. Optional: without it every request is
   * transact()'s. The handle neither uses nor closes `fd` until it settles.
   */
  transactOffThread?(fd: number, request: Buffer, firstSeq: number, count: number, quiet: boolean): Promise<Buffer | null>;
  /**
   * Frees the socket; inBackground: on libuv's pool, so the caller does not
   * wait (the descriptor stays this process's until then, so its number is not
   * reused meanwhile), as Node closes its own sockets.
   */
  close(fd: number, inBackground?: boolean): void;
}

export const nativeTransport: NetlinkTransport = {
  async open(nsFd, protocol) {
    try {
      return await native().netlinkOpen(nsFd, protocol);
    } catch (error) {
      return callNative(() => {
        throw error;
      });
    }
  },
  openHere(protocol) {
    return callNative(() => native().netlinkOpenHere(protocol));
  },
  // Not through callNative: its closure would be made on every request.
  transact(fd, request, firstSeq, count, quiet) {
    try {
      return native().netlinkTransact(fd, request, firstSeq, count, quiet);
    } catch (error) {
      throw fromNative(error);
    }
  },
  transactOffThread(fd, request, firstSeq, count, quiet) {
    try {
      return native().netlinkTransactOffThread(fd, request, firstSeq, count, quiet).catch((error: unknown) => Promise.reject(fromNative(error)));
    } catch (error) {
      return Promise.reject(fromNative(error));
    }
  },
  close(fd, inBackground) {
    // A failed close of a socket leaves nothing to act on: the descriptor is gone either way.
    if (inBackground) fs().close(fd, () => {});
    else callNative(() => native().closeFd(fd));
  },
};
