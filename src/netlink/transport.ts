// The seam between the netlink layer and the socket: the addon's functions by
// default, a fake in unit tests (which then run without privileges or kernel).
import { callNative } from '../core/errors.js';
import { native } from '../core/native.js';

export interface NetlinkTransport {
  /** A netlink socket made inside the namespace `nsFd` refers to; the socket keeps that namespace for life. */
  open(nsFd: number, protocol: number): Promise<{ fd: number; portId: number }>;
  /**
   * Sends the messages in one sendmsg and returns every reply to their seqs,
   * or null when every request was simply acknowledged (see NativeBinding.netlinkTransact).
   */
  transact(fd: number, request: Buffer, firstSeq: number, count: number): Buffer | null;
  close(fd: number): void;
}

export const nativeTransport: NetlinkTransport = {
  async open(nsFd, protocol) {
    try {
      return await native.netlinkOpen(nsFd, protocol);
    } catch (error) {
      return callNative(() => {
        throw error;
      });
    }
  },
  transact: (fd, request, firstSeq, count) => callNative(() => native.netlinkTransact(fd, request, firstSeq, count)),
  close: (fd) => callNative(() => native.closeFd(fd)),
};
