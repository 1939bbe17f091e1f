// The caller's network namespace: a plugin process acts in the namespace it
// is run in, so the shim sends its own (/proc/self/ns/net, SCM_RIGHTS) with
// the request's first bytes and the call runs there. Node's reads take no
// ancillary data (and the kernel closes descriptors a plain read passes over),
// so the connection is accepted paused and the addon reads its first bytes
// (native/recv_fd.h) before Node reads the rest.
import { native } from '../../core/native.js';
import { NetNS } from '../../netns.js';
import { BadRequest } from './protocol.js';

/** What came first on a connection. */
export interface Opening {
  /** The request's first bytes (none when the connection ended first, or the read failed: then `netns` says so). */
  bytes: Buffer;
  /** A handle of its own on the caller's namespace (the descriptor received is closed), or why there is none. */
  netns: NetNS | BadRequest;
}

const RECORD_HEADER = 12; // see native/recv_fd.h

/** The received descriptor, checked as NetNS.open checks any path, then closed: the handle holds its own. */
function adopt(fd: number): NetNS | BadRequest {
  try {
    return NetNS.open(`/proc/self/fd/${fd}`);
  } catch (error) {
    return new BadRequest(`the descriptor sent with the request is not a network namespace: ${(error as Error).message}`);
  } finally {
    native().closeFd(fd);
  }
}

function opening(record: Buffer): Opening {
  const fd = record.readInt32LE(0);
  const came = record.readUInt32LE(4);
  const bytes = Buffer.from(record.subarray(RECORD_HEADER, RECORD_HEADER + record.readUInt32LE(8)));
  if (bytes.length === 0) return { bytes, netns: new BadRequest('the connection ended before the request came') };
  if (fd >= 0) return { bytes, netns: adopt(fd) };
  const why = came === 0 ? 'no network namespace came with the request' : `${came} descriptors came with the request, where the shim sends one (its network namespace)`;
  return { bytes, netns: new BadRequest(why) };
}

/**
 * Waits on the loop for the first bytes of the connection `fd` (a net.Socket
 * accepted with pauseOnConnect: Node must not have read them), then calls
 * `received`; the socket may be resumed from then on. Returns a function that
 * stops waiting (the connection went away first). Throws when the descriptor
 * cannot be watched (EMFILE).
 */
export function receiveOpening(fd: number, received: (opening: Opening) => void): () => void {
  const watch = native().receiveRights(fd, (error, record) => {
    watch.close();
    received(error ? { bytes: Buffer.alloc(0), netns: new BadRequest(`cannot read the request: ${error.message}`) } : opening(record!));
  });
  return () => watch.close();
}
