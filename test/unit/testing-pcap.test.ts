// The pcap encoding capturePackets writes: the file header tcpdump and tshark
// check first, and the addon's padded records made contiguous.
import { describe, expect, it } from 'vitest';
import { pcapFileHeader, unpadRecords } from '../../dist/testing/pcap.js';

/** A record as the addon hands it over: 16-byte header, the bytes, zeros to a multiple of 4. */
function paddedRecord(seconds: number, nanoseconds: number, bytes: Buffer, wire = bytes.length): Buffer {
  const header = Buffer.alloc(16);
  header.writeUInt32LE(seconds, 0);
  header.writeUInt32LE(nanoseconds, 4);
  header.writeUInt32LE(bytes.length, 8);
  header.writeUInt32LE(wire, 12);
  return Buffer.concat([header, bytes, Buffer.alloc((4 - (bytes.length % 4)) % 4)]);
}

describe('pcapFileHeader', () => {
  it('is the 24-byte little-endian header of a nanosecond pcap file: magic, version 2.4, zone and sigfigs 0, snaplen, link type', () => {
    expect(pcapFileHeader(262144, 1).toString('hex')).toBe('4d3cb2a1' + '0200' + '0400' + '00000000' + '00000000' + '00000400' + '01000000');
  });

  it('carries the snaplen and link type given', () => {
    const header = pcapFileHeader(64, 101);
    expect([header.readUInt32LE(16), header.readUInt32LE(20)]).toEqual([64, 101]);
  });
});

describe('unpadRecords', () => {
  it('drops the padding between records and counts them, keeping their order and bytes', () => {
    const first = paddedRecord(1, 5, Buffer.from('abcde'), 1500);
    const second = paddedRecord(2, 999_999_999, Buffer.from('wxyz'));
    const third = paddedRecord(3, 0, Buffer.from('q'));
    const { records, count } = unpadRecords(Buffer.concat([first, second, third]));
    expect(count).toBe(3);
    expect(records).toEqual(Buffer.concat([first.subarray(0, 21), second, third.subarray(0, 17)]));
  });

  it('takes a record with no bytes, and nothing from an empty read', () => {
    expect(unpadRecords(paddedRecord(1, 0, Buffer.alloc(0)))).toEqual({ records: paddedRecord(1, 0, Buffer.alloc(0)), count: 1 });
    expect(unpadRecords(Buffer.alloc(0))).toEqual({ records: Buffer.alloc(0), count: 0 });
  });

  it('stops at a record cut short rather than writing a torn one', () => {
    const whole = paddedRecord(1, 0, Buffer.from('abcd'));
    const torn = paddedRecord(2, 0, Buffer.from('efgh')).subarray(0, 18);
    expect(unpadRecords(Buffer.concat([whole, torn]))).toEqual({ records: whole, count: 1 });
  });
});
