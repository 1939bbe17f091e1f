// The classic pcap file format, as `tcpdump -w` writes it, with nanosecond
// timestamps: a 24-byte file header, then per packet a 16-byte record header
// (seconds, nanoseconds, captured length, length on the wire) and the bytes.
// Little-endian throughout: the magic tells a reader the byte order. This
// side writes the file header; the addon's writer thread the records
// (native/packet_ring.cc).

/** The magic of a nanosecond-resolution pcap file (0xa1b2c3d4 is microseconds). */
export const PCAP_MAGIC_NANOSECONDS = 0xa1b23c4d;

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
