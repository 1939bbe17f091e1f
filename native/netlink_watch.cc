#include "netlink_watch.h"

#include <linux/netlink.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <cerrno>

#include "js_error.h"

namespace netns {

namespace {

// rtnetlink events fit well within a page; this is what nft sizes for any
// netlink datagram (UINT16_MAX + a page), and MSG_TRUNC reports a bigger one.
constexpr size_t kDatagram = 65535 + 4096;
// Yield to the loop after this much, so a flood cannot starve other work; the
// poll is level-triggered and fires again for the rest.
constexpr size_t kBatch = 1 << 20;

}  // namespace

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

Napi::Function NetlinkWatch::Define(Napi::Env env) {
  return DefineClass(env, "NetlinkWatch",
                     {
                         InstanceMethod("ref", &NetlinkWatch::RefJs),
                         InstanceMethod("unref", &NetlinkWatch::UnrefJs),
                         InstanceMethod("close", &NetlinkWatch::CloseJs),
                         InstanceMethod("pause", &NetlinkWatch::PauseJs),
                         InstanceMethod("resume", &NetlinkWatch::ResumeJs),
                     });
}

NetlinkWatch::NetlinkWatch(const Napi::CallbackInfo& info) : Napi::ObjectWrap<NetlinkWatch>(info) {
  Napi::Env env = info.Env();
  if (!info[0].IsNumber()) throw Napi::TypeError::New(env, "fd must be a number");
  fd_.reset(info[0].As<Napi::Number>().Int32Value());  // ours from here, closed even if the rest throws
  if (!info[1].IsFunction()) throw Napi::TypeError::New(env, "onData must be a function");
  // Held by the wrapper, not by a strong native reference: an unref'd watcher
  // that nothing reaches can then be collected, cycle and all.
  info.This().As<Napi::Object>().Set("onData", info[1]);
  on_data_ = Napi::Weak(info[1].As<Napi::Function>());
  context_ = std::make_unique<Napi::AsyncContext>(env, "NetlinkWatch");

  uv_loop_t* loop = nullptr;
  if (napi_get_uv_event_loop(env, &loop) != napi_ok) throw Napi::Error::New(env, "no event loop");
  auto poll = std::make_unique<uv_poll_t>();
  int rc = uv_poll_init(loop, poll.get(), fd_.get());
  if (rc != 0) throw ToJsError(env, Failure::Sys(-rc, "uv_poll_init"));
  poll_ = poll.release();  // from here only uv_close frees it
  poll_->data = this;
  rc = uv_poll_start(poll_, UV_READABLE, &NetlinkWatch::OnReadable);
  if (rc != 0) {
    Shutdown();
    throw ToJsError(env, Failure::Sys(-rc, "uv_poll_start"));
  }
  if (napi_add_env_cleanup_hook(env, &NetlinkWatch::OnTeardown, this) != napi_ok) {
    Shutdown();
    throw Napi::Error::New(env, "cannot register a cleanup hook");
  }
  hooked_ = true;
  SetRef(true);
}

NetlinkWatch::~NetlinkWatch() {
  ref_ = false;  // collected: the wrapper's reference is gone already
  if (poll_) Shutdown();
}

Napi::Value NetlinkWatch::RefJs(const Napi::CallbackInfo& info) {
  if (poll_) SetRef(true);
  return info.Env().Undefined();
}

Napi::Value NetlinkWatch::UnrefJs(const Napi::CallbackInfo& info) {
  if (poll_) SetRef(false);
  return info.Env().Undefined();
}

// Idempotent; safe from inside onData.
Napi::Value NetlinkWatch::CloseJs(const Napi::CallbackInfo& info) {
  if (poll_) {
    SetRef(false);
    Shutdown();
  }
  return info.Env().Undefined();
}

// Backpressure: while paused, events wait in the socket's receive buffer,
// and once that is full the kernel drops them and the next read is ENOBUFS.
// A paused handle is inactive, so (as a paused net.Socket) it holds no loop.
Napi::Value NetlinkWatch::PauseJs(const Napi::CallbackInfo& info) {
  paused_ = true;
  if (poll_) uv_poll_stop(poll_);
  return info.Env().Undefined();
}

Napi::Value NetlinkWatch::ResumeJs(const Napi::CallbackInfo& info) {
  paused_ = false;
  if (auto failure = Poll()) throw ToJsError(info.Env(), *failure);
  return info.Env().Undefined();
}

std::optional<Failure> NetlinkWatch::Poll() {
  if (!poll_ || paused_) return std::nullopt;
  int rc = uv_poll_start(poll_, UV_READABLE, &NetlinkWatch::OnReadable);
  if (rc != 0) return Failure::Sys(-rc, "uv_poll_start");
  return std::nullopt;
}

// A ref'd watcher keeps both the loop and itself alive, as a net.Socket does.
void NetlinkWatch::SetRef(bool ref) {
  if (ref == ref_) return;
  ref_ = ref;
  if (ref) {
    uv_ref(reinterpret_cast<uv_handle_t*>(poll_));
    Ref();
  } else {
    uv_unref(reinterpret_cast<uv_handle_t*>(poll_));
    Unref();
  }
}

// uv_close stops the poll (and takes the fd out of epoll) at once, so the fd
// can be closed now; the handle's memory waits for the close callback.
void NetlinkWatch::Shutdown() {
  if (hooked_) napi_remove_env_cleanup_hook(Env(), &NetlinkWatch::OnTeardown, this);
  hooked_ = false;
  poll_->data = nullptr;
  uv_close(reinterpret_cast<uv_handle_t*>(poll_), [](uv_handle_t* handle) { delete reinterpret_cast<uv_poll_t*>(handle); });
  poll_ = nullptr;
  fd_.reset();
}

// Node drops the hook itself once it has run: nothing to remove.
void NetlinkWatch::OnTeardown(void* data) {
  auto* self = static_cast<NetlinkWatch*>(data);
  self->hooked_ = false;
  self->Shutdown();
}

void NetlinkWatch::OnReadable(uv_poll_t* handle, int status, int) {
  auto* self = static_cast<NetlinkWatch*>(handle->data);
  if (!self) return;
  Napi::HandleScope scope(self->Env());
  if (status == UV_EBADF) {
    // libuv reports EPOLLERR as EBADF and stops the handle. On a netlink
    // socket EPOLLERR is a pending socket error (ENOBUFS after an overflow),
    // which the next recv returns and clears: read on, then poll again.
    self->Drain();
    if (auto failure = self->Poll()) {
      std::vector<uint8_t> none;
      self->Deliver(ToJsError(self->Env(), *failure).Value(), none);
    }
    return;
  }
  if (status < 0) {
    std::vector<uint8_t> none;
    self->Deliver(ToJsError(self->Env(), Failure::Sys(-status, "poll")).Value(), none);
    return;
  }
  self->Drain();
}

// Reads what is queued, whole datagrams padded to the netlink alignment so
// they read as one stream. A failed recv (ENOBUFS: the kernel dropped events
// for want of room) is reported after the events read before it, and reading
// goes on: the socket keeps delivering after an overflow. Datagrams from
// other sockets (any process in the namespace may send to this port) are
// dropped: they could forge events.
void NetlinkWatch::Drain() {
  Napi::Env env = Env();
  std::vector<uint8_t> data;
  std::vector<uint8_t> datagram(kDatagram);
  while (poll_ && data.size() < kBatch) {
    sockaddr_nl from{};
    socklen_t from_len = sizeof from;
    ssize_t got = recvfrom(fd_.get(), datagram.data(), datagram.size(), MSG_DONTWAIT | MSG_TRUNC,
                           reinterpret_cast<sockaddr*>(&from), &from_len);
    if (got < 0 && errno == EINTR) continue;
    if (got >= 0 && from.nl_pid != 0) continue;
    if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    int err = got < 0 ? errno : static_cast<size_t>(got) > datagram.size() ? EMSGSIZE : 0;
    if (err != 0) {
      std::vector<uint8_t> none;
      if (!Deliver(env.Null(), data)) return;
      if (!Deliver(ToJsError(env, Failure::Sys(err, "recvmsg")).Value(), none)) return;
      continue;
    }
    data.insert(data.end(), datagram.begin(), datagram.begin() + got);
    data.resize(NLMSG_ALIGN(data.size()), 0);
  }
  if (!data.empty()) Deliver(env.Null(), data);
}

// Calls onData(error, buffer) as a macrotask callback (microtasks run after
// it). Returns whether the watcher is still open: onData may close it.
bool NetlinkWatch::Deliver(Napi::Value error, std::vector<uint8_t>& data) {
  Napi::Env env = Env();
  if (data.empty() && error.IsNull()) return poll_ != nullptr;
  Napi::Value buffer = data.empty() ? env.Null() : Napi::Buffer<uint8_t>::Copy(env, data.data(), data.size());
  data.clear();
  try {
    on_data_.MakeCallback(Value(), {error, buffer}, *context_);
  } catch (const Napi::Error& thrown) {
    napi_fatal_exception(env, thrown.Value());  // as an exception thrown by a net.Socket listener
  }
  return poll_ != nullptr;
}

}  // namespace netns
