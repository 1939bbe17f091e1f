// Netlink multicast events, read by an FdWatch (see fd_watch.h). A watched
// socket was made inside its namespace (NetlinkSocketJob) and subscribed to
// groups; every queued datagram is read whole.
#pragma once
#include <optional>
#include <variant>
#include <vector>

#include "failure.h"
#include "fd_watch.h"
#include "unique_fd.h"

namespace netns {

// Joins the socket to each multicast group. NETLINK_ADD_MEMBERSHIP rather
// than the bind mask: the socket is already bound, and the mask cannot name
// groups from 32 on (RTNLGRP_NEXTHOP is 32).
std::optional<Failure> NetlinkSubscribe(int fd, const std::vector<int>& groups);

// A new descriptor of the network namespace a socket belongs to (SIOCGSKNS),
// so another socket can be made beside it after its NetNS handle is gone.
std::variant<UniqueFd, Failure> SocketNetns(int fd);

// Reads one datagram from the kernel; one from another socket (any process
// in the namespace may send to this port) is dropped: it could forge events.
// A datagram bigger than the buffer fails with EMSGSIZE.
extern const FdReader kNetlinkReader;

}  // namespace netns
