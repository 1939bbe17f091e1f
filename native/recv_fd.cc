#include "recv_fd.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

namespace netns {

namespace {

// Room for a few descriptors, so a peer sending several is told so rather
// than have all but the first silently dropped.
constexpr size_t kMaxFds = 8;
// Any amount will do: what this read leaves, Node reads.
constexpr size_t kBytes = 65536;

void PutLe32(uint8_t* at, uint32_t value) {
  for (int i = 0; i < 4; i++) at[i] = static_cast<uint8_t>(value >> (8 * i));
}

ssize_t ReadWithRights(int fd, uint8_t* buffer, size_t size) {
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxFds)];
  iovec iov{buffer + kRightsHeader, size - kRightsHeader};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  ssize_t got;
  do {
    got = recvmsg(fd, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
  } while (got < 0 && errno == EINTR);
  if (got < 0) return -1;
  int fds[kMaxFds] = {};
  size_t count = 0;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < n && count < kMaxFds; i++) memcpy(&fds[count++], CMSG_DATA(c) + i * sizeof(int), sizeof(int));
  }
  uint32_t came = static_cast<uint32_t>(count) + ((msg.msg_flags & MSG_CTRUNC) ? 1 : 0);
  int kept = count == 1 && came == 1 ? fds[0] : -1;
  if (kept < 0) {
    for (size_t i = 0; i < count; i++) close(fds[i]);
  }
  PutLe32(buffer, static_cast<uint32_t>(kept));
  PutLe32(buffer + 4, came);
  PutLe32(buffer + 8, static_cast<uint32_t>(got));
  return static_cast<ssize_t>(kRightsHeader) + got;
}

}  // namespace

const FdReader kRightsReader{"recvmsg", kRightsHeader + kBytes, &ReadWithRights, true};

}  // namespace netns
