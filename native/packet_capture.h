// Packet capture on one interface of a namespace: an AF_PACKET socket made
// inside the namespace on an I/O thread (PacketSocketJob), then read on the
// JS thread's loop by an FdWatch whose reader turns every packet into a pcap
// record (nanosecond timestamps). The TypeScript side writes the file.
#pragma once
#include <napi.h>

#include <optional>
#include <string>

#include "failure.h"
#include "fd_watch.h"
#include "io_jobs.h"

namespace netns {

// The most a capture keeps of one packet (libpcap's MAXIMUM_SNAPLEN).
constexpr int kMaxSnaplen = 262144;

// Made with protocol 0, so nothing is queued before the bind; the interface
// index is looked up on the socket itself, so in its namespace; then bound to
// ETH_P_ALL on that interface alone. Keeps `snaplen` bytes of each packet (a
// socket filter, as libpcap sets) and timestamps each in nanoseconds. On
// loopback, where every packet passes twice, only the incoming copy is kept,
// as tcpdump shows it. Result: { fd, linkType } (a pcap LINKTYPE_*).
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

// Stops the socket taking packets (a filter that takes none: what is queued
// stays to be read) and returns its PACKET_STATISTICS: packets seen, and
// dropped for want of room in the receive queue.
struct PacketCounts {
  unsigned packets = 0;
  unsigned drops = 0;
};
std::optional<Failure> SealPacketSocket(int fd, PacketCounts& counts);

// Bytes of the next queued packet, 0 when nothing is queued (SIOCINQ).
std::optional<Failure> PacketQueued(int fd, int& bytes);

// Reads one packet as a pcap record: the 16-byte header (seconds,
// nanoseconds, captured length, length on the wire; little-endian) and the
// captured bytes.
extern const FdReader kPacketReader;

}  // namespace netns
