// Address text in and out of the netlink layer: IPv4 is matched by its own
// expression (for speed), so it must accept exactly what ipaddr.js's strict
// four-part check accepts; IPv6 goes through ipaddr.js and comes back in RFC
// 5952 form.
import ipaddr from 'ipaddr.js';
import { describe, expect, it } from 'vitest';
import { formatAddress, parseAddress, parsePrefix } from '../../dist/netlink/validate.js';

const accepts = (text: string): boolean => {
  try {
    parseAddress(text);
    return true;
  } catch {
    return false;
  }
};

describe('IPv4 text', () => {
  it('accepts dotted quads and nothing else: no leading zeros, octal, hex, short forms or spaces', () => {
    for (const good of ['0.0.0.0', '10.0.0.1', '255.255.255.255', '192.168.100.9', '1.22.199.250']) expect(accepts(good), good).toBe(true);
    for (const bad of ['01.2.3.4', '1.2.3.04', '0x1.2.3.4', '1.2.3', '1.2.3.4.5', '256.1.1.1', '1.2.3.4 ', ' 1.2.3.4', '1.2.3.4\n', '1..3.4', '-1.2.3.4', '１.2.3.4', '']) {
      expect(accepts(bad), JSON.stringify(bad)).toBe(false);
    }
  });

  it('agrees with ipaddr.js isValidFourPartDecimal on 20,000 generated strings', () => {
    const pieces = ['0', '00', '1', '01', '9', '10', '99', '100', '199', '200', '249', '250', '255', '256', '300', '999', '0x1', '', ' 1', 'a'];
    let seed = 1;
    const next = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) % pieces.length;
    for (let i = 0; i < 20_000; i++) {
      const parts = Array.from({ length: 3 + (i % 3) }, () => pieces[next()]!);
      const text = parts.join('.');
      expect(accepts(text), text).toBe(ipaddr.IPv4.isValidFourPartDecimal(text));
    }
  });

  it('gives the four bytes and the text as given; a prefix keeps its length', () => {
    expect(parseAddress('10.1.200.3')).toEqual({ family: 2, bytes: Buffer.from([10, 1, 200, 3]), text: '10.1.200.3' });
    expect(parsePrefix('10.1.0.0/16')).toEqual({ family: 2, bytes: Buffer.from([10, 1, 0, 0]), text: '10.1.0.0', prefixLength: 16 });
    expect(parsePrefix('10.1.0.7')).toMatchObject({ prefixLength: 32 });
    expect(formatAddress(Buffer.from([192, 168, 0, 255]))).toBe('192.168.0.255');
  });
});

describe('IPv6 text', () => {
  it('is parsed by ipaddr.js and printed in RFC 5952 form; zones are refused', () => {
    expect(parseAddress('FD00:0:0:0:0:0:0:1')).toMatchObject({ family: 10, text: 'fd00::1' });
    expect(formatAddress(Buffer.from('20010db8000000000001000000000001', 'hex'))).toBe('2001:db8::1:0:0:1');
    expect(accepts('fe80::1%eth0')).toBe(false);
  });

  it('an IPv4 tail means what inet_pton reads: "::10.0.0.1" is not "::ffff:10.0.0.1"; a tail that is not a dotted quad is refused', () => {
    expect(parseAddress('::10.0.0.1').bytes.toString('hex')).toBe('0000000000000000000000000a000001');
    expect(parseAddress('::ffff:10.0.0.1').bytes.toString('hex')).toBe('00000000000000000000ffff0a000001');
    expect(parseAddress('64:ff9b::10.0.0.1').bytes.toString('hex')).toBe('0064ff9b00000000000000000a000001');
    for (const bad of ['::ffff:010.0.0.1', '::ffff:0x0a.0.0.1', '64:ff9b::010.0.0.1', '::ffff:1.2.3', '::ffff:1.2.3.4.5']) expect(accepts(bad), bad).toBe(false);
  });

  it('prints an IPv4 tail as inet_ntop (and ip) does: mapped and compatible addresses only', () => {
    const text = (hex: string) => formatAddress(Buffer.from(hex, 'hex'));
    expect(text('00000000000000000000ffff0a000001')).toBe('::ffff:10.0.0.1');
    expect(text('0000000000000000000000000a000001')).toBe('::10.0.0.1');
    expect(text('00000000000000000000ffff00000000')).toBe('::ffff:0.0.0.0');
    expect(text('00000000000000000000000000000001')).toBe('::1');
    expect(text('00000000000000000000000000000100')).toBe('::100');
    expect(text('0064ff9b00000000000000000a000001')).toBe('64:ff9b::a00:1');
  });
});
