// { parentDeathSignal } is checked before anything is opened or started, so
// a bad value needs no privileges to be refused, and leaves no descriptor.
import { afterAll, describe, expect, it } from 'vitest';
import { NetNS } from '../../dist/index.js';
import { openFdCount } from '../helpers/process-state.js';

const invalid = expect.objectContaining({ code: 'ERR_NETNS_INVALID_ARG', message: expect.stringContaining('parentDeathSignal') });

describe('spawn and execFile check { parentDeathSignal }', () => {
  const ns = NetNS.current();
  afterAll(() => ns.close());

  it("refuses what is not one of this system's signal names, and leaves nothing open", async () => {
    const before = openFdCount();
    // 'SIGBREAK' and 'SIGINFO' are NodeJS.Signals elsewhere, not on Linux
    for (const parentDeathSignal of ['SIGNOPE', 'sigterm', 'KILL', '', 'SIGBREAK', 'SIGINFO', 9, null, {}, Object.create(null), ['SIGKILL'], Symbol('SIGKILL')]) {
      const options = { parentDeathSignal } as object;
      expect(() => ns.spawn('true', [], options)).toThrow(invalid);
      await expect(ns.execFile('true', [], options)).rejects.toEqual(invalid);
    }
    expect(openFdCount()).toBe(before);
  });

  it('takes nothing from a polluted Object.prototype', async () => {
    const proto = Object.prototype as { parentDeathSignal?: unknown };
    proto.parentDeathSignal = 'SIGNOPE';
    let child;
    try {
      child = ns.spawn('true', [], { stdio: 'ignore' });
    } finally {
      delete proto.parentDeathSignal;
    }
    child.on('error', () => {}); // without privileges the switch fails: not what this checks
    await new Promise((resolve) => child.once('close', resolve)); // not once(): it rejects at that 'error'
  });
});
