// Options objects of netns/netlink and netns/cni/testing are checked, not
// half-read: a number or an unknown or mistyped option is refused with
// ERR_NETNS_INVALID_ARG. openNetlink() with no target needs no privileges.
import { afterAll, describe, expect, it } from 'vitest';
import { ResultCache } from '../../dist/cni/testing/index.js';
import { openNetlink, type Netlink } from '../../dist/netlink/index.js';

const invalid = expect.objectContaining({ name: 'NetnsError', code: 'ERR_NETNS_INVALID_ARG' });

describe('nl.watch options', () => {
  let nl: Netlink;
  afterAll(() => nl?.close());

  it.each([
    ['a number', 42],
    ['null', null],
    ['a string', 'links'],
    ['an option it does not have', { link: true }],
    ['an option that is not a boolean', { links: 'yes' }],
  ])('refuses %s', async (_what, options) => {
    nl ??= await openNetlink();
    await expect(nl.watch(options as never)).rejects.toEqual(invalid);
  });

  it('still takes no options, and booleans', async () => {
    nl ??= await openNetlink();
    for (const options of [undefined, {}, { links: true, existing: false }]) {
      const watcher = await nl.watch(options);
      watcher.destroy();
    }
  });
});

describe('ResultCache', () => {
  it.each([42, undefined, '', 'a\0b'])('refuses dir %s', (dir) => {
    expect(() => new ResultCache(dir as never)).toThrow(invalid);
  });
});
