// Names derived from hashes (attachment keys, host veth names, address set
// names) must not change when the hash implementation does: src/core/hashes.ts
// (@noble/hashes) gives what node:crypto gives, text hashed as UTF-8.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { sha256Hex, sha512Hex } from '../../src/core/hashes.js';

const INPUTS = [
  '',
  'a',
  'abc',
  'bench-net:eth0:0123456789abcdef',
  'x'.repeat(55), // one SHA-256 block with its padding, then two
  'x'.repeat(56),
  'x'.repeat(64),
  'y'.repeat(111), // the same edges for SHA-512's 128-byte block
  'y'.repeat(112),
  'z'.repeat(1000),
  'netzwerk-\u00fc\u00df-\u7f51\u7edc-\u{1f600}', // two-, three- and four-byte UTF-8
  'lone \ud800 surrogate \udfff', // each hashed as U+FFFD, as node:crypto does
  '\u0000nul\u0000',
];

describe('sha256Hex and sha512Hex', () => {
  it.each(INPUTS.map((text) => [JSON.stringify(text).slice(0, 40), text]))('match node:crypto for %s', (_, text) => {
    expect(sha256Hex(text)).toBe(createHash('sha256').update(text).digest('hex'));
    expect(sha512Hex(text)).toBe(createHash('sha512').update(text).digest('hex'));
  });
});
