// netns/testing rejects with NetnsErrors only, each with a stable code.
import { describe, expect, it } from 'vitest';
import { NetnsError } from '../../dist/index.js';
import { createTestNetwork } from '../../dist/testing.js';
import { privileged } from '../helpers/privileges.js';

describe.skipIf(!privileged)('fixture errors', () => {
  it('a netlink operation the kernel refuses is a NetnsError ERR_NETNS_FIXTURE naming it and the netlink error', async () => {
    // Well-formed, so the spec passes; the kernel refuses a multicast address on a link.
    const error = await createTestNetwork({ hosts: { a: { addr: 'ff02::1/64' }, b: {} }, links: [['a', 'b']] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NetnsError);
    expect(error).toMatchObject({ name: 'NetnsError', code: 'ERR_NETNS_FIXTURE', message: expect.stringMatching(/^addr add ff02::1\/64 dev eth0 in \S+ failed: .+/) });
    expect((error as Error).cause).toBeInstanceOf(NetnsError);
  });

  it.each([
    ['a link from a host to itself', { hosts: { a: {} }, links: [['a', 'a']] }],
    ['a malformed address (refused before anything is made, not half-way)', { hosts: { a: { addr: '10.10.0.300/24' }, b: {} }, links: [['a', 'b']] }],
  ])('%s is a NetnsError ERR_NETNS_INVALID_ARG', async (_what, spec) => {
    const error = await createTestNetwork(spec as never).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NetnsError);
    expect(error).toMatchObject({ code: 'ERR_NETNS_INVALID_ARG' });
  });
});
