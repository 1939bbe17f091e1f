#include "netlink.h"

#include <linux/netlink.h>
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

namespace netns {

namespace {

// No reply within this long means the kernel will not answer (a protocol
// that defers its work): fail rather than hang the JS thread.
constexpr int kReplyTimeoutMs = 5000;
constexpr int kReceiveBuffer = 1 << 20;  // as iproute2: dumps arrive in 32 KiB datagrams
constexpr size_t kDiscardBuffer = 1 << 16;

bool SetOption(int fd, int level, int name, int value) {
  return setsockopt(fd, level, name, &value, sizeof value) == 0;
}

bool Terminal(const nlmsghdr& header) {
  return header.nlmsg_type == NLMSG_ERROR || header.nlmsg_type == NLMSG_DONE;
}

bool OwnSeq(const nlmsghdr& header, const NetlinkTransaction& tx) {
  return header.nlmsg_seq - tx.first_seq < tx.count;  // unsigned: wraps below first_seq
}

// After the kernel dropped replies for want of room (ENOBUFS), what is still
// queued belongs to a transaction that has failed: read it all away, so the
// socket is uncongested and the next transaction's replies are not dropped too.
void DiscardQueued(int fd) {
  std::vector<uint8_t> sink(kDiscardBuffer);
  for (;;) {
    ssize_t got = recv(fd, sink.data(), sink.size(), MSG_DONTWAIT | MSG_TRUNC);
    if (got >= 0 || errno == EINTR || errno == ENOBUFS) continue;
    return;  // EAGAIN: empty
  }
}

Failure LostReplies(int fd, int err, const char* syscall) {
  if (err == ENOBUFS) DiscardQueued(fd);
  return Failure::Sys(err, syscall);
}

// Waits for the next datagram and returns its size without taking it (MSG_TRUNC
// reports the full length), so the buffer can be sized for it; -1 on failure.
ssize_t PeekSize(int fd, Failure& failure) {
  for (;;) {
    ssize_t size = recv(fd, nullptr, 0, MSG_PEEK | MSG_TRUNC | MSG_DONTWAIT);
    if (size >= 0) return size;
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
      failure = LostReplies(fd, errno, "recvmsg");
      return -1;
    }
    pollfd readable{fd, POLLIN, 0};
    int ready = poll(&readable, 1, kReplyTimeoutMs);
    if (ready == 0) {
      failure = Failure::Sys(ETIMEDOUT, "poll");
      return -1;
    }
    if (ready < 0 && errno != EINTR) {
      failure = Failure::Sys(errno, "poll");
      return -1;
    }
  }
}

// Keeps the messages of this transaction from one datagram, each padded to
// the netlink alignment so they read as one stream; counts the terminal ones.
void KeepOwn(const uint8_t* data, size_t size, const NetlinkTransaction& tx, std::vector<uint8_t>& replies,
             uint32_t& finished) {
  size_t offset = 0;
  while (offset + NLMSG_HDRLEN <= size) {
    nlmsghdr header;
    memcpy(&header, data + offset, sizeof header);
    if (header.nlmsg_len < NLMSG_HDRLEN || header.nlmsg_len > size - offset) break;
    if (OwnSeq(header, tx)) {
      replies.insert(replies.end(), data + offset, data + offset + header.nlmsg_len);
      replies.resize(NLMSG_ALIGN(replies.size()), 0);
      if (Terminal(header)) finished++;
    }
    offset += NLMSG_ALIGN(header.nlmsg_len);
  }
}

}  // namespace

NetlinkSocketJob::NetlinkSocketJob(Napi::Env env, UniqueFd ns_fd, int protocol)
    : SocketJob(env, std::move(ns_fd), AF_NETLINK, SOCK_RAW, protocol) {}

void NetlinkSocketJob::Run(ThreadSwitch& thread) {
  SocketJob::Run(thread);
  if (fd_.valid() && !Configure()) fd_.reset();
}

// As iproute2 sets up its socket: extended ACKs (the kernel's reason for an
// error, as text), strict checking of dump requests (so filters are honoured),
// capped ACKs (an error does not echo the whole request), and a large
// receive buffer for dumps.
bool NetlinkSocketJob::Configure() {
  int fd = fd_.get();
  if (!SetOption(fd, SOL_NETLINK, NETLINK_EXT_ACK, 1) || !SetOption(fd, SOL_NETLINK, NETLINK_GET_STRICT_CHK, 1) ||
      !SetOption(fd, SOL_NETLINK, NETLINK_CAP_ACK, 1)) {
    Fail(Failure::Sys(errno, "setsockopt"));
    return false;
  }
  SetOption(fd, SOL_SOCKET, SO_RCVBUF, kReceiveBuffer);  // best effort: capped by rmem_max
  sockaddr_nl local{};
  local.nl_family = AF_NETLINK;
  if (bind(fd, reinterpret_cast<sockaddr*>(&local), sizeof local) != 0) {
    Fail(Failure::Sys(errno, "bind"));
    return false;
  }
  socklen_t length = sizeof local;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&local), &length) != 0) {
    Fail(Failure::Sys(errno, "getsockname"));
    return false;
  }
  port_id_ = local.nl_pid;  // autobound: not necessarily the process id
  return true;
}

Napi::Value NetlinkSocketJob::Result(Napi::Env env) {
  Napi::Object result = Napi::Object::New(env);
  result.Set("portId", Napi::Number::New(env, port_id_));
  result.Set("fd", SocketJob::Result(env));  // last: from here JavaScript owns the descriptor
  return result;
}

std::optional<Failure> NetlinkTransact(int fd, const NetlinkTransaction& tx, std::vector<uint8_t>& replies) {
  Failure failure;
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  ssize_t sent;
  do {
    sent = sendto(fd, tx.request, tx.request_len, 0, reinterpret_cast<sockaddr*>(&kernel), sizeof kernel);
  } while (sent < 0 && errno == EINTR);
  if (sent < 0) {
    return Failure::Sys(errno, "sendmsg");
  }
  std::vector<uint8_t> datagram;
  uint32_t finished = 0;
  while (finished < tx.count) {
    ssize_t size = PeekSize(fd, failure);
    if (size < 0) return failure;
    datagram.resize(size > 0 ? static_cast<size_t>(size) : 1);
    ssize_t got;
    do {
      got = recv(fd, datagram.data(), datagram.size(), MSG_DONTWAIT);
    } while (got < 0 && errno == EINTR);
    if (got < 0) return LostReplies(fd, errno, "recvmsg");
    KeepOwn(datagram.data(), static_cast<size_t>(got), tx, replies, finished);
  }
  return std::nullopt;
}

}  // namespace netns
