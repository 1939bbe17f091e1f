// A task sent to a pool worker is claimed by exactly one side: the worker
// that starts it or the pool that takes it back (abort, close, a move to
// another worker). If both could win, a call would run twice or run after its
// caller was told it was cancelled.
import { describe, expect, it } from 'vitest';
import { CLAIM_RING_WORDS, isOpen, newClaimRing, openClaim, revokeClaim, startClaim } from '../../dist/run/claims.js';

describe('task claims', () => {
  it('lets the worker start an open task once, and then the pool cannot take it back', () => {
    const ring = newClaimRing();
    openClaim(ring, 7);
    expect(isOpen(ring, 7)).toBe(true);
    expect(startClaim(ring, 7)).toBe(true);
    expect(isOpen(ring, 7)).toBe(false);
    expect(startClaim(ring, 7)).toBe(false);
    expect(revokeClaim(ring, 7)).toBe(false);
  });

  it('lets the pool take an open task back once, and then the worker cannot start it', () => {
    const ring = newClaimRing();
    openClaim(ring, 8);
    expect(revokeClaim(ring, 8)).toBe(true);
    expect(isOpen(ring, 8)).toBe(false);
    expect(revokeClaim(ring, 8)).toBe(false);
    expect(startClaim(ring, 8)).toBe(false);
  });

  it('never lets a stale ticket claim the word a later ticket reuses', () => {
    const ring = newClaimRing();
    const stale = 3;
    const reusing = stale + CLAIM_RING_WORDS; // same word of the ring
    openClaim(ring, stale);
    openClaim(ring, reusing);
    expect(isOpen(ring, stale)).toBe(false);
    expect(startClaim(ring, stale)).toBe(false);
    expect(revokeClaim(ring, stale)).toBe(false);
    expect(isOpen(ring, reusing)).toBe(true);
    expect(startClaim(ring, reusing)).toBe(true);
  });

  it('keeps neighbouring tickets apart', () => {
    const ring = newClaimRing();
    openClaim(ring, 1);
    openClaim(ring, 2);
    expect(startClaim(ring, 1)).toBe(true);
    expect(isOpen(ring, 2)).toBe(true);
    expect(revokeClaim(ring, 2)).toBe(true);
  });

  it('has a word per ticket in a batch, shared between threads', () => {
    const ring = newClaimRing();
    expect(ring.length).toBe(CLAIM_RING_WORDS);
    expect(ring.buffer).toBeInstanceOf(SharedArrayBuffer);
    expect(CLAIM_RING_WORDS).toBeGreaterThan(256); // MAX_BATCH
  });

  it('still claims after billions of tickets, where ticket * 4 would overflow an int32', () => {
    const ring = newClaimRing();
    for (const ticket of [2 ** 29 + 5, 2 ** 31 + 6, Number.MAX_SAFE_INTEGER - 1]) {
      openClaim(ring, ticket);
      expect(isOpen(ring, ticket)).toBe(true);
      expect(startClaim(ring, ticket)).toBe(true);
      expect(revokeClaim(ring, ticket)).toBe(false);
    }
  });
});
