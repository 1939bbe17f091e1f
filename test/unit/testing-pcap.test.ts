// The pcap file header capturePackets writes, which tcpdump and tshark check first.
import { describe, expect, it } from 'vitest';
import { pcapFileHeader } from '../../dist/testing/pcap.js';

describe('pcapFileHeader', () => {
  it('is the 24-byte little-endian header of a nanosecond pcap file: magic, version 2.4, zone and sigfigs 0, snaplen, link type', () => {
    expect(pcapFileHeader(262144, 1).toString('hex')).toBe('4d3cb2a1' + '0200' + '0400' + '00000000' + '00000000' + '00000400' + '01000000');
  });

  it('carries the snaplen and link type given', () => {
    const header = pcapFileHeader(64, 101);
    expect([header.readUInt32LE(16), header.readUInt32LE(20)]).toEqual([64, 101]);
  });
});
