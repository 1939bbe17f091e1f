// netns/cni/plumbing's argument checks: a plugin author's slip is
// ERR_NETNS_INVALID_ARG naming the function, the argument and what it got,
// before anything is opened or changed.
import { describe, expect, it } from 'vitest';
import { checkArray, checkAttachment, checkNetlink, checkObject, checkResult, checkString } from '../../dist/cni/arg-checks.js';
import { NetNS } from '../../dist/index.js';

const refused = (message: string) => expect.objectContaining({ code: 'ERR_NETNS_INVALID_ARG', message });

describe('the argument checks of netns/cni/plumbing', () => {
  it('takes a non-empty string, and names anything else', () => {
    expect(() => checkString('fn', 'name', 'x')).not.toThrow();
    expect(() => checkString('fn', 'name', '')).toThrow(refused('fn: name must be a non-empty string, got string'));
    expect(() => checkString('fn', 'name', 7)).toThrow(refused('fn: name must be a non-empty string, got number'));
  });

  it('takes a plain object, not null nor an array', () => {
    expect(() => checkObject('fn', 'o', {})).not.toThrow();
    expect(() => checkObject('fn', 'o', null)).toThrow(refused('fn: o must be an object, got null'));
    expect(() => checkObject('fn', 'o', [])).toThrow(refused('fn: o must be an object, got an array'));
    expect(() => checkObject('fn', 'o', 'x')).toThrow(refused('fn: o must be an object, got string'));
  });

  it('takes an array', () => {
    expect(() => checkArray('fn', 'a', [])).not.toThrow();
    expect(() => checkArray('fn', 'a', {})).toThrow(refused('fn: a must be an array, got object'));
  });

  it("checks a result's lists where they are given", () => {
    expect(() => checkResult('fn', { cniVersion: '1.1.0' })).not.toThrow();
    expect(() => checkResult('fn', { ips: [], interfaces: [], routes: [] })).not.toThrow();
    for (const field of ['ips', 'interfaces', 'routes']) expect(() => checkResult('fn', { [field]: 1 }), field).toThrow(refused(`fn: result.${field} must be an array, got number`));
    expect(() => checkResult('fn', 'r')).toThrow(refused('fn: result must be an object, got string'));
  });

  it('checks each string of an attachment by its name', () => {
    const ok = { network: 'n', containerId: 'c', ifname: 'eth0' };
    expect(() => checkAttachment('fn', ok)).not.toThrow();
    expect(() => checkAttachment('fn', null)).toThrow(refused('fn: attachment must be an object, got null'));
    for (const key of ['network', 'containerId', 'ifname']) {
      expect(() => checkAttachment('fn', { ...ok, [key]: '' }), key).toThrow(refused(`fn: attachment.${key} must be a non-empty string, got string`));
    }
  });

  it('tells a NetNS given for a Netlink how to open one', () => {
    const ns = NetNS.current();
    try {
      expect(() => checkNetlink('fn', ns)).toThrow(refused('fn: nl must be a Netlink from openNetlink(), got a NetNS (open one with openNetlink(ns))'));
      expect(() => checkNetlink('fn', {})).toThrow(refused('fn: nl must be a Netlink from openNetlink(), got object'));
    } finally {
      ns.close();
    }
  });
});
