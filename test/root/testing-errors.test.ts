// netns/testing rejects with NetnsErrors only, each with a stable code.
import { describe, expect, it } from 'vitest';
import { NetnsError } from '../../dist/index.js';
import { createTestNetwork } from '../../dist/testing.js';
import { privileged } from '../helpers/privileges.js';

describe.skipIf(!privileged)('fixture errors', () => {
  it('a netlink operation that fails is a NetnsError ERR_NETNS_FIXTURE naming it and the netlink error', async () => {
    const error = await createTestNetwork({ hosts: { a: { addr: '10.10.0.300/24' }, b: {} }, links: [['a', 'b']] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NetnsError);
    expect(error).toMatchObject({ name: 'NetnsError', code: 'ERR_NETNS_FIXTURE', message: expect.stringMatching(/^addr add 10\.10\.0\.300\/24 dev eth0 in \S+ failed: .+/) });
    expect((error as Error).cause).toMatchObject({ code: 'ERR_NETNS_NETLINK_INVALID' }); // refused before anything was sent
  });

  it('a bad spec is a NetnsError ERR_NETNS_INVALID_ARG', async () => {
    const error = await createTestNetwork({ hosts: { a: {} }, links: [['a', 'a']] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NetnsError);
    expect(error).toMatchObject({ code: 'ERR_NETNS_INVALID_ARG' });
  });
});
