// SHA-2 digests of text, as lowercase hex: @noble/hashes rather than
// node:crypto, whose load (about 3 ms, with OpenSSL's initialisation) a
// one-command CNI plugin would otherwise pay for a few short hashes. Text is
// hashed as UTF-8, a lone surrogate as U+FFFD, as node:crypto's update(text).
import { sha256, sha512 } from '@noble/hashes/sha2.js';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js';

/** sha256 of `text`'s UTF-8, as 64 hex digits. */
export const sha256Hex = (text: string): string => bytesToHex(sha256(utf8ToBytes(text)));

/** sha512 of `text`'s UTF-8, as 128 hex digits. */
export const sha512Hex = (text: string): string => bytesToHex(sha512(utf8ToBytes(text)));
