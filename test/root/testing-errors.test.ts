// netns/testing rejects with NetnsErrors only, each with a stable code.
import { describe, expect, it } from 'vitest';
import { NetnsError } from '../../dist/index.js';
import { createTestNetwork } from '../../dist/testing.js';
import { privileged } from '../helpers/privileges.js';

describe.skipIf(!privileged)('fixture errors', () => {
  it('an ip command that fails is a NetnsError ERR_NETNS_FIXTURE with ip\'s own words', async () => {
    const error = await createTestNetwork({ hosts: { a: { addr: '10.10.0.300/24' }, b: {} }, links: [['a', 'b']] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NetnsError);
    expect(error).toMatchObject({ name: 'NetnsError', code: 'ERR_NETNS_FIXTURE', message: expect.stringMatching(/^ip -n \S+ addr add 10\.10\.0\.300\/24 dev eth0 failed: .+/) });
  });

  it('a bad spec is a NetnsError ERR_NETNS_INVALID_ARG', async () => {
    const error = await createTestNetwork({ hosts: { a: {} }, links: [['a', 'a']] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NetnsError);
    expect(error).toMatchObject({ code: 'ERR_NETNS_INVALID_ARG' });
  });
});
