// The classic pcap file format, as `tcpdump -w` writes it, with nanosecond
// timestamps: a 24-byte file header, then per packet a 16-byte record header
// (seconds, nanoseconds, captured length, length on the wire) and the bytes.
// Little-endian throughout: the magic tells a reader the byte order.

/** The magic of a nanosecond-resolution pcap file (0xa1b2c3d4 is microseconds). */
export const PCAP_MAGIC_NANOSECONDS = 0xa1b23c4d;
/** Bytes before each packet's data. */
export const PCAP_RECORD_HEADER = 16;

/** The 24-byte file header: magic, version 2.4, zone 0, sigfigs 0, snaplen, link type. */
export function pcapFileHeader(snaplen: number, linkType: number): Buffer {
  const header = Buffer.alloc(24);
  header.writeUInt32LE(PCAP_MAGIC_NANOSECONDS, 0);
  header.writeUInt16LE(2, 4);
  header.writeUInt16LE(4, 6);
  header.writeUInt32LE(snaplen, 16);
  header.writeUInt32LE(linkType, 20);
  return header;
}

/**
 * Records as the addon reads them, each padded to 4 bytes, made contiguous
 * for the file: the records and how many there are. A record cut short (which
 * the addon never hands over) ends the list.
 */
export function unpadRecords(data: Buffer): { records: Buffer; count: number } {
  const pieces: Buffer[] = [];
  let offset = 0;
  while (offset + PCAP_RECORD_HEADER <= data.length) {
    const end = offset + PCAP_RECORD_HEADER + data.readUInt32LE(offset + 8);
    if (end > data.length) break;
    pieces.push(data.subarray(offset, end));
    offset = (end + 3) & ~3;
  }
  return { records: pieces.length === 1 ? pieces[0]! : Buffer.concat(pieces), count: pieces.length };
}
