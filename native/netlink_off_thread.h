// A netlink transaction on a thread of its own, for requests whose kernel work
// takes milliseconds inside sendmsg: a link made, changed or deleted waits for
// RTNL and for RCU (a veth's deletion ~20 ms). Done on the JS thread, that
// stalled every other call a resident daemon was serving. Not on libuv's
// shared pool, which delegates and Node's fs share; no namespace is entered:
// the socket already belongs to its namespace.
#pragma once
#include <napi.h>

#include <cstdint>
#include <vector>

namespace netns {

// Runs NetlinkTransact (netlink.h) on `fd` off the JS thread; the promise
// resolves with the replies (a Buffer), null when every request was simply
// acknowledged, or rejects with the errno error. The caller must not use or
// close `fd` until it settles.
Napi::Promise TransactOffThread(Napi::Env env, int fd, std::vector<uint8_t> request, uint32_t first_seq, uint32_t count, bool quiet);

}  // namespace netns
