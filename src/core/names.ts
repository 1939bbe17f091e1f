import { ErrorCodes, netnsError } from './errors.js';

/** Where `ip netns` keeps its bind mounts. /var/run is a symlink to it on modern systems. */
export const NETNS_RUN_DIR = '/run/netns';
const NAME_MAX = 255;

// C0 controls and DEL: a newline in a name makes `ip netns list` print two
// namespaces, and any of them garbles the output of tools that print names.
const CONTROL = /[\u0000-\u001f\u007f]/;

/** Throws unless `name` is acceptable to `ip netns`: no '/', not '.' or '..', 1..255 bytes, no control characters. */
export function assertValidName(name: unknown): asserts name is string {
  const bad = (why: string) =>
    netnsError(ErrorCodes.INVALID_NAME, `invalid namespace name ${JSON.stringify(name)}: ${why}`);
  if (typeof name !== 'string') throw bad('must be a string');
  if (name === '' || name === '.' || name === '..') throw bad('reserved or empty');
  if (name.includes('/')) throw bad("must not contain '/'");
  if (name.includes('\0')) throw bad('must not contain a NUL byte');
  if (CONTROL.test(name)) throw bad('must not contain control characters (0x00-0x1f, 0x7f)');
  if (!name.isWellFormed()) throw bad('must be well-formed Unicode (a lone surrogate would be written as U+FFFD)');
  if (Buffer.byteLength(name) > NAME_MAX) throw bad(`longer than ${NAME_MAX} bytes`);
}

/** A bare name means /run/netns/NAME; anything with a '/' is taken as a path. */
export function resolveNamespacePath(pathOrName: string): string {
  if (typeof pathOrName !== 'string' || pathOrName === '') {
    throw netnsError(ErrorCodes.INVALID_ARG, 'a namespace path or name must be a non-empty string');
  }
  if (pathOrName.includes('/')) return pathOrName;
  assertValidName(pathOrName);
  return `${NETNS_RUN_DIR}/${pathOrName}`;
}
