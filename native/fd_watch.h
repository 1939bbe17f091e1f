// A descriptor read on the JS thread's own event loop: a uv_poll_t on it
// reads whatever is queued without blocking and hands it to a JS callback as
// one Buffer. What a read is depends on the descriptor (a netlink datagram, a
// batch of inotify events: see FdReader); nothing here switches namespace.
//
// Lifetime: the handle is closed, and the descriptor with it, exactly once:
// by close(), by the garbage collector (only possible while unref'd: a ref'd
// watch holds itself alive, as a net.Socket does), or by the environment's
// teardown. An async cleanup hook is held from Start until libuv has run the
// handle's close callback, however the close began: a Worker's teardown
// unloads this library once its hooks are done, and a close callback still
// pending then would run in unmapped code (SIGSEGV). The addon's own teardown
// makes no N-API call from a destructor (io_pool.h), so holding the
// environment that long is safe.
#pragma once
#include <napi.h>
#include <sys/types.h>
#include <uv.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "failure.h"
#include "unique_fd.h"

namespace netns {

// How one kind of descriptor is read without blocking.
struct FdReader {
  const char* syscall;  // named by a failed read's error
  size_t buffer_size;   // room one read may need
  // One read into `buffer`: its length, or -1 with errno set (EAGAIN when
  // nothing is queued). Retries EINTR itself.
  ssize_t (*read)(int fd, uint8_t* buffer, size_t size);
  // Read once, then stop polling as pause() does: for a descriptor whose
  // first message is all the watch is for (its owner then reads elsewhere).
  bool once = false;
};

class FdWatch : public Napi::ObjectWrap<FdWatch> {
 public:
  static Napi::Function Define(Napi::Env env);
  // new FdWatch(fd, onData): takes the descriptor, closed even if this
  // throws; nothing is polled until Start. onData(error | null, buffer | null).
  explicit FdWatch(const Napi::CallbackInfo& info);
  ~FdWatch() override;

  // Polls with `reader` (which must outlive the watch) and holds the loop
  // open. Throws, the descriptor closed, if polling cannot start.
  void Start(const FdReader& reader);

 private:
  Napi::Value RefJs(const Napi::CallbackInfo& info);
  Napi::Value UnrefJs(const Napi::CallbackInfo& info);
  Napi::Value CloseJs(const Napi::CallbackInfo& info);
  Napi::Value PauseJs(const Napi::CallbackInfo& info);
  Napi::Value ResumeJs(const Napi::CallbackInfo& info);

  // The libuv handle, and the hook that holds the environment's teardown
  // until the handle's close callback has run.
  struct PollHandle {
    uv_poll_t handle;
    napi_async_cleanup_hook_handle hook = nullptr;
  };

  static void OnReadable(uv_poll_t* handle, int status, int events);
  static void OnTeardown(napi_async_cleanup_hook_handle hook, void* poll);
  static void OnClosed(uv_handle_t* handle);
  void Drain();
  std::optional<Failure> Poll();  // (re)starts polling unless closed or paused
  bool Deliver(Napi::Value error, std::vector<uint8_t>& data);
  void SetRef(bool ref);
  void Shutdown();

  const FdReader* reader_ = nullptr;
  // Heap-allocated: the handle outlives this object until its close callback runs.
  PollHandle* poll_ = nullptr;  // null until started, and once closed
  UniqueFd fd_;
  bool ref_ = false;
  bool paused_ = false;
  Napi::FunctionReference on_data_;
  std::unique_ptr<Napi::AsyncContext> context_;
};

}  // namespace netns
