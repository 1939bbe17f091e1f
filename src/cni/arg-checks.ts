// Argument checks of netns/cni/plumbing's functions: a plugin author's slip
// (an argument left out, a NetNS where a Netlink goes, a number for a list)
// is ERR_NETNS_INVALID_ARG naming the function and the argument, before
// anything is opened or changed, never a TypeError from deep inside.
import { ErrorCodes, kindOf, netnsError, type NetnsError } from '../core/errors.js';
import { isNsHandle } from '../core/handle.js';
import { Netlink } from '../netlink/index.js';
import type { NetNS } from '../netns.js';


export function invalidArg(fn: string, message: string): NetnsError {
  return netnsError(ErrorCodes.INVALID_ARG, `${fn}: ${message}`);
}

/** An open NetNS (or what NetNS.open returned); ns.closed is judged where it is used. */
export function checkNs(fn: string, name: string, ns: unknown): asserts ns is NetNS {
  if (!isNsHandle(ns)) throw invalidArg(fn, `${name} must be a NetNS, got ${kindOf(ns)}`);
}

/** A Netlink from openNetlink() (a NetNS is not one: openNetlink(ns) makes one). */
export function checkNetlink(fn: string, nl: unknown): asserts nl is Netlink {
  if (!(nl instanceof Netlink)) {
    throw invalidArg(fn, `nl must be a Netlink from openNetlink(), got ${isNsHandle(nl) ? 'a NetNS (open one with openNetlink(ns))' : kindOf(nl)}`);
  }
}

export function checkString(fn: string, name: string, value: unknown): asserts value is string {
  if (typeof value !== 'string' || value === '') throw invalidArg(fn, `${name} must be a non-empty string, got ${kindOf(value)}`);
}

export function checkObject(fn: string, name: string, value: unknown): asserts value is object {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalidArg(fn, `${name} must be an object, got ${kindOf(value)}`);
}

export function checkArray(fn: string, name: string, value: unknown): asserts value is readonly unknown[] {
  if (!Array.isArray(value)) throw invalidArg(fn, `${name} must be an array, got ${kindOf(value)}`);
}

/** A CNI Result as parseResult gives it: an object whose ips, interfaces and routes, when there, are arrays. */
export function checkResult(fn: string, result: unknown): void {
  checkObject(fn, 'result', result);
  for (const field of ['ips', 'interfaces', 'routes'] as const) {
    const value = (result as Record<string, unknown>)[field];
    if (value !== undefined) checkArray(fn, `result.${field}`, value);
  }
}

/** An attachment reference: { network, containerId, ifname } as strings. */
export function checkAttachment(fn: string, attachment: unknown): void {
  checkObject(fn, 'attachment', attachment);
  const { network, containerId, ifname } = attachment as Record<string, unknown>;
  checkString(fn, 'attachment.network', network);
  checkString(fn, 'attachment.containerId', containerId);
  checkString(fn, 'attachment.ifname', ifname);
}
