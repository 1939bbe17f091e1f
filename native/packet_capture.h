// Packet capture on one interface of a namespace: an AF_PACKET socket with a
// TPACKET_V3 receive ring, made inside the namespace on an I/O thread
// (PacketSocketJob); its ring is then read on a thread of its own, which
// writes the pcap records (packet_ring.h).
#pragma once
#include <napi.h>

#include <cstddef>
#include <optional>
#include <string>

#include "failure.h"
#include "io_jobs.h"

namespace netns {

// The most a capture keeps of one packet (libpcap's MAXIMUM_SNAPLEN).
constexpr int kMaxSnaplen = 262144;

// The receive ring: blocks the kernel fills one after another and hands over
// whole. A block holds a full-size packet (kMaxSnaplen) with room to spare;
// the ring holds bursts for as long as a full-speed veth link takes to fill
// it (about 50 ms here) while the writer is held up (the page cache, a busy CPU).
constexpr size_t kRingBlockSize = size_t{1} << 20;
constexpr unsigned kRingBlocks = 64;
// A block not yet full is handed over after this long, so what passes a
// quiet link reaches the file soon, and stop() flushes within about this.
constexpr unsigned kRingRetireMs = 10;

// Made with protocol 0, so nothing is queued before the bind; the interface
// index is looked up on the socket itself, so in its namespace; given its
// TPACKET_V3 ring (kRingBlocks of kRingBlockSize, retired after
// kRingRetireMs), then bound to ETH_P_ALL on that interface alone. Keeps
// `snaplen` bytes of each packet (a socket filter, as libpcap sets); the ring
// stamps each in nanoseconds. On loopback, where every packet passes twice,
// only the incoming copy is kept, as tcpdump shows it. Result: { fd, linkType }
// (a pcap LINKTYPE_*); the ring is mapped by whoever reads it.
class PacketSocketJob : public SocketJob {
 public:
  PacketSocketJob(Napi::Env env, UniqueFd ns_fd, std::string interface, int snaplen)
      : SocketJob(env, std::move(ns_fd), 0, 0, 0), interface_(std::move(interface)), snaplen_(snaplen) {}
  void Run(ThreadSwitch& thread) override;
  Napi::Value Result(Napi::Env env) override;

 private:
  std::optional<Failure> Open();
  std::string interface_;
  int snaplen_;
  int link_type_ = 0;
};

// Stops the socket taking packets (a filter that takes none: what is in the
// ring stays to be read) and returns its PACKET_STATISTICS: packets seen, and
// dropped for want of room in the ring.
struct PacketCounts {
  unsigned packets = 0;
  unsigned drops = 0;
};
std::optional<Failure> SealPacketSocket(int fd, PacketCounts& counts);

}  // namespace netns
