// What reaches the caller when fn fails in a pool worker: its error crosses
// as plain data (serializeError), is structured-cloned, and is rebuilt on the
// calling thread (deserializeError). A caller relies on the code, the own
// properties, the cause chain and the stack arriving; and on a failure to
// describe the error becoming a coded error rather than a lost call.
import { describe, expect, it } from 'vitest';
import { NetnsError } from '../../dist/index.js';
import { ErrorCodes } from '../../dist/core/errors.js';
import { deserializeError, serializeError, unsendable } from '../../dist/run/wire.js';

const roundTrip = (thrown: unknown): Error & Record<string, unknown> =>
  deserializeError(structuredClone(serializeError(thrown))) as Error & Record<string, unknown>;

function causesOf(error: Error): number {
  let count = 0;
  for (let at: unknown = error.cause; at instanceof Error; at = at.cause) count++;
  return count;
}

describe('an Error fn threw', () => {
  it('keeps own properties a clone can carry, null included, and drops the rest', () => {
    const error = roundTrip(
      Object.assign(new Error('failed'), { code: 'EADDRINUSE', errno: -98, fatal: false, size: 10n, detail: null, socket: { fd: 3 }, hook: () => 1 }),
    );
    expect(error).toMatchObject({ code: 'EADDRINUSE', errno: -98, fatal: false, size: 10n, detail: null });
    expect('socket' in error).toBe(false);
    expect('hook' in error).toBe(false);
  });

  it('keeps the stack it had, and gets a stack of its own when it had none to send', () => {
    const thrown = new TypeError('bad');
    expect(roundTrip(thrown).stack).toBe(thrown.stack);
    const odd = new Error('stack replaced');
    Object.defineProperty(odd, 'stack', { value: 42 });
    expect(typeof roundTrip(odd).stack).toBe('string');
  });

  it('keeps a chain of four causes, and cuts a longer chain or a cycle there', () => {
    let chain = new Error('cause 6');
    for (let n = 5; n >= 0; n--) chain = new Error(n === 0 ? 'top' : `cause ${n}`, { cause: chain });
    const arrived = roundTrip(chain);
    expect(causesOf(arrived)).toBe(4);
    expect((arrived.cause as Error).message).toBe('cause 1');
    const short = roundTrip(new Error('top', { cause: new Error('one', { cause: new Error('two') }) }));
    expect(causesOf(short)).toBe(2);
    const cycle = new Error('cycle');
    cycle.cause = cycle;
    expect(causesOf(roundTrip(cycle))).toBe(4);
  });

  it('rebuilds a standard error as its class, and any other as an Error with its name', () => {
    class QuotaError extends Error {
      override name = 'QuotaError';
    }
    const custom = roundTrip(new QuotaError('over quota'));
    expect(custom).toBeInstanceOf(Error);
    expect(custom.name).toBe('QuotaError');
    expect(custom.message).toBe('over quota');
    custom.name = 'Renamed'; // an own name as a class field gives: writable, configurable
    expect(custom.name).toBe('Renamed');
    expect(delete (custom as { name?: string }).name).toBe(true);
    expect(custom.name).toBe('Error');
    expect(roundTrip(new URIError('bad uri'))).toBeInstanceOf(URIError);
  });

  it('rebuilds a NetnsError with its code, or ERR_NETNS_UNKNOWN when it lost it', () => {
    const coded = roundTrip(new NetnsError(ErrorCodes.POISONED, 'too slow'));
    expect(coded).toBeInstanceOf(NetnsError);
    expect(coded.code).toBe('ERR_NETNS_POISONED');
    const data = serializeError(new NetnsError(ErrorCodes.POISONED, 'too slow'));
    delete data.props.code;
    expect(deserializeError(data)).toMatchObject({ code: 'ERR_NETNS_UNKNOWN', message: 'too slow' });
  });

  it('passes a nested call’s thrown value on as a value, and only that error’s', () => {
    const nested = roundTrip('thrown in a nested call');
    expect(roundTrip(nested)).toMatchObject({ code: 'ERR_NETNS_NON_ERROR_THROWN', value: 'thrown in a nested call' });
    expect(roundTrip(roundTrip({ reason: ['full'] })).value).toEqual({ reason: ['full'] }); // not a property a clone keeps: sent as the value
    const other = Object.assign(new NetnsError(ErrorCodes.INVALID_ARG, 'bad'), { value: { limit: 3 } });
    expect('value' in roundTrip(other)).toBe(false);
    expect('value' in roundTrip(roundTrip(() => 1))).toBe(false); // a value that could not be cloned, nested
  });
});

describe('a value fn threw that is not an Error', () => {
  it('is named in the message, cut at 200 characters', () => {
    expect(roundTrip('x'.repeat(198)).message).toBe(`fn threw a value that is not an Error: "${'x'.repeat(198)}"`);
    expect(roundTrip('x'.repeat(300)).message).toBe(`fn threw a value that is not an Error: "${'x'.repeat(199)}…`);
  });

  it('is named by its tag when it cannot say what it is', () => {
    const value = { toString: () => { throw new Error('no text'); } };
    const error = roundTrip(Object.setPrototypeOf(value, null));
    expect(error.message).toMatch(/^fn threw a value that is not an Error: \[object Object\]/);
  });

  it('says it could not be kept when it cannot be cloned', () => {
    expect(roundTrip(() => 1).message).toMatch(/\(it cannot be cloned: not in value\)$/);
    expect(roundTrip(7).message).toBe('fn threw a value that is not an Error: 7');
  });
});

describe('an error that cannot even be described', () => {
  const hostile = (reason: unknown): unknown =>
    new Proxy({}, {
      getPrototypeOf() {
        throw reason;
      },
    });

  it('becomes ERR_NETNS_NOT_CLONEABLE saying why', () => {
    const error = roundTrip(hostile(new Error('trap fired')));
    expect(error).toBeInstanceOf(NetnsError);
    expect(error).toMatchObject({ code: 'ERR_NETNS_NOT_CLONEABLE', message: 'fn threw a value that cannot be sent back to the calling thread: trap fired' });
    expect(roundTrip(hostile('a plain reason')).message).toBe('fn threw a value that cannot be sent back to the calling thread: a plain reason');
  });

  it('still becomes that error when the reason cannot be read', () => {
    const unreadable = { toString: () => { throw new Error('nor this'); } };
    expect(unsendable('the result', unreadable).message).toBe('the result cannot be sent back to the calling thread: it could not be read');
  });
});
