// The host veth's alias: whole enough for GC to read the attachment back
// (container id and ifname) and release its IPAM allocation; and its name,
// derived from the same key so that it can be found before the alias is written.
import { describe, expect, it } from 'vitest';
import { attachmentKey, attachmentOf, hostAlias, hostEndNames, isHostEndNameOf, keyOfTag, leadingKey, masqueradeComment, networkTagPrefix } from '../../dist/cni/identity.js';

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

  it('name no attachment from a tag missing its if: field, whatever the key', () => {
    // Were a missing field read as the text "undefined", this key would match it.
    const key = attachmentKey('net', { containerID: 'c1', ifname: 'undefined' });
    expect(attachmentOf('net', `${key}, id:c1, net:net`)).toBeUndefined();
    expect(attachmentOf('net', `${attachmentKey('net', { containerID: 'undefined', ifname: 'eth0' })}, if:eth0, net:net`)).toBeUndefined();
  });

  it('read a null alias (as parsed JSON has it) as none, and refuse a tag or network of the wrong type with a coded error', () => {
    expect(attachmentOf('net', null)).toBeUndefined();
    expect(keyOfTag('net', null)).toBeUndefined();
    for (const call of [() => keyOfTag('net', 42 as never), () => attachmentOf('net', {} as never), () => networkTagPrefix(10n as never)]) {
      expect(call).toThrow(expect.objectContaining({ name: 'NetnsError', code: 'ERR_NETNS_INVALID_ARG' }));
    }
  });
});

describe('host end names', () => {
  const key = attachmentKey('net', { containerID: ID, ifname: 'eth0' });

  it('are 10 distinct 15-byte names, the same each time, led by the network hash, which GC recognises', () => {
    const names = hostEndNames(key);
    expect(names).toHaveLength(10);
    expect(new Set(names).size).toBe(10);
    for (const name of names) expect(name).toMatch(new RegExp(`^veth${networkTagPrefix('net').slice(0, 4)}[0-9a-f]{7}$`));
    expect(hostEndNames(key)).toEqual(names);
    expect(hostEndNames(attachmentKey('net', { containerID: ID, ifname: 'eth1' }))[0]).not.toBe(names[0]);
    expect(names.every((name) => isHostEndNameOf('net', name))).toBe(true);
    expect(isHostEndNameOf('other', names[0]!)).toBe(networkTagPrefix('other').slice(0, 4) === networkTagPrefix('net').slice(0, 4));
    expect(isHostEndNameOf('net', 'veth0123abcd')).toBe(false);
  });

  it('come from the key an alias starts with, whichever network it is', () => {
    expect(leadingKey(hostAlias('net', { containerID: ID, ifname: 'eth0' }))).toBe(key);
    expect(leadingKey(key)).toBe(key);
    expect(leadingKey(`${key}x`)).toBeUndefined();
    expect(leadingKey("a user's alias")).toBeUndefined();
    expect(() => hostEndNames('not a key')).toThrow(expect.objectContaining({ code: 'ERR_NETNS_INVALID_ARG' }));
    expect(leadingKey(`0${key}`)).toBeUndefined(); // only at the start
    expect(leadingKey(`${key}, if:eth0`)).toBe(key);
  });

  it('are refused for anything but a whole key, by message', () => {
    const message = 'hostEndNames: key must be an attachment key (attachmentKey)';
    for (const bad of [`${key}0`, `0${key}`, key.toUpperCase(), 7]) expect(() => hostEndNames(bad as never), String(bad)).toThrow(expect.objectContaining({ code: 'ERR_NETNS_INVALID_ARG', message }));
    // Something that only prints as a key is not one.
    expect(() => hostEndNames({ toString: () => key } as never)).toThrow(expect.objectContaining({ code: 'ERR_NETNS_INVALID_ARG', message }));
  });
});

describe('names given to the identity functions', () => {
  it('are refused when empty or not strings, saying which and what came', () => {
    const refused = (message: string) => expect.objectContaining({ code: 'ERR_NETNS_INVALID_ARG', message });
    expect(() => attachmentKey('net', { containerID: '', ifname: 'eth0' })).toThrow(refused('containerID must be a non-empty string, got an empty string'));
    expect(() => attachmentKey('net', { containerID: 'c', ifname: 7 as never })).toThrow(refused('ifname must be a non-empty string, got number'));
    expect(() => networkTagPrefix('')).toThrow(refused('network must be a non-empty string, got an empty string'));
    expect(() => keyOfTag('net', 42 as never)).toThrow(refused("keyOfTag: tag must be a string (a link's alias), got number"));
  });

  it('escape a control character in an alias as two hex digits, and read it back', () => {
    const attachment = { containerID: 'c\u0001d', ifname: 'eth0' };
    const alias = hostAlias('net', attachment);
    expect(alias).toContain(', id:c%01d,');
    expect(attachmentOf('net', alias)).toEqual(attachment);
  });
});
