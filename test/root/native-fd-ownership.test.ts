// Every descriptor the addon opens is owned until it reaches JavaScript: a
// result object that cannot be built must not leak what was opened for it.
import { describe, expect, it } from 'vitest';
import { native } from '../../dist/core/native.js';
import { openFdCount } from '../helpers/process-state.js';
import { SetterError, withThrowingSetter } from '../helpers/throwing-setter.js';

describe('native descriptor ownership', () => {
  it('openNetns closes the namespace descriptor when its result cannot be built', () => {
    const before = openFdCount();
    expect(() => withThrowingSetter('fd', () => native().openNetns('/proc/self/ns/net'))).toThrow(SetterError);
    expect(openFdCount()).toBe(before);
  });

  it('pipe closes both ends when its result cannot be built', () => {
    const before = openFdCount();
    expect(() => withThrowingSetter('write', () => native().pipe())).toThrow(SetterError);
    expect(openFdCount()).toBe(before);
  });

  it('still hands both results over when nothing throws', () => {
    const before = openFdCount();
    const { fd } = native().openNetns('/proc/self/ns/net');
    const ends = native().pipe();
    expect(openFdCount()).toBe(before + 3);
    for (const owned of [fd, ends.read, ends.write]) native().closeFd(owned);
    expect(openFdCount()).toBe(before);
  });
});
