// Per-namespace sysctls. /proc/sys/net resolves in the namespace of the thread
// that opens the file, so the open happens on an I/O thread inside the
// namespace. Only net.* keys exist per namespace: anything else would change
// the whole host, so it is refused.
import { ErrorCodes, netnsError } from '../core/errors.js';
import { native } from '../core/native.js';
import type { NsHandle } from '../core/handle.js';
import { runIo } from './run-io.js';

/**
 * 'net.ipv4.ip_forward' or, when a component contains dots (an interface such
 * as eth0.100), the slash form 'net/ipv4/conf/eth0.100/forwarding', as sysctl(8) accepts.
 */
export function sysctlPath(key: unknown): string {
  if (typeof key !== 'string' || key === '') throw netnsError(ErrorCodes.INVALID_SYSCTL, 'a sysctl key must be a non-empty string');
  if (key.includes('\0')) throw netnsError(ErrorCodes.INVALID_SYSCTL, 'a sysctl key must not contain a NUL byte');
  if (key.startsWith('/')) throw netnsError(ErrorCodes.INVALID_SYSCTL, `a sysctl key is not a path: ${JSON.stringify(key)}`);
  const parts = key.includes('/') ? key.split('/') : key.split('.');
  if (parts.some((part) => part === '' || part === '.' || part === '..')) {
    throw netnsError(ErrorCodes.INVALID_SYSCTL, `malformed sysctl key ${JSON.stringify(key)}`);
  }
  if (parts[0] !== 'net') {
    throw netnsError(
      ErrorCodes.SYSCTL_SCOPE,
      `${JSON.stringify(key)} is not a net.* sysctl: only those are per namespace, anything else would change the whole host`,
    );
  }
  return `/proc/sys/${parts.join('/')}`;
}

/**
 * The net.* sysctls of one namespace (`ns.sysctl`). get() and set() are async
 * (the file is opened on a thread inside the namespace); keys outside net.* are
 * refused with ERR_NETNS_SYSCTL_SCOPE, malformed keys and values with
 * ERR_NETNS_INVALID_SYSCTL, a missing key is ENOENT.
 */
export class Sysctl {
  readonly #ns: NsHandle;

  constructor(ns: NsHandle) {
    this.#ns = ns;
  }

  /** The value with its trailing newline removed. */
  async get(key: string): Promise<string> {
    const path = sysctlPath(key);
    const data = await runIo(this.#ns, (fd) => native().ioReadFile(fd, path));
    return data.toString('utf8').replace(/\n$/, '');
  }

  /** Writes one line (true/false as 1/0) to the key's /proc/sys/net file, as `sysctl -w` in the namespace. */
  async set(key: string, value: string | number | boolean): Promise<void> {
    const path = sysctlPath(key);
    const ok = typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value));
    if (!ok) throw netnsError(ErrorCodes.INVALID_SYSCTL, `a sysctl value must be a string, a finite number or a boolean, got ${String(value)}`);
    const text = typeof value === 'boolean' ? (value ? '1' : '0') : String(value);
    // The kernel takes the first line and drops the rest: a value is one line (a final newline is fine).
    if (/[\0\n]/.test(text.replace(/\n$/, ''))) throw netnsError(ErrorCodes.INVALID_SYSCTL, 'a sysctl value must be one line with no NUL byte');
    await runIo(this.#ns, (fd) => native().ioWriteFile(fd, path, text));
  }
}
