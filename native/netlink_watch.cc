#include "netlink_watch.h"

#include <linux/netlink.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <cerrno>

namespace netns {

namespace {

// rtnetlink events fit well within a page; this is what nft sizes for any
// netlink datagram (UINT16_MAX + a page), and MSG_TRUNC reports a bigger one.
constexpr size_t kDatagram = 65535 + 4096;

ssize_t ReadDatagram(int fd, uint8_t* buffer, size_t size) {
  for (;;) {
    sockaddr_nl from{};
    socklen_t from_len = sizeof from;
    ssize_t got = recvfrom(fd, buffer, size, MSG_DONTWAIT | MSG_TRUNC, reinterpret_cast<sockaddr*>(&from), &from_len);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return -1;
    if (from.nl_pid != 0) continue;
    if (static_cast<size_t>(got) > size) {
      errno = EMSGSIZE;
      return -1;
    }
    return got;
  }
}

}  // namespace

const FdReader kNetlinkReader{"recvmsg", kDatagram, &ReadDatagram};

std::optional<Failure> NetlinkSubscribe(int fd, const std::vector<int>& groups) {
  for (int group : groups) {
    if (setsockopt(fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &group, sizeof group) != 0)
      return Failure::Sys(errno, "setsockopt");
  }
  return std::nullopt;
}

std::variant<UniqueFd, Failure> SocketNetns(int fd) {
  UniqueFd ns(ioctl(fd, SIOCGSKNS));  // close-on-exec, as every fd the kernel opens for it
  if (!ns.valid()) return Failure::Sys(errno, "ioctl");
  return ns;
}

}  // namespace netns
