#include "packet_capture.h"

#include <arpa/inet.h>
#include <linux/filter.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace netns {

namespace {

constexpr int kLinkTypeEthernet = 1;
constexpr int kLinkTypeRaw = 101;  // IPv4 or IPv6 with no link header (tun, wireguard)
// The kernel counts a V3 ring in frames too; any aligned size dividing a block does.
constexpr unsigned kRingFrameSize = 2048;

std::optional<Failure> AttachFilter(int fd, sock_filter* code, unsigned short length) {
  sock_fprog program{length, code};
  if (setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &program, sizeof program) != 0)
    return Failure::Sys(errno, "setsockopt", "SO_ATTACH_FILTER");
  return std::nullopt;
}

// Keeps `snaplen` bytes of a packet; on loopback drops the outgoing copy
// (the same packet comes back in at once).
std::optional<Failure> AttachSnapFilter(int fd, int snaplen, bool loopback) {
  sock_filter code[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, static_cast<uint32_t>(SKF_AD_OFF + SKF_AD_PKTTYPE)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PACKET_OUTGOING, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, 0),
      BPF_STMT(BPF_RET | BPF_K, static_cast<uint32_t>(snaplen)),
  };
  if (loopback) return AttachFilter(fd, code, 4);
  return AttachFilter(fd, code + 3, 1);
}

// The pcap link type of an interface's hardware type, or 0 if unsupported.
int LinkTypeOf(int hardware_type) {
  switch (hardware_type) {
    case ARPHRD_ETHER:
    case ARPHRD_LOOPBACK:  // a zeroed Ethernet header on every packet
      return kLinkTypeEthernet;
    case ARPHRD_NONE:
      return kLinkTypeRaw;
    default:
      return 0;
  }
}

std::optional<Failure> SetOption(int fd, int level, int name, int value, const char* what) {
  if (setsockopt(fd, level, name, &value, sizeof value) != 0) return Failure::Sys(errno, "setsockopt", what);
  return std::nullopt;
}

std::optional<Failure> SetUpRing(int fd) {
  if (auto failure = SetOption(fd, SOL_PACKET, PACKET_VERSION, TPACKET_V3, "PACKET_VERSION")) return failure;
  tpacket_req3 ring{};
  ring.tp_block_size = kRingBlockSize;
  ring.tp_block_nr = kRingBlocks;
  ring.tp_frame_size = kRingFrameSize;
  ring.tp_frame_nr = kRingBlockSize / kRingFrameSize * kRingBlocks;
  ring.tp_retire_blk_tov = kRingRetireMs;
  if (setsockopt(fd, SOL_PACKET, PACKET_RX_RING, &ring, sizeof ring) != 0)
    return Failure::Sys(errno, "setsockopt", "PACKET_RX_RING");
  return std::nullopt;
}

}  // namespace

void PacketSocketJob::Run(ThreadSwitch&) {
  if (auto failure = Open()) {
    Fail(*failure);
    fd_.reset();
  }
}

std::optional<Failure> PacketSocketJob::Open() {
  if (interface_.empty() || interface_.size() >= IFNAMSIZ)
    return Failure::Own("ERR_NETNS_INVALID_ARG", "an interface name is 1 to 15 bytes");
  fd_.reset(socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd_.valid()) return Failure::Sys(errno, "socket");
  ifreq request{};
  memcpy(request.ifr_name, interface_.data(), interface_.size());
  // On the socket itself, so in its namespace (if_nametoindex would ask the caller's).
  if (ioctl(fd_.get(), SIOCGIFINDEX, &request) != 0) return Failure::Sys(errno, "ioctl");
  int index = request.ifr_ifindex;
  if (ioctl(fd_.get(), SIOCGIFHWADDR, &request) != 0) return Failure::Sys(errno, "ioctl");
  int hardware = request.ifr_hwaddr.sa_family;
  link_type_ = LinkTypeOf(hardware);
  if (link_type_ == 0)
    return Failure::Own("ERR_NETNS_INVALID_ARG", "cannot capture on " + interface_ + ": hardware type " +
                                                     std::to_string(hardware) +
                                                     " is neither Ethernet, loopback nor raw IP");
  if (auto failure = AttachSnapFilter(fd_.get(), snaplen_, hardware == ARPHRD_LOOPBACK)) return failure;
  if (auto failure = SetUpRing(fd_.get())) return failure;
  sockaddr_ll address{};
  address.sll_family = AF_PACKET;
  address.sll_protocol = htons(ETH_P_ALL);
  address.sll_ifindex = index;
  if (bind(fd_.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) return Failure::Sys(errno, "bind");
  return std::nullopt;
}

Napi::Value PacketSocketJob::Result(Napi::Env env) {
  Napi::Object result = Napi::Object::New(env);
  result.Set("linkType", Napi::Number::New(env, link_type_));
  result.Set("fd", Napi::Number::New(env, fd_.get()));
  fd_.release();  // handed to JavaScript, which now owns it
  return result;
}

std::optional<Failure> SealPacketSocket(int fd, PacketCounts& counts) {
  sock_filter none = BPF_STMT(BPF_RET | BPF_K, 0);
  if (auto failure = AttachFilter(fd, &none, 1)) return failure;
  tpacket_stats_v3 stats{};
  socklen_t length = sizeof stats;
  if (getsockopt(fd, SOL_PACKET, PACKET_STATISTICS, &stats, &length) != 0)
    return Failure::Sys(errno, "getsockopt", "PACKET_STATISTICS");
  counts.packets = stats.tp_packets;
  counts.drops = stats.tp_drops;
  return std::nullopt;
}

}  // namespace netns
