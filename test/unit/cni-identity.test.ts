// The host veth's alias: whole enough for GC to read the attachment back
// (container id and ifname) and release its IPAM allocation.
import { describe, expect, it } from 'vitest';
import { attachmentKey, attachmentOf, hostAlias, keyOfTag, masqueradeComment, networkTagPrefix } from '../../dist/cni/identity.js';

const ID = 'f'.repeat(64);

describe('host aliases', () => {
  it('keep a 64-character container id and the ifname whole, the network last, within 255 bytes', () => {
    const attachment = { containerID: ID, ifname: 'eth0' };
    const network = 'n'.repeat(300);
    const alias = hostAlias(network, attachment);
    expect(alias).toHaveLength(255);
    expect(alias.startsWith(`${attachmentKey(network, attachment)}, if:eth0, id:${ID}, net:nnn`)).toBe(true);
    expect(attachmentOf(network, alias)).toEqual(attachment);
  });

  it('read back escaped names', () => {
    const attachment = { containerID: 'c 1;rm,%x', ifname: 'é0' };
    expect(hostAlias('net, 1', attachment)).toMatch(/^[0-9a-f]{16}-[0-9a-f]{16}, if:%c3%a90, id:c%201%3brm%2c%25x, net:net%2c%201$/);
    expect(attachmentOf('net, 1', hostAlias('net, 1', attachment))).toEqual(attachment);
  });

  it('name no attachment when cut short, or of another network', () => {
    const attachment = { containerID: ID, ifname: 'eth0' };
    const network = `net-${'x'.repeat(40)}`;
    // The masquerade tag (128 bytes, the network first) cuts such an id: what aliases were before.
    expect(attachmentOf(network, masqueradeComment(network, attachment))).toBeUndefined();
    expect(attachmentOf(network, hostAlias(network, attachment).slice(0, 100))).toBeUndefined();
    expect(attachmentOf(network, hostAlias(network, { containerID: '%41', ifname: 'eth0' }).replace('%2541', '%4'))).toBeUndefined();
    expect(attachmentOf('other', hostAlias(network, attachment))).toBeUndefined();
    expect(attachmentOf(network, undefined)).toBeUndefined();
  });

  it('read a null alias (as parsed JSON has it) as none, and refuse a tag or network of the wrong type with a coded error', () => {
    expect(attachmentOf('net', null)).toBeUndefined();
    expect(keyOfTag('net', null)).toBeUndefined();
    for (const call of [() => keyOfTag('net', 42 as never), () => attachmentOf('net', {} as never), () => networkTagPrefix(10n as never)]) {
      expect(call).toThrow(expect.objectContaining({ name: 'NetnsError', code: 'ERR_NETNS_INVALID_ARG' }));
    }
  });
});
