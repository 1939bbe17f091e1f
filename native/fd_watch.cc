#include "fd_watch.h"

#include <cerrno>

#include "js_error.h"

namespace netns {

namespace {

// Yield to the loop after this much, so a flood cannot starve other work; the
// poll is level-triggered and fires again for the rest.
constexpr size_t kBatch = 1 << 20;

// Each read's bytes start 4-byte aligned in the Buffer, as netlink messages
// and inotify events both expect to be read.
constexpr size_t Align4(size_t size) { return (size + 3) & ~size_t{3}; }

}  // namespace

Napi::Function FdWatch::Define(Napi::Env env) {
  return DefineClass(env, "FdWatch",
                     {
                         InstanceMethod("ref", &FdWatch::RefJs),
                         InstanceMethod("unref", &FdWatch::UnrefJs),
                         InstanceMethod("close", &FdWatch::CloseJs),
                         InstanceMethod("pause", &FdWatch::PauseJs),
                         InstanceMethod("resume", &FdWatch::ResumeJs),
                     });
}

FdWatch::FdWatch(const Napi::CallbackInfo& info) : Napi::ObjectWrap<FdWatch>(info) {
  Napi::Env env = info.Env();
  if (!info[0].IsNumber()) throw Napi::TypeError::New(env, "fd must be a number");
  fd_.reset(info[0].As<Napi::Number>().Int32Value());  // ours from here, closed even if the rest throws
  if (!info[1].IsFunction()) throw Napi::TypeError::New(env, "onData must be a function");
  // Held by the wrapper, not by a strong native reference: an unref'd watch
  // that nothing reaches can then be collected, cycle and all.
  info.This().As<Napi::Object>().Set("onData", info[1]);
  on_data_ = Napi::Weak(info[1].As<Napi::Function>());
  context_ = std::make_unique<Napi::AsyncContext>(env, "FdWatch");
}

void FdWatch::Start(const FdReader& reader) {
  Napi::Env env = Env();
  if (!fd_.valid() || poll_) throw Napi::Error::New(env, "the watch cannot start again");
  reader_ = &reader;
  uv_loop_t* loop = nullptr;
  if (napi_get_uv_event_loop(env, &loop) != napi_ok) throw Napi::Error::New(env, "no event loop");
  auto poll = std::make_unique<PollHandle>();
  int rc = uv_poll_init(loop, &poll->handle, fd_.get());
  if (rc != 0) {
    fd_.reset();
    throw ToJsError(env, Failure::Sys(-rc, "uv_poll_init"));
  }
  poll_ = poll.release();  // from here only uv_close frees it
  poll_->handle.data = this;
  if (napi_add_async_cleanup_hook(env, &FdWatch::OnTeardown, poll_, &poll_->hook) != napi_ok) {
    Shutdown();
    throw Napi::Error::New(env, "cannot register a cleanup hook");
  }
  rc = uv_poll_start(&poll_->handle, UV_READABLE, &FdWatch::OnReadable);
  if (rc != 0) {
    Shutdown();
    throw ToJsError(env, Failure::Sys(-rc, "uv_poll_start"));
  }
  SetRef(true);
}

FdWatch::~FdWatch() {
  ref_ = false;  // collected: the wrapper's reference is gone already
  if (poll_) Shutdown();
}

Napi::Value FdWatch::RefJs(const Napi::CallbackInfo& info) {
  if (poll_) SetRef(true);
  return info.Env().Undefined();
}

Napi::Value FdWatch::UnrefJs(const Napi::CallbackInfo& info) {
  if (poll_) SetRef(false);
  return info.Env().Undefined();
}

// Idempotent; safe from inside onData.
Napi::Value FdWatch::CloseJs(const Napi::CallbackInfo& info) {
  if (poll_) {
    SetRef(false);
    Shutdown();
  }
  fd_.reset();  // a watch never started holds its descriptor too
  return info.Env().Undefined();
}

// Backpressure: while paused, what arrives waits in the kernel's queue (a
// socket's receive buffer, an inotify queue), which overflows once full.
// A paused handle is inactive, so (as a paused net.Socket) it holds no loop.
Napi::Value FdWatch::PauseJs(const Napi::CallbackInfo& info) {
  paused_ = true;
  if (poll_) uv_poll_stop(&poll_->handle);
  return info.Env().Undefined();
}

Napi::Value FdWatch::ResumeJs(const Napi::CallbackInfo& info) {
  paused_ = false;
  if (auto failure = Poll()) throw ToJsError(info.Env(), *failure);
  return info.Env().Undefined();
}

std::optional<Failure> FdWatch::Poll() {
  if (!poll_ || paused_) return std::nullopt;
  int rc = uv_poll_start(&poll_->handle, UV_READABLE, &FdWatch::OnReadable);
  if (rc != 0) return Failure::Sys(-rc, "uv_poll_start");
  return std::nullopt;
}

// A ref'd watch keeps both the loop and itself alive, as a net.Socket does.
void FdWatch::SetRef(bool ref) {
  if (ref == ref_) return;
  ref_ = ref;
  if (ref) {
    uv_ref(reinterpret_cast<uv_handle_t*>(&poll_->handle));
    Ref();
  } else {
    uv_unref(reinterpret_cast<uv_handle_t*>(&poll_->handle));
    Unref();
  }
}

// uv_close stops the poll (and takes the fd out of epoll) at once, so the fd
// can be closed now; the handle's memory and the cleanup hook wait for the
// close callback.
void FdWatch::Shutdown() {
  poll_->handle.data = nullptr;
  uv_close(reinterpret_cast<uv_handle_t*>(&poll_->handle), &FdWatch::OnClosed);
  poll_ = nullptr;
  fd_.reset();
}

void FdWatch::OnClosed(uv_handle_t* handle) {
  auto* poll = reinterpret_cast<PollHandle*>(handle);  // the handle is its first member
  if (poll->hook) napi_remove_async_cleanup_hook(poll->hook);
  delete poll;
}

// The environment is going: a watch still open is closed; one closing already
// ends the hook from its close callback.
void FdWatch::OnTeardown(napi_async_cleanup_hook_handle, void* data) {
  auto* poll = static_cast<PollHandle*>(data);
  if (auto* self = static_cast<FdWatch*>(poll->handle.data)) self->Shutdown();
}

void FdWatch::OnReadable(uv_poll_t* handle, int status, int) {
  auto* self = static_cast<FdWatch*>(handle->data);
  if (!self) return;
  Napi::HandleScope scope(self->Env());
  if (status == UV_EBADF) {
    // libuv reports EPOLLERR as EBADF and stops the handle. On a netlink
    // socket EPOLLERR is a pending socket error (ENOBUFS after an overflow),
    // which the next read returns and clears: read on, then poll again.
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

// Reads what is queued. A failed read (ENOBUFS: the kernel dropped netlink
// events for want of room) is reported after what was read before it, and
// reading goes on: a netlink socket keeps delivering after an overflow. A
// reader that reads once stops the watch after its first read, whatever it brought.
void FdWatch::Drain() {
  Napi::Env env = Env();
  std::vector<uint8_t> data;
  std::vector<uint8_t> buffer(reader_->buffer_size);
  while (poll_ && data.size() < kBatch) {
    ssize_t got = reader_->read(fd_.get(), buffer.data(), buffer.size());
    if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    int err = errno;
    if (reader_->once) {
      paused_ = true;
      uv_poll_stop(&poll_->handle);
    }
    if (got < 0) {
      std::vector<uint8_t> none;
      if (!Deliver(env.Null(), data)) return;
      if (!Deliver(ToJsError(env, Failure::Sys(err, reader_->syscall)).Value(), none)) return;
      if (reader_->once) return;
      continue;
    }
    data.insert(data.end(), buffer.begin(), buffer.begin() + got);
    data.resize(Align4(data.size()), 0);
    if (reader_->once) break;
  }
  if (!data.empty()) Deliver(env.Null(), data);
}

// Calls onData(error, buffer) as a macrotask callback (microtasks run after
// it). Returns whether the watch is still open: onData may close it.
bool FdWatch::Deliver(Napi::Value error, std::vector<uint8_t>& data) {
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
