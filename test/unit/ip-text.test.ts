// src/core/ip.ts answers as node:net's isIP, isIPv4 and isIPv6 do (it exists
// so that a CNI plugin need not load node:net): a corpus of tricky inputs,
// then many generated near-addresses.
import * as net from 'node:net';
import { describe, expect, it } from 'vitest';
import { isIP, isIPv4, isIPv6 } from '../../src/core/ip.js';

const CORPUS = [
  '', ' ', '1.2.3.4', ' 1.2.3.4', '1.2.3.4 ', '1.2.3.4\n', '0.0.0.0', '255.255.255.255', '256.1.1.1', '1.2.3', '1.2.3.4.5', '1..2.3',
  '01.2.3.4', '1.2.3.04', '00.0.0.0', '0x1.2.3.4', '0x7f.0.0.1', '1.2.3.0x4', '017.0.0.1', '4294967295', '127.1', '1.2.3.4/24', '1.2.3.4%eth0',
  '::', ':', ':::', '::1', '1::', '1:2:3:4:5:6:7:8', '1:2:3:4:5:6:7:8:9', '1:2:3:4:5:6:7::', '::2:3:4:5:6:7:8', '::1:2:3:4:5:6:7:8', '1::2::3',
  '12345::', '01234::', '0000::', 'fFfF::', 'g::', '1:2:3:4:5:6:7', ':1:2:3:4:5:6:7', '1:2:3:4:5:6:7:', '0x1::', '::0x1',
  '::ffff:1.2.3.4', '::ffff:01.2.3.4', '::ffff:0x1.2.3.4', '::ffff:1.2.3', '::ffff:256.2.3.4', '::1.2.3.4', '1:2:3:4:5:6:1.2.3.4', '1:2:3:4:5:6:7:1.2.3.4',
  '1:2:3:4:5::1.2.3.4', '1::2:3:4:5:6:1.2.3.4', '::1.2.3.4:1', '1.2.3.4::', 'fe80::1%eth0', 'fe80::1%', 'fe80::1%eth-0', 'fe80::1%eth.0', 'fe80::1%a:b',
  'fe80::1%eth_0', 'fe80::1%%', 'fe80::1%eth0%1', 'fe80::1%e th0', 'fe80::1%\u00e9', '::1.2.3.4%lo', '[::1]', '::1/128', '::1 ', '1:2:3:4:5:6:7:8%x',
  '\u0661.2.3.4', '1.2.3.\uff14', 'ffff::ffff:ffff:ffff:ffff:ffff:ffff', 'ffff::ffff:ffff:ffff:ffff:ffff:ffff:ffff', '::ffff:ffff:ffff:ffff:ffff:ffff:ffff',
];

const pick = <T>(list: readonly T[], random: () => number): T => list[Math.floor(random() * list.length)]!;

/** Near-addresses: groups of 0 to 5 hex digits (some 0x, some dotted quads, some bad), joined by : and ::, some with a zone. */
function generated(count: number): string[] {
  let seed = 0x2545f491;
  const random = (): number => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32);
  const group = (): string =>
    random() < 0.8 ? pick(['0', '1', 'ff', 'FfF', 'abcd', '0abc', '1.2.3.4'], random) : pick(['', '12345', '0x1', 'g', '01.2.3.4', '255.255.255.255', '256.0.0.1', '1.2.3'], random);
  const zone = (): string => pick(['', '', '', '%eth0', '%1', '%a-b.c:d', '%', '%a_b', '%a b'], random);
  return Array.from({ length: count }, () => {
    const groups = Array.from({ length: Math.floor(random() * 10) }, group);
    return groups.map((g, i) => (i === 0 ? g : pick([':', ':', ':', ':', ':', ':', '::', '::', '.'], random) + g)).join('') + zone();
  });
}

describe('isIP, isIPv4, isIPv6', () => {
  it.each(CORPUS.map((text) => [JSON.stringify(text), text]))('answer %s as node:net does', (_, text) => {
    expect([isIP(text), isIPv4(text), isIPv6(text)]).toEqual([net.isIP(text), net.isIPv4(text), net.isIPv6(text)]);
  });

  it('answer 50,000 generated near-addresses as node:net does', () => {
    const inputs = generated(50_000);
    const differ = inputs.filter((text) => isIP(text) !== net.isIP(text) || isIPv4(text) !== net.isIPv4(text) || isIPv6(text) !== net.isIPv6(text));
    expect(differ).toEqual([]);
    expect(inputs.filter((text) => net.isIP(text) === 6).length).toBeGreaterThan(1000); // the generator reaches valid addresses too
  });
});
