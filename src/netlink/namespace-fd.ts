// A namespace as callers name it here (a NetNS, or a name or path as
// NetNS.open takes), held as a descriptor for the length of one call. The
// kernel reads the descriptor when the call happens (a socket made inside the
// namespace, NETNSA_FD in a message), so it must stay open until then: a
// NetNS's own is kept from closing meanwhile (acquire/release), a path is
// opened (and checked to be a network namespace) and closed after.
import { callNative, ErrorCodes, kindOf, netnsError } from '../core/errors.js';
import { isNsHandle } from '../core/handle.js';
import { resolveNamespacePath } from '../core/names.js';
import { native } from '../core/native.js';

export interface NamespaceFd extends Disposable {
  readonly fd: number;
}

/** `what` starts the error for a target that is neither ("netlink", "netlink: get nsid"). */
export function leaseNamespaceFd(target: unknown, what: string): NamespaceFd {
  if (isNsHandle(target)) {
    const fd = target.acquire();
    return { fd, [Symbol.dispose]: () => target.release() };
  }
  if (typeof target !== 'string') {
    throw netnsError(ErrorCodes.INVALID_ARG, `${what}: the target must be a NetNS, a namespace name or path, got ${kindOf(target)}`);
  }
  const { fd } = callNative(() => native().openNetns(resolveNamespacePath(target)));
  return { fd, [Symbol.dispose]: () => callNative(() => native().closeFd(fd)) };
}
