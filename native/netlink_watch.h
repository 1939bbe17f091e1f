// Netlink multicast events read on the JS thread's own event loop. A watcher
// owns a netlink socket that was made inside its namespace (NetlinkSocketJob)
// and subscribed to groups; a uv_poll_t on it reads every queued datagram
// without blocking and hands them to a JS callback as one Buffer. Nothing here
// switches namespace: the socket already belongs to one.
//
// Lifetime: the handle is closed, and the descriptor with it, exactly once:
// by close(), by the garbage collector (only possible while unref'd: a ref'd
// watcher holds itself alive, as a net.Socket does), or by the environment's
// teardown through a cleanup hook. Not an async cleanup hook: that one holds
// the napi_env until an immediate after teardown, which postpones the addon's
// own finalizer past the point where Node has freed its thread-safe function.
// Node still turns the loop once after the cleanup hooks (to close its own
// handles), and that runs the uv_close callback.
#pragma once
#include <napi.h>
#include <uv.h>

#include <memory>
#include <optional>
#include <variant>
#include <vector>

#include "failure.h"
#include "unique_fd.h"

namespace netns {

// Joins the socket to each multicast group. NETLINK_ADD_MEMBERSHIP rather
// than the bind mask: the socket is already bound, and the mask cannot name
// groups from 32 on (RTNLGRP_NEXTHOP is 32).
std::optional<Failure> NetlinkSubscribe(int fd, const std::vector<int>& groups);

// A new descriptor of the network namespace a socket belongs to (SIOCGSKNS),
// so another socket can be made beside it after its NetNS handle is gone.
std::variant<UniqueFd, Failure> SocketNetns(int fd);

class NetlinkWatch : public Napi::ObjectWrap<NetlinkWatch> {
 public:
  static Napi::Function Define(Napi::Env env);
  // new NetlinkWatch(fd, onData): takes the descriptor; polls and holds the
  // loop open at once. onData(error | null, buffer | null).
  explicit NetlinkWatch(const Napi::CallbackInfo& info);
  ~NetlinkWatch() override;

 private:
  Napi::Value RefJs(const Napi::CallbackInfo& info);
  Napi::Value UnrefJs(const Napi::CallbackInfo& info);
  Napi::Value CloseJs(const Napi::CallbackInfo& info);
  Napi::Value PauseJs(const Napi::CallbackInfo& info);
  Napi::Value ResumeJs(const Napi::CallbackInfo& info);

  static void OnReadable(uv_poll_t* handle, int status, int events);
  static void OnTeardown(void* self);
  void Drain();
  std::optional<Failure> Poll();  // (re)starts polling unless closed or paused
  bool Deliver(Napi::Value error, std::vector<uint8_t>& data);
  void SetRef(bool ref);
  void Shutdown();

  // Heap-allocated: the handle outlives this object until its close callback runs.
  uv_poll_t* poll_ = nullptr;  // null once closed
  UniqueFd fd_;
  bool ref_ = false;
  bool paused_ = false;
  Napi::FunctionReference on_data_;
  std::unique_ptr<Napi::AsyncContext> context_;
  bool hooked_ = false;
};

}  // namespace netns
