// Who owns the fate of a task sent to a worker: the worker moves its claim
// from open to started before running it, the pool from open to revoked to
// take it back (abort, close, or to move it to another worker). Whoever wins
// the compare-and-swap decides; the other side keeps off.
//
// Each worker has one ring of shared words, made once: a task's ticket picks
// its word, and the word also records the ticket, so a stale message naming
// a ticket whose word was reused can never claim it. A worker only gets a
// batch once every task sent to it before has settled or been taken back, so
// a ring larger than a batch is never short of words.

/** Words in a worker's ring; larger than the largest batch. */
export const CLAIM_RING_WORDS = 1024;

const OPEN = 0;
const STARTED = 1;
const REVOKED = 2;
const TICKET_SPACE = 2 ** 28; // ticket * 4 + state stays a positive int32

function slot(ticket: number): number {
  return ticket % CLAIM_RING_WORDS;
}

function word(ticket: number, state: number): number {
  return (ticket % TICKET_SPACE) * 4 + state;
}

export function newClaimRing(): Int32Array {
  return new Int32Array(new SharedArrayBuffer(CLAIM_RING_WORDS * 4));
}

/** The pool, before it sends the task. */
export function openClaim(ring: Int32Array, ticket: number): void {
  Atomics.store(ring, slot(ticket), word(ticket, OPEN));
}

export function isOpen(ring: Int32Array, ticket: number): boolean {
  return Atomics.load(ring, slot(ticket)) === word(ticket, OPEN);
}

function settleClaim(ring: Int32Array, ticket: number, state: number): boolean {
  return Atomics.compareExchange(ring, slot(ticket), word(ticket, OPEN), word(ticket, state)) === word(ticket, OPEN);
}

/** The worker, before it runs the task: false if the pool took it back. */
export function startClaim(ring: Int32Array, ticket: number): boolean {
  return settleClaim(ring, ticket, STARTED);
}

/** The pool, taking a task back: false if the worker has started it. */
export function revokeClaim(ring: Int32Array, ticket: number): boolean {
  return settleClaim(ring, ticket, REVOKED);
}
