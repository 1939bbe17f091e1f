// The pool's bookkeeping, each part alone: the queue's lanes and order, the
// ids functions are sent under, one abort listener per shared signal, and a
// call's claim as the pool sees it. A slip in any of these runs a call twice,
// out of order, or never; or lets a worker run fn under a stale id.
import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { newClaimRing, openClaim, startClaim } from '../../dist/run/claims.js';
import { AbortWatch } from '../../dist/run/pool/abort-watch.js';
import { FunctionRegistry } from '../../dist/run/pool/function-registry.js';
import { PendingCall } from '../../dist/run/pool/pending-call.js';
import { laneOf, TaskQueue } from '../../dist/run/pool/task-queue.js';

let nextId = 1;
function call(nested = false): PendingCall {
  const made = new PendingCall(nextId++, 1, { fd: -1, fn: { source: '() => 1', caller: null }, args: [], nested });
  made.promise.catch(() => undefined);
  return made;
}
const ids = (calls: PendingCall[]): number[] => calls.map((c) => c.id);

describe('TaskQueue', () => {
  it('keeps nested and top-level calls in lanes of their own, each first in first out', () => {
    const queue = new TaskQueue();
    const [t1, n1, t2, n2] = [call(), call(true), call(), call(true)];
    for (const c of [t1, n1, t2, n2]) queue.push(c);
    expect([laneOf(t1!), laneOf(n1!)]).toEqual(['top', 'nested']);
    expect([queue.size(), queue.size('nested'), queue.size('top')]).toEqual([4, 2, 2]);
    expect(ids(queue.take('top', 10))).toEqual(ids([t1!, t2!]));
    expect(ids(queue.take('nested', 1))).toEqual(ids([n1!]));
    expect(queue.size()).toBe(1);
  });

  it('takes at most the batch asked for, and skips calls settled while they waited', () => {
    const queue = new TaskQueue();
    const calls = Array.from({ length: 5 }, () => call());
    calls.forEach((c) => queue.push(c));
    calls[1]!.settled = true;
    expect(ids(queue.take('top', 2))).toEqual(ids([calls[0]!, calls[2]!]));
    expect(ids(queue.take('top', 10))).toEqual(ids([calls[3]!, calls[4]!]));
    expect(queue.take('top', 10)).toEqual([]);
  });

  it('puts calls taken back from a worker ahead of those waiting, in their order and lanes', () => {
    const queue = new TaskQueue();
    const waiting = [call(), call()];
    waiting.forEach((c) => queue.push(c));
    queue.take('top', 1); // waiting[0] went to a worker
    const back = [call(), call(true), call()];
    queue.returnTaken(back);
    expect(ids(queue.take('top', 10))).toEqual(ids([back[0]!, back[2]!, waiting[1]!]));
    expect(ids(queue.take('nested', 10))).toEqual(ids([back[1]!]));
  });

  it('drains nested calls first, then the rest, emptying both lanes', () => {
    const queue = new TaskQueue();
    const [t, n] = [call(), call(true)];
    queue.push(t);
    queue.push(n);
    expect(ids(queue.drain())).toEqual(ids([n, t]));
    expect(queue.size()).toBe(0);
  });

  it('keeps its order through thousands of calls taken a few at a time', () => {
    const queue = new TaskQueue();
    const calls = Array.from({ length: 5000 }, () => call());
    const taken: PendingCall[] = [];
    for (const [i, c] of calls.entries()) {
      queue.push(c);
      if (i % 3 === 2) taken.push(...queue.take('top', 2));
    }
    taken.push(...queue.take('top', Infinity));
    expect(ids(taken)).toEqual(ids(calls));
    expect(queue.size('top')).toBe(0);
  });
});

describe('FunctionRegistry', () => {
  it('gives one id per function text and caller, and per module export', () => {
    const registry = new FunctionRegistry();
    const a = registry.idOf({ source: '() => 1', caller: '/a.js' });
    expect(registry.idOf({ source: '() => 1', caller: '/a.js' })).toBe(a);
    const ids = [
      a,
      registry.idOf({ source: '() => 1', caller: '/b.js' }),
      registry.idOf({ source: '() => 1', caller: null }),
      registry.idOf({ source: '() => 2', caller: '/a.js' }),
      registry.idOf({ module: 'file:///m.js', exportName: 'run' }),
      registry.idOf({ module: 'file:///m.js', exportName: 'stop' }),
    ];
    expect(new Set(ids).size).toBe(ids.length);
    expect(registry.idOf({ module: 'file:///m.js', exportName: 'run' })).toBe(ids[4]);
  });

  it('starts over after 4096 functions without ever reusing an id a worker may still hold', () => {
    const registry = new FunctionRegistry();
    const first = registry.idOf({ source: 'f0', caller: null });
    for (let i = 1; i < 4096; i++) registry.idOf({ source: `f${i}`, caller: null });
    expect(registry.generation).toBe(0);
    expect(registry.idOf({ source: 'f0', caller: null })).toBe(first);
    const next = registry.idOf({ source: 'new', caller: null });
    expect(registry.generation).toBe(1);
    expect(next).toBe(4097);
    expect(registry.idOf({ source: 'f0', caller: null })).toBe(4098); // learned anew, under a new id
  });
});

describe('AbortWatch', () => {
  it('listens once per signal however many calls share it, and aborts each of them with it', () => {
    const aborted: [string, AbortSignal][] = [];
    const watch = new AbortWatch<string>((item, signal) => aborted.push([item, signal]));
    const controller = new AbortController();
    for (const item of ['a', 'b', 'c']) watch.add(controller.signal, item);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
    controller.abort();
    expect(aborted).toEqual([['a', controller.signal], ['b', controller.signal], ['c', controller.signal]]);
  });

  it('stops listening when the last call leaves, and only then', () => {
    const aborted: string[] = [];
    const watch = new AbortWatch<string>((item) => aborted.push(item));
    const controller = new AbortController();
    watch.add(controller.signal, 'a');
    watch.add(controller.signal, 'b');
    watch.delete(controller.signal, 'a');
    watch.delete(controller.signal, 'never added');
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
    watch.delete(controller.signal, 'b');
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    watch.delete(new AbortController().signal, 'unknown signal');
    controller.abort();
    expect(aborted).toEqual([]);
  });

  it('listens again for a signal whose calls all left and a new one came', () => {
    const aborted: string[] = [];
    const watch = new AbortWatch<string>((item) => aborted.push(item));
    const controller = new AbortController();
    watch.add(controller.signal, 'a');
    watch.delete(controller.signal, 'a');
    watch.add(controller.signal, 'b');
    controller.abort();
    expect(aborted).toEqual(['b']);
  });
});

describe('PendingCall', () => {
  it('can be taken back before it is sent, and while its worker has not started it', () => {
    const ring = newClaimRing();
    const unsent = call();
    expect(unsent.isOpen()).toBe(false);
    expect(unsent.revoke()).toBe(true);
    const sent = call();
    openClaim(ring, 5);
    sent.sentTo(ring, 5);
    expect(sent.sentAt).toBeGreaterThan(0);
    expect(sent.isOpen()).toBe(true);
    expect(sent.revoke()).toBe(true);
    expect(sent.isOpen()).toBe(false);
    expect(sent.revoke()).toBe(true); // taken back already: it is the pool's
  });

  it('cannot be taken back once its worker started it', () => {
    const ring = newClaimRing();
    const started = call();
    openClaim(ring, 9);
    started.sentTo(ring, 9);
    expect(startClaim(ring, 9)).toBe(true);
    expect(started.isOpen()).toBe(false);
    expect(started.revoke()).toBe(false);
  });
});
