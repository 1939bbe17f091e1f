// Random hex digits for a temporary file's name, read from /dev/urandom
// rather than node:crypto's randomBytes: loading node:crypto (with OpenSSL's
// initialisation) would cost each ADD more than its whole record write.
import { closeSync, openSync, readSync } from 'node:fs';

/** `bytes` random bytes as 2 * `bytes` hex digits. */
export function randomHex(bytes: number): string {
  const buffer = Buffer.alloc(bytes);
  const fd = openSync('/dev/urandom', 'r');
  try {
    for (let got = 0; got < bytes; ) got += readSync(fd, buffer, got, bytes - got, null);
  } finally {
    closeSync(fd);
  }
  return buffer.toString('hex');
}
