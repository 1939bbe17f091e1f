// An impairment as a user writes it (tc's units: "10mbit", "20ms", percent)
// and as the kernel gets it (bytes per second, microseconds): the exact
// conversions, the exact limits (the largest accepted, the next refused), and
// the text a listing prints. Pure: no kernel, no namespace.
import { describe, expect, it } from 'vitest';
import { checkImpairment, describeImpairment, toKernelUnits } from '../../src/testing/lab/units.js';

const kernel = (impairment: object) => toKernelUnits(impairment, 'link a-b');
const refused = (text: string) => expect.objectContaining({ code: 'ERR_NETNS_INVALID_ARG', message: expect.stringContaining(text) });
const RATE_UNITS = 'bit, kbit, mbit, gbit, tbit, bps, kbps, mbps, gbps';

describe('rates: bits per second or tc text, to bytes per second', () => {
  it('reads every tc unit: "bit" units are bits, "bps" units are bytes', () => {
    const rates: [string, number][] = [
      ['800bit', 100], ['512kbit', 64_000], ['10mbit', 1_250_000], ['1gbit', 125_000_000], ['0.002tbit', 250_000_000],
      ['100bps', 100], ['100kbps', 100_000], ['3mbps', 3_000_000], ['2gbps', 2_000_000_000],
    ];
    for (const [rate, bytes] of rates) expect(kernel({ rate }), rate).toEqual({ rateBytes: bytes });
  });

  it('takes a decimal, any case and surrounding blanks', () => {
    expect(kernel({ rate: '1.25mbit' })).toEqual({ rateBytes: 156_250 });
    expect(kernel({ rate: ' 10MBit\t' })).toEqual({ rateBytes: 1_250_000 });
    expect(kernel({ rate: 8000 })).toEqual({ rateBytes: 1000 });
  });

  it('refuses text that is not one number and one known unit, naming the units', () => {
    for (const rate of ['10', 'mbit', '10 furlongs', '10furlongs', '10constructor', 'x10mbit', '10mbit5', '1.mbit', '.5mbit', '-1mbit', '1e3bit']) {
      expect(() => kernel({ rate }), rate).toThrow(refused(`rate of link a-b must be a number (bits per second) or text with a unit (${RATE_UNITS}), got ${JSON.stringify(rate)}`));
    }
  });

  it('refuses a number that is no rate, saying what it got', () => {
    expect(() => kernel({ rate: -8 })).toThrow(refused('got -8'));
    expect(() => kernel({ rate: Infinity })).toThrow(refused(`or text with a unit (${RATE_UNITS}), got Infinity`));
    expect(() => kernel({ rate: NaN })).toThrow(refused('got NaN'));
    expect(() => kernel({ rate: true })).toThrow(refused('got true'));
    expect(() => kernel({ rate: () => 1 })).toThrow(refused('got function'));
    // What the types omit but JavaScript passes: refused with the code, never a TypeError from JSON.
    expect(() => kernel({ rate: 10n })).toThrow(refused('got 10'));
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    expect(() => kernel({ rate: circular })).toThrow(refused('got object'));
  });

  it('takes from 1 byte a second (rounded) up to the 32-bit field of tbf, and no further', () => {
    expect(kernel({ rate: 8 })).toEqual({ rateBytes: 1 });
    expect(kernel({ rate: 4 })).toEqual({ rateBytes: 1 }); // half a byte rounds up
    expect(() => kernel({ rate: 3 })).toThrow(refused('rate of link a-b must be from 8bit to 34.35973836gbit, got 3'));
    expect(() => kernel({ rate: 0 })).toThrow(refused('must be from 8bit'));
    expect(kernel({ rate: (2 ** 32 - 1) * 8 })).toEqual({ rateBytes: 2 ** 32 - 1 });
    expect(() => kernel({ rate: 2 ** 32 * 8 })).toThrow(refused('must be from 8bit to 34.35973836gbit'));
    expect(() => kernel({ rate: '1tbit' })).toThrow(refused('got "1tbit"'));
  });
});

describe('delay and jitter: milliseconds or tc text, to microseconds', () => {
  it('reads every time unit', () => {
    const times: [string | number, number][] = [['500us', 500], ['500usec', 500], ['20ms', 20_000], ['20msec', 20_000], ['2s', 2_000_000], ['2sec', 2_000_000], [1.5, 1500], [0, 0], ['1.6us', 2]];
    for (const [delay, us] of times) expect(kernel({ delay }), String(delay)).toEqual({ delayUs: us });
  });

  it('takes up to an hour, and refuses more', () => {
    expect(kernel({ delay: 3_600_000 })).toEqual({ delayUs: 3_600_000_000 });
    expect(kernel({ delay: '3600s' })).toEqual({ delayUs: 3_600_000_000 });
    expect(() => kernel({ delay: 3_600_001 })).toThrow(refused('delay of link a-b must be at most an hour, got 3600001'));
    expect(() => kernel({ delay: '3601sec' })).toThrow(refused('must be at most an hour, got "3601sec"'));
  });

  it('refuses a time without a time unit, naming the units', () => {
    expect(() => kernel({ delay: '20mbit' })).toThrow(refused('delay of link a-b must be a number (milliseconds) or text with a unit (us, usec, ms, msec, s, sec), got "20mbit"'));
    expect(() => kernel({ delay: -1 })).toThrow(refused('got -1'));
    expect(() => kernel({ delay: '5ms', jitter: null })).toThrow(refused('jitter of link a-b must be a number (milliseconds)'));
  });

  it('takes jitter only around a delay', () => {
    expect(kernel({ delay: '20ms', jitter: '5ms' })).toEqual({ delayUs: 20_000, jitterUs: 5000 });
    expect(() => kernel({ jitter: '5ms' })).toThrow(refused('jitter of link a-b needs a delay to vary around'));
    expect(kernel({ delay: 0, jitter: 0 })).toEqual({ delayUs: 0, jitterUs: 0 });
  });
});

describe('loss and duplicate: percent from 0 to 100', () => {
  it('takes 0 and 100 and anything between', () => {
    expect(kernel({ loss: 0, duplicate: 100 })).toEqual({ loss: 0, duplicate: 100 });
    expect(kernel({ loss: 0.5 })).toEqual({ loss: 0.5 });
  });

  it('refuses anything else, naming the field', () => {
    for (const [loss, shown] of [[-0.1, '-0.1'], [100.1, '100.1'], [NaN, 'NaN'], [Infinity, 'Infinity'], ['5', '"5"'], [Symbol('x'), 'symbol']] as [unknown, string][]) {
      expect(() => kernel({ loss }), shown).toThrow(refused(`loss of link a-b must be a percent from 0 to 100, got ${shown}`));
    }
    expect(() => kernel({ duplicate: 101 })).toThrow(refused('duplicate of link a-b must be a percent from 0 to 100, got 101'));
  });
});

describe('every field together, and none', () => {
  it('converts each field it is given and adds none', () => {
    expect(kernel({})).toEqual({});
    expect(kernel({ rate: '1mbit', delay: '10ms', jitter: '1ms', loss: 1, duplicate: 2 })).toEqual({ rateBytes: 125_000, delayUs: 10_000, jitterUs: 1000, loss: 1, duplicate: 2 });
    expect(kernel({ rate: undefined, loss: 3 })).toEqual({ loss: 3 });
  });
});

describe('checkImpairment: the impairment as given', () => {
  it('refuses what is not an object', () => {
    for (const [given, kind] of [[null, 'null'], [[], 'an array'], ['10mbit', 'string'], [undefined, 'undefined']] as [unknown, string][]) {
      expect(() => checkImpairment(given, 'link a-b, sent by a')).toThrow(refused(`impairment of link a-b, sent by a must be an object { rate, delay, jitter, loss, duplicate }, got ${kind}`));
    }
  });

  it('refuses an unknown key, suggesting the one meant', () => {
    expect(() => checkImpairment({ los: 1 }, 'x')).toThrow(refused('impairment of x: unknown key "los" (did you mean loss?); known: rate, delay, jitter, loss, duplicate'));
  });

  it('checks the values as the kernel will take them', () => {
    expect(() => checkImpairment({ jitter: '1ms' }, 'x')).toThrow(refused('jitter of x needs a delay'));
    expect(() => checkImpairment({ loss: 101 }, 'x')).toThrow(refused('loss of x must be a percent'));
  });

  it('returns the given fields as given (units kept), own properties only', () => {
    expect({ ...checkImpairment({ rate: '10mbit', delay: 20 }, 'x') }).toEqual({ rate: '10mbit', delay: 20 });
    expect({ ...checkImpairment(Object.create({ loss: 200 }), 'x') }).toEqual({});
  });
});

describe('describeImpairment: as a listing prints it', () => {
  it('gives each field with its unit, text as given, in the order given', () => {
    expect(describeImpairment({ rate: '10mbit', delay: 20, loss: 1 })).toBe('rate 10mbit, delay 20ms, loss 1%');
    expect(describeImpairment({ rate: 8000, jitter: 5, duplicate: 0.5 })).toBe('rate 8000bit, jitter 5ms, duplicate 0.5%');
    expect(describeImpairment({ delay: '1s' })).toBe('delay 1s');
  });

  it('says none when there is nothing, leaving out fields that are undefined', () => {
    expect(describeImpairment({})).toBe('none');
    expect(describeImpairment({ rate: undefined })).toBe('none');
    expect(describeImpairment({ rate: undefined, loss: 2 })).toBe('loss 2%');
  });
});
