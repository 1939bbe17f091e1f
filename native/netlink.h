// Netlink sockets bound to a namespace. One is created inside its namespace on
// an I/O thread (a socket keeps its namespace for life) and then used from the
// JS thread with no switching at all. The kernel handles a request inside
// sendmsg, so its replies are queued when sendmsg returns, and produces a
// dump while it is read: a transaction runs to its last reply synchronously,
// on the JS thread, or off it (netlink_off_thread.h) for requests that make
// the kernel wait (a link made or deleted).
#pragma once
#include <napi.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "failure.h"
#include "io_jobs.h"

namespace netns {

class NetlinkSocketJob : public SocketJob {
 public:
  NetlinkSocketJob(Napi::Env env, UniqueFd ns_fd, int protocol);
  void Run(ThreadSwitch& thread) override;
  Napi::Value Result(Napi::Env env) override;

 private:
  uint32_t port_id_ = 0;
};

// Sets a fresh netlink socket up as iproute2 does and binds it; port_id: the
// port the kernel picked.
std::optional<Failure> ConfigureNetlinkSocket(int fd, uint32_t& port_id);

// A configured netlink socket made on the calling thread, so in its
// namespace, with no switch: needs no privilege (an unprivileged user may
// read links, addresses and routes of their own namespace, as with `ip`).
std::optional<Failure> OpenNetlinkHere(int protocol, UniqueFd& fd, uint32_t& port_id);

// Sends `request` (count messages, seq first_seq onwards, each asking for an
// ACK or a dump) and collects every reply of those seqs up to and including
// each one's ERROR/ACK or DONE. Replies of other seqs (left by an earlier
// transaction that failed midway) are dropped.
//
// Quiet: the messages ask for no ACK and none is a dump. The kernel answers
// only a failure then (and a GET or an echo), and has done so when send
// returns, so what is queued is read and nothing is waited for: a success
// costs no ACK to build, queue and read. A reply lost for want of room shows
// as ENOBUFS on the next read, as in the other mode.
struct NetlinkTransaction {
  const uint8_t* request;
  size_t request_len;
  uint32_t first_seq;
  uint32_t count;
  bool quiet;
};
struct NetlinkReplies {
  std::vector<uint8_t> bytes;
  uint32_t finished = 0;  // terminal messages seen
  bool only_acks = true;  // nothing but NLMSG_ERROR with error 0: no need to hand the bytes over
};
std::optional<Failure> NetlinkTransact(int fd, const NetlinkTransaction& tx, NetlinkReplies& replies);

}  // namespace netns
