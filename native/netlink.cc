#include "netlink.h"

#include <linux/netlink.h>
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <memory>

namespace netns {

namespace {

// No reply within this long means the kernel will not answer (a protocol
// that defers its work): fail rather than hang the JS thread.
constexpr int kReplyTimeoutMs = 5000;
constexpr int kReceiveBuffer = 1 << 20;  // as iproute2: dumps arrive in 32 KiB datagrams

bool SetOption(int fd, int level, int name, int value) {
  return setsockopt(fd, level, name, &value, sizeof value) == 0;
}

// Replies to a batch can take about this much receive buffer each (an skb's
// truesize, not its length): nft sizes its buffer by it too (mnl.c).
constexpr size_t kBufferPerReply = 1024;

// Grows a socket buffer to at least `needed` bytes as the kernel counts them.
// As root SO_*BUFFORCE passes the sysctl cap (wmem_max / rmem_max, ~208 KiB
// by default); otherwise the plain option raises it as far as the cap allows.
// Best effort: a buffer still too small shows as EMSGSIZE / ENOBUFS.
void EnsureBuffer(int fd, int option, int force, size_t needed) {
  int current = 0;
  socklen_t length = sizeof current;
  if (getsockopt(fd, SOL_SOCKET, option, &current, &length) != 0 || static_cast<size_t>(current) >= needed) return;
  if (needed > INT32_MAX) return;
  // The kernel doubles the value set (room for its bookkeeping): half of `needed` is enough.
  int value = static_cast<int>((needed + 1) / 2);
  if (!SetOption(fd, SOL_SOCKET, force, value)) SetOption(fd, SOL_SOCKET, option, value);
}

bool Terminal(const nlmsghdr& header) {
  return header.nlmsg_type == NLMSG_ERROR || header.nlmsg_type == NLMSG_DONE;
}

bool OwnSeq(const nlmsghdr& header, const NetlinkTransaction& tx) {
  return header.nlmsg_seq - tx.first_seq < tx.count;  // unsigned: wraps below first_seq
}

// One datagram is read whole into this buffer in a single recv (no peek for
// its size first). Its size also tells the kernel to fill dump datagrams up
// to its 32 KiB cap. rtnetlink never sends one this large; one that is
// would be reported (EMSGSIZE), never silently cut. Pages are touched only as
// far as datagrams reach.
constexpr size_t kDatagramBuffer = 1 << 20;

uint8_t* DatagramBuffer() {
  thread_local std::unique_ptr<uint8_t[]> buffer(new uint8_t[kDatagramBuffer]);
  return buffer.get();
}

// After the kernel dropped replies for want of room (ENOBUFS), what is still
// queued belongs to a transaction that has failed: read it all away, so the
// socket is uncongested and the next transaction's replies are not dropped too.
void DiscardQueued(int fd) {
  for (;;) {
    ssize_t got = recv(fd, DatagramBuffer(), kDatagramBuffer, MSG_DONTWAIT | MSG_TRUNC);
    if (got >= 0 || errno == EINTR || errno == ENOBUFS) continue;
    return;  // EAGAIN: empty
  }
}

Failure LostReplies(int fd, int err, const char* syscall) {
  if (err == ENOBUFS) DiscardQueued(fd);
  return Failure::Sys(err, syscall);
}

// Waits until a datagram is queued; false (with `failure`) after the timeout.
bool AwaitReadable(int fd, Failure& failure) {
  pollfd readable{fd, POLLIN, 0};
  int ready = poll(&readable, 1, kReplyTimeoutMs);
  if (ready > 0 || (ready < 0 && errno == EINTR)) return true;
  failure = Failure::Sys(ready == 0 ? ETIMEDOUT : errno, "poll");
  return false;
}

// The next datagram from the kernel, read into DatagramBuffer(); its size, or
// -1 on failure; 0 when none is queued and `wait` is false (the kernel sends
// no empty datagram). Datagrams from other sockets (any process in the
// namespace may send to this port) are dropped: they could forge an answer.
ssize_t ReceiveDatagram(int fd, Failure& failure, bool wait) {
  for (;;) {
    sockaddr_nl from{};
    socklen_t from_len = sizeof from;
    ssize_t got = recvfrom(fd, DatagramBuffer(), kDatagramBuffer, MSG_DONTWAIT | MSG_TRUNC,
                           reinterpret_cast<sockaddr*>(&from), &from_len);
    if (got > static_cast<ssize_t>(kDatagramBuffer)) {
      failure = Failure::Sys(EMSGSIZE, "recvmsg");
      return -1;
    }
    if (got >= 0 && from.nl_pid != 0) continue;
    if (got >= 0) return got;
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
      failure = LostReplies(fd, errno, "recvmsg");
      return -1;
    }
    if (!wait) return 0;
    if (!AwaitReadable(fd, failure)) return -1;
  }
}

bool IsAck(const uint8_t* message, const nlmsghdr& header) {
  if (header.nlmsg_type != NLMSG_ERROR || header.nlmsg_len < NLMSG_HDRLEN + sizeof(int32_t)) return false;
  int32_t error;
  memcpy(&error, message + NLMSG_HDRLEN, sizeof error);
  return error == 0;
}

// Keeps the messages of this transaction from one datagram, each padded to
// the netlink alignment so they read as one stream; counts the terminal ones.
void KeepOwn(const uint8_t* data, size_t size, const NetlinkTransaction& tx, NetlinkReplies& replies) {
  size_t offset = 0;
  while (offset + NLMSG_HDRLEN <= size) {
    nlmsghdr header;
    memcpy(&header, data + offset, sizeof header);
    if (header.nlmsg_len < NLMSG_HDRLEN || header.nlmsg_len > size - offset) break;
    if (OwnSeq(header, tx)) {
      const uint8_t* message = data + offset;
      replies.only_acks = replies.only_acks && IsAck(message, header);
      replies.bytes.insert(replies.bytes.end(), message, message + header.nlmsg_len);
      replies.bytes.resize(NLMSG_ALIGN(replies.bytes.size()), 0);
      if (Terminal(header)) replies.finished++;
    }
    offset += NLMSG_ALIGN(header.nlmsg_len);
  }
}

}  // namespace

NetlinkSocketJob::NetlinkSocketJob(Napi::Env env, UniqueFd ns_fd, int protocol)
    : SocketJob(env, std::move(ns_fd), AF_NETLINK, SOCK_RAW, protocol) {}

void NetlinkSocketJob::Run(ThreadSwitch& thread) {
  SocketJob::Run(thread);
  if (!fd_.valid()) return;
  if (auto failure = ConfigureNetlinkSocket(fd_.get(), port_id_)) {
    Fail(*failure);
    fd_.reset();
  }
}

// As iproute2 sets up its socket: extended ACKs (the kernel's reason for an
// error, as text), strict checking of dump requests (so filters are honoured),
// capped ACKs (an error does not echo the whole request), and a large
// receive buffer for dumps.
std::optional<Failure> ConfigureNetlinkSocket(int fd, uint32_t& port_id) {
  if (!SetOption(fd, SOL_NETLINK, NETLINK_EXT_ACK, 1) || !SetOption(fd, SOL_NETLINK, NETLINK_GET_STRICT_CHK, 1) ||
      !SetOption(fd, SOL_NETLINK, NETLINK_CAP_ACK, 1)) {
    return Failure::Sys(errno, "setsockopt");
  }
  SetOption(fd, SOL_SOCKET, SO_RCVBUF, kReceiveBuffer);  // best effort: capped by rmem_max
  sockaddr_nl local{};
  local.nl_family = AF_NETLINK;
  if (bind(fd, reinterpret_cast<sockaddr*>(&local), sizeof local) != 0) return Failure::Sys(errno, "bind");
  socklen_t length = sizeof local;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&local), &length) != 0) return Failure::Sys(errno, "getsockname");
  port_id = local.nl_pid;  // autobound: not necessarily the process id
  return std::nullopt;
}

std::optional<Failure> OpenNetlinkHere(int protocol, UniqueFd& fd, uint32_t& port_id) {
  fd.reset(socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, protocol));
  if (!fd.valid()) return Failure::Sys(errno, "socket");
  if (auto failure = ConfigureNetlinkSocket(fd.get(), port_id)) {
    fd.reset();
    return failure;
  }
  return std::nullopt;
}

Napi::Value NetlinkSocketJob::Result(Napi::Env env) {
  Napi::Object result = Napi::Object::New(env);
  result.Set("portId", Napi::Number::New(env, port_id_));
  result.Set("fd", SocketJob::Result(env));  // last: from here JavaScript owns the descriptor
  return result;
}

std::optional<Failure> NetlinkTransact(int fd, const NetlinkTransaction& tx, NetlinkReplies& replies) {
  Failure failure;
  // A netfilter batch is atomic only within one sendmsg, and netlink refuses
  // one longer than the send buffer less 32 bytes (netlink_sendmsg): grow it
  // to fit, as nft does. The kernel answers the whole batch before send
  // returns, so the receive buffer must hold a reply per message too.
  EnsureBuffer(fd, SO_SNDBUF, SO_SNDBUFFORCE, tx.request_len + 32);
  EnsureBuffer(fd, SO_RCVBUF, SO_RCVBUFFORCE, static_cast<size_t>(tx.count) * kBufferPerReply);
  ssize_t sent;
  do {
    sent = send(fd, tx.request, tx.request_len, 0);  // unconnected: to the kernel
  } while (sent < 0 && errno == EINTR);
  if (sent < 0) {
    return Failure::Sys(errno, "sendmsg");
  }
  while (tx.quiet || replies.finished < tx.count) {
    ssize_t size = ReceiveDatagram(fd, failure, !tx.quiet);
    if (size < 0) return failure;
    if (size == 0) break;  // quiet: all the kernel had to say is read
    KeepOwn(DatagramBuffer(), static_cast<size_t>(size), tx, replies);
  }
  return std::nullopt;
}

}  // namespace netns
