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

describe('netlink list filters and links.move', () => {
  // netlink's own input code: ERR_NETNS_NETLINK_INVALID, as for every other bad netlink spec.
  const refused = expect.objectContaining({ name: 'NetnsError', code: 'ERR_NETNS_NETLINK_INVALID' });
  let nl: Netlink;
  afterAll(() => nl?.close());

  it('routes.list and neighbours.list refuse a filter that is not an object, as addresses.list does', async () => {
    nl = await openNetlink();
    for (const filter of [42, 'main', null]) {
      await expect(nl.routes.list(filter as never)).rejects.toEqual(refused);
      await expect(nl.neighbours.list(filter as never)).rejects.toEqual(refused);
      await expect(nl.addresses.list(filter as never)).rejects.toEqual(refused);
    }
  });

  it('links.move with no namespace to move to is refused, not a TypeError', async () => {
    await expect(nl.links.move('lo', undefined as never)).rejects.toEqual(refused);
    await expect((nl.links.move as (...args: unknown[]) => Promise<void>)(42)).rejects.toEqual(refused);
  });
});

describe('ResultCache', () => {
  it.each([42, undefined, '', 'a\0b'])('refuses dir %s', (dir) => {
    expect(() => new ResultCache(dir as never)).toThrow(invalid);
  });
});
